import postgres from 'postgres';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS, PostgresStore } from '../../src/store/index.js';
import { appliedPostgresVersions, migratePostgres } from '../../src/store/postgres/migrations.js';
import type { StoredEvent } from '../../src/store/index.js';
import { createPgDatabase, inCi, pgEnabled, pgServerAnswers, randomSchema } from '../helpers/pg.js';
import type { PgDatabase } from '../helpers/pg.js';
import { MAX_COUNTED_PAYERS } from '../../src/store/op-checks.js';
import { account, acceptOps, catalogRecord, channel, event, iso } from './builders.js';
import { runStoreContract } from './store-contract.js';

const PG = await pgEnabled();
const WRITES_PER_INSTANCE = 400;

// In CI a missing server is a counted test failure, not only a failed setup hook.
describe.runIf(inCi())('PostgreSQL for CI', () => {
  it('answers at the test URL', async () => {
    expect(await pgServerAnswers()).toBe(true);
  });
});

describe.runIf(PG)('PostgresStore', () => {
  let db: PgDatabase;
  let admin: Sql;

  beforeAll(async () => {
    db = await createPgDatabase();
    admin = postgres(db.url, { max: 2, onnotice: () => undefined });
  });

  afterAll(async () => {
    await admin?.end({ timeout: 5 });
    await db?.drop();
  });

  async function openMigrated(schema: string): Promise<PostgresStore> {
    const store = await PostgresStore.open({ url: db.url, schema, max: 4 });
    await store.migrate();
    return store;
  }

  // Each contract test gets its own schema in this file's throwaway database.
  runStoreContract({
    name: 'postgres',
    create: () => {
      const schema = randomSchema('contract');
      const opened: PostgresStore[] = [];
      return Promise.resolve({
        open: async () => {
          const store = await openMigrated(schema);
          opened.push(store);
          return store;
        },
        openAt: async (version) => {
          // What an older build did to the schema: its migrations only, then its store on top.
          await migratePostgres(admin, schema, POSTGRES_MIGRATIONS.slice(0, version));
          const store = await PostgresStore.open({ url: db.url, schema, max: 4 });
          opened.push(store);
          return store;
        },
        versions: () => appliedPostgresVersions(admin, schema),
        exec: async (statement) => {
          await admin.begin(async (tx) => {
            await tx.unsafe(`SET LOCAL search_path TO ${schema}`);
            await tx.unsafe(statement);
          });
        },
        dispose: async () => {
          for (const store of opened) await store.close();
          await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        },
      });
    },
  });

  describe('catalog schema', () => {
    it('sorts listings in byte order whatever the database collation, and keeps the terms as json', async () => {
      const schema = randomSchema();
      const store = await openMigrated(schema);
      const rows = await admin<
        { table_name: string; column_name: string; data_type: string; collation_name: string | null }[]
      >`
        SELECT table_name, column_name, data_type, collation_name FROM information_schema.columns
        WHERE table_schema = ${schema} AND table_name = 'catalog'`;
      const columns = Object.fromEntries(
        rows.map((r) => [r.column_name, `${r.data_type}${r.collation_name ? ` ${r.collation_name}` : ''}`]),
      );
      expect(columns).toMatchObject({
        resource: 'text C',
        pay_to: 'text C',
        last_updated: 'text C',
        accepts: 'json',
        bazaar: 'json',
        payments: 'bigint',
        payers: 'bigint',
      });
      await store.close();
    });

    it('indexes listings in list order, all and by seller, and keys payers by listing', async () => {
      const schema = randomSchema();
      const store = await openMigrated(schema);
      const rows = await admin<{ indexname: string; indexdef: string }[]>`
        SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ${schema} AND tablename IN ('catalog', 'catalog_payers')`;
      const defs = Object.fromEntries(rows.map((r) => [r.indexname, r.indexdef.replace(/^.* USING btree /, '')]));
      expect(defs).toEqual({
        catalog_pkey: '(resource, pay_to)',
        catalog_by_rank: '(payments DESC, last_updated DESC, resource, pay_to)',
        catalog_by_pay_to: '(pay_to, payments DESC, last_updated DESC, resource)',
        catalog_payers_pkey: '(resource, pay_to, payer)',
      });
      await store.close();
    });

    it('stores at most the counted payers of a listing', async () => {
      const schema = randomSchema();
      const store = await openMigrated(schema);
      const ops = Array.from({ length: MAX_COUNTED_PAYERS + 50 }, (_, i) => catalogRecord(1, { payer: account(i) }));
      expect((await store.write(ops)).ok).toBe(true);
      const [row] = await admin<{ n: string }[]>`SELECT count(*) AS n FROM ${admin(schema)}.catalog_payers`;
      expect(Number(row?.n)).toBe(MAX_COUNTED_PAYERS);
      await store.close();
    });
  });

  describe('several instances on one database', () => {
    it('migrates once when two instances start at once', async () => {
      const schema = randomSchema();
      const [a, b] = await Promise.all([
        PostgresStore.open({ url: db.url, schema }),
        PostgresStore.open({ url: db.url, schema }),
      ]);
      await Promise.all([a.migrate(), b.migrate(), a.migrate()]);
      expect(await a.appliedMigrations()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      await Promise.all([a.close(), b.close()]);
    });

    it('gives exactly one winner among 50 copies of one advance raced across two instances', async () => {
      const schema = randomSchema();
      const [a, b] = [await openMigrated(schema), await openMigrated(schema)];
      await a.write([{ op: 'channel.insert', channel: channel(77n) }]);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).write(acceptOps(77n, 0n, 5_000n, iso(i)).ops)),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'conflict' && r.op === 0)).toBe(true);
      expect(await b.getChannel(77n)).toMatchObject({ lastAccepted: 5_000n, vouchers: 1 });
      expect(await a.events({ channelId: 77n, limit: 100 })).toHaveLength(1);
      await Promise.all([a.close(), b.close()]);
    });

    it('stores events with ids increasing in commit order, so a feed tailing `after` misses none', async () => {
      const schema = randomSchema();
      const [a, b, reader] = [await openMigrated(schema), await openMigrated(schema), await openMigrated(schema)];
      let writing = true;
      const seen: StoredEvent[] = [];
      const tail = async (): Promise<void> => {
        for (;;) {
          // Sampled before the read: an empty answer ends the tail only if every write had already
          // committed when the read was sent (a read sent earlier can answer empty after they have).
          const wroteAll = !writing;
          const more = await reader.events({ after: seen.at(-1)?.id ?? 0, limit: 1_000 });
          seen.push(...more);
          if (wroteAll && more.length === 0) return;
        }
      };
      const tailing = tail();
      const write = (store: PostgresStore, name: string) =>
        Promise.all(
          Array.from({ length: WRITES_PER_INSTANCE }, (_, i) =>
            store.write([
              { op: 'event', event: event({ type: 'tick', data: { name, i } }) },
              { op: 'event', event: event({ type: 'tock', data: { name, i } }) },
            ]),
          ),
        );
      const [fromA, fromB] = await Promise.all([write(a, 'a'), write(b, 'b')]);
      writing = false;
      await tailing;
      const stored = await reader.events({ limit: 10_000 });
      expect(stored).toHaveLength(4 * WRITES_PER_INSTANCE);
      expect(seen.map((e) => e.id)).toEqual(stored.map((e) => e.id));
      for (const out of [...fromA, ...fromB]) {
        expect(out.ok && out.events[1]!.id === out.events[0]!.id + 1).toBe(true);
      }
      await Promise.all([a.close(), b.close(), reader.close()]);
    });
  });

  describe('failures inside a batch', () => {
    it('rejects every call of a batch whose COMMIT fails, and stores none of them', async () => {
      const schema = randomSchema();
      const store = await openMigrated(schema);
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      // A deferred constraint trigger runs at COMMIT: the poisoned meta row makes COMMIT itself fail.
      await admin.unsafe(`
        CREATE FUNCTION ${schema}.poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = 'poison' THEN RAISE EXCEPTION 'poisoned at commit'; END IF; RETURN NULL; END $$;
        CREATE CONSTRAINT TRIGGER poison AFTER INSERT ON ${schema}.meta DEFERRABLE INITIALLY DEFERRED
          FOR EACH ROW EXECUTE FUNCTION ${schema}.poison();`);
      const voucher = acceptOps(1n, 0n, 5_000n);
      const settled = await Promise.allSettled([
        store.write(voucher.ops),
        store.write([{ op: 'meta.set', key: 'poison', value: 'x' }]),
        store.write([{ op: 'meta.set', key: 'other', value: 'y' }]),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/poisoned at commit/);
      expect((await store.getChannel(1n))?.lastAccepted).toBe(0n);
      expect(await store.getReceipt(voucher.receipt.id)).toBeNull();
      expect(await store.lastEventId()).toBe(0);
      expect(await store.getMeta('other')).toBeNull();
      await admin.unsafe(`DROP TRIGGER poison ON ${schema}.meta`);
      expect((await store.write(voucher.ops)).ok).toBe(true);
      await store.close();
    });

    it('rolls back and rejects only the call whose statement fails, and commits the others', async () => {
      const schema = randomSchema();
      const store = await openMigrated(schema);
      await store.write([
        { op: 'channel.insert', channel: channel(1n) },
        { op: 'channel.insert', channel: channel(2n) },
      ]);
      await admin.unsafe(`
        CREATE FUNCTION ${schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = 'refused' THEN RAISE EXCEPTION 'refused by trigger'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER refuse BEFORE INSERT ON ${schema}.meta FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse();`);
      const settled = await Promise.allSettled([
        store.write(acceptOps(1n, 0n, 5n).ops),
        store.write([...acceptOps(2n, 0n, 5n).ops, { op: 'meta.set', key: 'refused', value: 'x' }]),
        store.write([{ op: 'meta.set', key: 'fine', value: 'y' }]),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/refused by trigger/);
      expect((await store.getChannel(1n))?.lastAccepted).toBe(5n);
      expect((await store.getChannel(2n))?.lastAccepted).toBe(0n);
      expect(await store.events({ channelId: 2n, limit: 5 })).toEqual([]);
      expect(await store.getMeta('fine')).toBe('y');
      await store.close();
    });

    it('keeps amounts and channel ids in numeric columns, never float or int8', async () => {
      const schema = randomSchema();
      const store = await openMigrated(schema);
      const rows = await admin<
        { table_name: string; column_name: string; data_type: string; numeric_precision: number | null }[]
      >`
        SELECT table_name, column_name, data_type, numeric_precision FROM information_schema.columns
        WHERE table_schema = ${schema}
          AND column_name IN ('id', 'channel_id', 'deposit', 'claimed', 'last_accepted', 'refunded', 'cumulative', 'slice_cost',
            'initial_charge', 'required', 'paid', 'charged')
          AND table_name IN ('channels', 'events', 'receipts', 'streams')`;
      const types = Object.fromEntries(
        rows.map((r) => [`${r.table_name}.${r.column_name}`, `${r.data_type}(${r.numeric_precision})`]),
      );
      expect(types).toMatchObject({
        'channels.id': 'numeric(20)',
        'channels.deposit': 'numeric(39)',
        'channels.claimed': 'numeric(39)',
        'channels.last_accepted': 'numeric(39)',
        'channels.refunded': 'numeric(39)',
        'events.channel_id': 'numeric(20)',
        'receipts.channel_id': 'numeric(20)',
        'receipts.cumulative': 'numeric(39)',
        'streams.channel_id': 'numeric(20)',
        'streams.slice_cost': 'numeric(39)',
        'streams.initial_charge': 'numeric(39)',
        'streams.required': 'numeric(39)',
        'streams.paid': 'numeric(39)',
        'streams.charged': 'numeric(39)',
      });
      await store.close();
    });

    it('indexes sessions for the limits, the listings and the idle sweep, and binds a receipt to one session', async () => {
      const schema = randomSchema();
      const store = await openMigrated(schema);
      const rows = await admin<{ indexname: string; indexdef: string }[]>`
        SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ${schema} AND tablename = 'streams'`;
      const defs = Object.fromEntries(rows.map((r) => [r.indexname, r.indexdef.replace(/^.* USING btree /, '')]));
      expect(defs).toEqual({
        streams_pkey: '(id)',
        streams_receipt_id_key: '(receipt_id)',
        streams_by_channel_status: '(channel_id, status)',
        streams_by_status: '(status, opened_at, id)',
        streams_by_activity: '(status, last_activity_at)',
        streams_by_opened: '(opened_at, id)',
        streams_by_payer: '(payer, status)',
        streams_by_pay_to: '(pay_to, status)',
      });
      expect(rows.find((r) => r.indexname === 'streams_receipt_id_key')?.indexdef).toMatch(/^CREATE UNIQUE INDEX/);
      await store.close();
    });
  });
});
