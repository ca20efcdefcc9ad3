import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SQLITE_MIGRATIONS, SqliteStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/index.js';
import { appliedSqliteVersions, migrateSqlite } from '../../src/store/sqlite/migrations.js';
import { isPrecheckable } from '../../src/store/sqlite/sqlite-ops.js';
import { WAL_AUTOCHECKPOINT_FRAMES, openConnection } from '../../src/store/sqlite/sqlite-writer.js';
import { MAX_COUNTED_PAYERS } from '../../src/store/op-checks.js';
import { account, acceptOps, catalogRecord, channel, chargeOp, event, iso, reserveOp } from './builders.js';
import { runStoreContract } from './store-contract.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '../../../..');
const WRITER_SCRIPT = path.join(HERE, 'sqlite-writer.script.ts');
const ACKS_BEFORE_KILL = 400;
/** SQLite's default page size, which the store keeps; a WAL frame is a page and a 24-byte header. */
const PAGE_SIZE = 4096 + 24;

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-'));
}

async function openMigrated(
  file: string,
  options: { busyTimeoutMs?: number; writer?: 'thread' | 'inline' } = {},
): Promise<SqliteStore> {
  const store = await SqliteStore.open({ file, ...options });
  await store.migrate();
  return store;
}

for (const writer of ['thread', 'inline'] as const) {
  runStoreContract({
    name: writer === 'thread' ? 'sqlite' : 'sqlite (inline writer)',
    create: () => {
      const dir = tempDir();
      const file = path.join(dir, 'data', 'facilitator.sqlite');
      const opened: Store[] = [];
      return Promise.resolve({
        open: async () => {
          const store = await openMigrated(file, { writer });
          opened.push(store);
          return store;
        },
        openAt: async (version) => {
          // What an older build did to the file: its migrations only, then its store on top.
          const raw = openConnection({ file, busyTimeoutMs: 5_000 });
          try {
            migrateSqlite(raw, SQLITE_MIGRATIONS.slice(0, version));
          } finally {
            raw.close();
          }
          const store = await SqliteStore.open({ file, writer });
          opened.push(store);
          return store;
        },
        versions: () => {
          const raw = new Database(file);
          try {
            return Promise.resolve(appliedSqliteVersions(raw));
          } finally {
            raw.close();
          }
        },
        exec: (statement) => {
          const raw = openConnection({ file, busyTimeoutMs: 5_000 });
          try {
            raw.exec(statement);
            return Promise.resolve();
          } finally {
            raw.close();
          }
        },
        dispose: async () => {
          for (const store of opened) await store.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      });
    },
  });
}

describe('SqliteStore', () => {
  let dir: string;
  let file: string;
  let store: SqliteStore;

  beforeEach(async () => {
    dir = tempDir();
    file = path.join(dir, 'facilitator.sqlite');
    store = await openMigrated(file, { busyTimeoutMs: 50 });
    await store.write([
      { op: 'channel.insert', channel: channel(1n) },
      { op: 'channel.insert', channel: channel(2n) },
    ]);
  });

  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('opens the file in WAL mode and records each migration once', async () => {
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    await store.migrate();
    expect(await store.appliedMigrations()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('checkpoints the WAL every ~4,000 frames, not SQLite’s default 1,000: hot pages are copied once per checkpoint, not four times', async () => {
    const wal = `${file}-wal`;
    const pages = () => (fs.existsSync(wal) ? fs.statSync(wal).size / PAGE_SIZE : 0);
    let most = 0;
    // ~40 fresh pages a commit (events of ~3 KB): past 4,000 frames within ~120 commits.
    for (let commit = 0; commit < 240; commit++) {
      const ops = Array.from({ length: 40 }, () => ({
        op: 'event' as const,
        event: event({ data: { pad: 'x'.repeat(3000) } }),
      }));
      const result = await store.write(ops);
      expect(result.ok).toBe(true);
      most = Math.max(most, pages());
    }
    expect(most).toBeGreaterThan(2 * 1_000);
    expect(most).toBeLessThan(WAL_AUTOCHECKPOINT_FRAMES + 200);
  });

  it('keeps idempotency records in a rowid table: whole answers in a WITHOUT ROWID key tree split pages on every insert', () => {
    const raw = new Database(file, { readonly: true });
    const { sql } = raw
      .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'idempotency'")
      .get() as {
      sql: string;
    };
    raw.close();
    expect(sql).toMatch(/key\s+TEXT PRIMARY KEY/);
    expect(sql).not.toMatch(/WITHOUT ROWID/i);
  });

  it('indexes sessions for the limits, the listings and the idle sweep, and binds a receipt to one session', () => {
    const raw = new Database(file, { readonly: true });
    const list = raw.pragma('index_list(streams)') as { name: string; unique: number }[];
    const indexes = Object.fromEntries(
      list.map((ix) => [
        ix.name,
        { unique: ix.unique, columns: (raw.pragma(`index_info(${ix.name})`) as { name: string }[]).map((c) => c.name) },
      ]),
    );
    raw.close();
    expect(indexes).toMatchObject({
      streams_by_channel_status: { unique: 0, columns: ['channel_id', 'status'] },
      streams_by_status: { unique: 0, columns: ['status', 'opened_at', 'id'] },
      streams_by_activity: { unique: 0, columns: ['status', 'last_activity_at'] },
      streams_by_opened: { unique: 0, columns: ['opened_at', 'id'] },
      streams_by_payer: { unique: 0, columns: ['payer', 'status'] },
      streams_by_pay_to: { unique: 0, columns: ['pay_to', 'status'] },
    });
    expect(
      Object.values(indexes)
        .filter((ix) => ix.unique === 1)
        .map((ix) => ix.columns),
    ).toEqual(expect.arrayContaining([['id'], ['receipt_id']]));
  });

  it('indexes catalog listings in list order, all and by seller, and keys payers by listing', () => {
    const raw = new Database(file, { readonly: true });
    const columns = (index: string): string[] => {
      const info = raw.pragma(`index_xinfo(${index})`) as { name: string | null; desc: number; key: number }[];
      return info.filter((c) => c.key === 1).map((c) => `${c.name}${c.desc ? ' DESC' : ''}`);
    };
    const pk = (table: string): string[] => {
      const info = raw.pragma(`table_info(${table})`) as { name: string; pk: number }[];
      return info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
    };
    expect(columns('catalog_by_rank')).toEqual(['payments DESC', 'last_updated DESC', 'resource', 'pay_to']);
    expect(columns('catalog_by_pay_to')).toEqual(['pay_to', 'payments DESC', 'last_updated DESC', 'resource']);
    expect(pk('catalog')).toEqual(['resource', 'pay_to']);
    expect(pk('catalog_payers')).toEqual(['resource', 'pay_to', 'payer']);
    raw.close();
  });

  it('keeps the verifier call with a catalog record on the fast path (preconditions decided before applying)', () => {
    const voucher = acceptOps(1n, 0n, 5n).ops;
    const idempotency = { op: 'idempotency', key: 'k', fingerprint: 'f', response: 'r', at: iso(1) } as const;
    expect(isPrecheckable([...voucher, catalogRecord(1), idempotency])).toBe(true);
    expect(isPrecheckable([...voucher, catalogRecord(1), catalogRecord(2), idempotency])).toBe(true);
    // A channel.insert changes what the advance checks: that call still takes the savepoint path.
    expect(isPrecheckable([{ op: 'channel.insert', channel: channel(1n) }, ...voucher, catalogRecord(1)])).toBe(false);
  });

  it('keeps the batch-settlement calls on the fast path, one compare-and-set per channel', () => {
    const [, receiptOp, eventOp] = acceptOps(1n, 0n, 5n).ops;
    const idempotency = { op: 'idempotency', key: 'k', fingerprint: 'f', response: 'r', at: iso(1) } as const;
    const charge = chargeOp(1n, 0n, 5n, 5n);
    expect(isPrecheckable([charge, receiptOp!, eventOp!, catalogRecord(1), idempotency])).toBe(true);
    expect(isPrecheckable([reserveOp(1n, 0n, 'payment-a'), idempotency])).toBe(true);
    expect(isPrecheckable([reserveOp(2n, 0n, 'payment-a'), charge])).toBe(true);
    // Each changes what the other checks on one channel (charged, the reservation).
    expect(isPrecheckable([reserveOp(1n, 0n, 'payment-a'), charge])).toBe(false);
    expect(isPrecheckable([charge, acceptOps(1n, 5n, 10n).ops[0]!])).toBe(false);
    // Release and refunds take the savepoint path.
    expect(isPrecheckable([charge, { op: 'channel.release', channelId: 1n, fingerprint: 'payment-a' }])).toBe(false);
    expect(isPrecheckable([{ op: 'channel.refunded', channelId: 1n, refundNonce: 1, deposit: 5n }])).toBe(false);
  });

  it('stores at most the counted payers of a listing', async () => {
    const ops = Array.from({ length: MAX_COUNTED_PAYERS + 50 }, (_, i) => catalogRecord(1, { payer: account(i) }));
    expect((await store.write(ops)).ok).toBe(true);
    const raw = new Database(file, { readonly: true });
    const rows = raw.prepare('SELECT COUNT(*) AS n FROM catalog_payers').get() as { n: number };
    raw.close();
    expect(rows.n).toBe(MAX_COUNTED_PAYERS);
  });

  it('migrates safely when two stores open one new file at once', async () => {
    const shared = path.join(dir, 'twice.sqlite');
    const [a, b] = await Promise.all([SqliteStore.open({ file: shared }), SqliteStore.open({ file: shared })]);
    await Promise.all([a.migrate(), b.migrate()]);
    expect(await a.appliedMigrations()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await Promise.all([a.close(), b.close()]);
  });

  it('rejects every call of a batch whose COMMIT fails, and stores none of them', async () => {
    // A deferred foreign key is checked at COMMIT: the poisoned meta row makes COMMIT itself fail.
    const raw = new Database(file);
    raw.exec(`
      CREATE TABLE trap_parent (id INTEGER PRIMARY KEY);
      CREATE TABLE trap_child (parent INTEGER REFERENCES trap_parent (id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER trap AFTER INSERT ON meta WHEN NEW.key = 'poison' BEGIN INSERT INTO trap_child VALUES (1); END;`);
    const voucher = acceptOps(1n, 0n, 5_000n);
    const calls = [
      store.write(voucher.ops),
      store.write([{ op: 'meta.set', key: 'poison', value: 'x' }]),
      store.write([
        { op: 'channel.advance', channelId: 2n, expected: 9n, cumulative: 10n, signature: '00', at: 'now' },
      ]),
    ];
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect((await store.getChannel(1n))?.lastAccepted).toBe(0n);
    expect(await store.getReceipt(voucher.receipt.id)).toBeNull();
    expect(await store.lastEventId()).toBe(0);
    expect(await store.getMeta('poison')).toBeNull();
    raw.exec('DROP TRIGGER trap');
    raw.close();
    expect((await store.write(voucher.ops)).ok).toBe(true);
  });

  it('rejects every call of a batch that cannot take the write lock, then recovers', async () => {
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const settled = await Promise.allSettled([
      store.write(acceptOps(1n, 0n, 5n).ops),
      store.write(acceptOps(2n, 0n, 5n).ops),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    other.exec('ROLLBACK');
    other.close();
    const [a, b] = await Promise.all([store.write(acceptOps(1n, 0n, 5n).ops), store.write(acceptOps(2n, 0n, 5n).ops)]);
    expect([a.ok, b.ok]).toEqual([true, true]);
  });

  it('rolls back and rejects only the call whose statement fails inside a batch', async () => {
    const raw = new Database(file);
    raw.exec(
      `CREATE TRIGGER refuse BEFORE INSERT ON meta WHEN NEW.key = 'refused' BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END;`,
    );
    raw.close();
    const settled = await Promise.allSettled([
      store.write(acceptOps(1n, 0n, 5n).ops),
      store.write([
        { op: 'channel.advance', channelId: 2n, expected: 0n, cumulative: 5n, signature: '00', at: 'now' },
        { op: 'meta.set', key: 'refused', value: 'x' },
      ]),
      store.write([{ op: 'meta.set', key: 'fine', value: 'y' }]),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.getChannel(1n))?.lastAccepted).toBe(5n);
    expect((await store.getChannel(2n))?.lastAccepted).toBe(0n);
    expect(await store.getMeta('fine')).toBe('y');
  });

  it('keeps every acknowledged voucher after kill -9 of the writing process', async () => {
    const killFile = path.join(dir, 'killed', 'facilitator.sqlite');
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER_SCRIPT, killFile], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const drained = new Promise((resolve) => child.stdout.once('close', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if ((out.match(/^ack /gm) ?? []).length >= ACKS_BEFORE_KILL) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => reject(new Error(`writer exited early: ${err}`)));
    });
    expect(await exited).toBe('SIGKILL');
    await drained;
    const acks = out
      .split('\n')
      .filter((line) => line.startsWith('ack ') && line.split(' ').length === 5)
      .map((line) => {
        const [, id, cumulative, eventId, receiptId] = line.split(' ');
        return { id: BigInt(id!), cumulative: BigInt(cumulative!), eventId: Number(eventId), receiptId: receiptId! };
      });
    expect(acks.length).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);

    const reopened = await openMigrated(killFile);
    try {
      for (const ack of acks) {
        expect((await reopened.getChannel(ack.id))!.lastAccepted >= ack.cumulative).toBe(true);
        expect((await reopened.findReceipt(ack.id, ack.cumulative))?.id).toBe(ack.receiptId);
        const [e] = await reopened.events({ after: ack.eventId - 1, limit: 1 });
        expect(e).toMatchObject({
          id: ack.eventId,
          channelId: ack.id,
          data: { cumulative: ack.cumulative.toString() },
        });
      }
    } finally {
      await reopened.close();
    }
  });
});
