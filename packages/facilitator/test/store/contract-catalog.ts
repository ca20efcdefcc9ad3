// Store contract: the discovery catalog — one listing per (resource, payTo), updated by every
// recorded payment, never by another payTo's; distinct payers (bounded); the list order, filter and
// paging; refused input; atomicity beside the voucher's ops; durability and the upgrade that adds it.
// Failing calls are written twice, alone with the verifier's ops and beside a channel.insert: SQLite
// decides the first kind's preconditions before applying it (no savepoint) and the second inside a
// savepoint, and both must leave no listing behind.
import { describe, expect, it } from 'vitest';
import type { CatalogEntry, Store, WriteOp, WriteResult } from '../../src/store/index.js';
import { MAX_COUNTED_PAYERS } from '../../src/store/op-checks.js';
import {
  OTHER_PAYEE,
  OTHER_PAYER,
  PAYEE,
  PAYER,
  account,
  acceptOps,
  catalogRecord,
  channel,
  contract,
  iso,
  legacyChannelSql,
  openStream,
  stream,
  streamId,
} from './builders.js';
import type { Section } from './contract-context.js';

type CatalogOp = Extract<WriteOp, { op: 'catalog.record' }>;

const OK: WriteResult = { ok: true, events: [] };
const BOOK = 'https://seller.example/demo/book';
const ALL = { limit: 100, offset: 0 } as const;

/** The listing a sequence of records of one (resource, payTo) should leave: the last one's terms. */
function listing(first: CatalogOp, last: CatalogOp, payments: number, payers: number): CatalogEntry {
  return {
    resource: last.resource,
    payTo: last.payTo,
    accepts: last.accepts,
    bazaar: last.bazaar,
    description: last.description,
    mimeType: last.mimeType,
    payments,
    payers,
    firstSeen: first.at,
    lastUpdated: last.at,
  };
}

async function record(store: Store, ...ops: CatalogOp[]): Promise<void> {
  for (const op of ops) expect(await store.write([op])).toEqual(OK);
}

async function only(store: Store): Promise<CatalogEntry | undefined> {
  const { items, total } = await store.listCatalog(ALL);
  expect(total).toBe(items.length);
  return items.length === 1 ? items[0] : undefined;
}

/** ASCII that does not compress (PostgreSQL compresses long index entries that repeat). */
function noise(length: number): string {
  let x = 12_345;
  let out = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    out += 'abcdefghijklmnopqrstuvwxyz0123456789'[x % 36];
  }
  return out;
}

export const catalogSection: Section = (ctx) => {
  describe('catalog: listings', () => {
    it('inserts a listing on its first payment and returns it exactly, JSON key order included', async () => {
      const { store } = ctx();
      expect(await store.listCatalog(ALL)).toEqual({ items: [], total: 0 });
      const op = catalogRecord(1);
      await record(store, op);
      const { items, total } = await store.listCatalog(ALL);
      expect(total).toBe(1);
      expect(items).toEqual([listing(op, op, 1, 1)]);
      expect(JSON.stringify(items[0]!.accepts)).toBe(JSON.stringify(op.accepts));
      expect(JSON.stringify(items[0]!.bazaar)).toBe(JSON.stringify(op.bazaar));
      expect(typeof items[0]!.payments).toBe('number');
    });

    it('updates the terms, lastUpdated and the payment count on the next payment, and keeps firstSeen', async () => {
      const { store } = ctx();
      const first = catalogRecord(1);
      const second = catalogRecord(2, {
        accepts: [{ scheme: 'exact', amount: '9' }],
        bazaar: {},
        description: '',
        mimeType: 'text/plain',
      });
      await record(store, first, second);
      expect(await only(store)).toEqual(listing(first, second, 2, 1));
      const third = catalogRecord(3);
      await record(store, third);
      expect(await only(store)).toEqual(listing(first, third, 3, 1));
    });

    it('keeps one listing per payTo: another seller paying itself for the same URL leaves the first listing untouched', async () => {
      const { store } = ctx();
      const mine = catalogRecord(1);
      await record(store, mine, catalogRecord(2, { payer: OTHER_PAYER }));
      const before = await only(store);
      expect(before).toEqual(listing(mine, catalogRecord(2, { payer: OTHER_PAYER }), 2, 2));
      // The same resource, the other seller's address, its own terms and description, paid by itself.
      const theirs = (n: number): CatalogOp =>
        catalogRecord(n, {
          payTo: OTHER_PAYEE,
          payer: OTHER_PAYEE,
          description: 'taken over',
          accepts: [{ payTo: OTHER_PAYEE }],
          bazaar: { x: n },
        });
      await record(store, theirs(3), theirs(4), theirs(5));
      const mineNow = await store.listCatalog({ payTo: PAYEE, ...ALL });
      expect(mineNow).toEqual({ items: [before], total: 1 });
      const theirsNow = await store.listCatalog({ payTo: OTHER_PAYEE, ...ALL });
      expect(theirsNow).toEqual({ items: [listing(theirs(3), theirs(5), 3, 1)], total: 1 });
      expect((await store.listCatalog(ALL)).total).toBe(2);
    });

    it('adds a record’s payments (a recorder’s batch) to the count', async () => {
      const { store } = ctx();
      const first = catalogRecord(1, { payments: 7 });
      const second = catalogRecord(2, { payer: OTHER_PAYER, payments: 1_000_000_000 });
      await record(store, first, second);
      expect(await only(store)).toEqual(listing(first, second, 1_000_000_007, 2));
    });

    it('counts distinct payers: the same payer twice counts once, and per listing', async () => {
      const { store } = ctx();
      await record(
        store,
        catalogRecord(1),
        catalogRecord(2),
        catalogRecord(3, { payer: OTHER_PAYER }),
        catalogRecord(4),
      );
      expect(await only(store)).toMatchObject({ payments: 4, payers: 2 });
      // The same payer on another resource is that listing's first payer.
      const other = catalogRecord(5, { resource: 'https://seller.example/other' });
      await record(store, other);
      const { items } = await store.listCatalog(ALL);
      expect(items.map((e) => [e.resource, e.payments, e.payers])).toEqual([
        [BOOK, 4, 2],
        ['https://seller.example/other', 1, 1],
      ]);
    });

    it(`counts distinct payers up to ${MAX_COUNTED_PAYERS}, and every payment past it`, async () => {
      const { store } = ctx();
      // One call of many records: the payer rows of one call see each other.
      const ops = Array.from({ length: MAX_COUNTED_PAYERS + 1 }, (_, i) => catalogRecord(1, { payer: account(i) }));
      expect(await store.write([...ops, catalogRecord(2, { payer: account(7) })])).toEqual(OK);
      expect(await only(store)).toMatchObject({ payments: MAX_COUNTED_PAYERS + 2, payers: MAX_COUNTED_PAYERS });
      await record(
        store,
        catalogRecord(3, { payer: account(MAX_COUNTED_PAYERS + 5) }),
        catalogRecord(4, { payer: account(0) }),
      );
      expect(await only(store)).toMatchObject({
        payments: MAX_COUNTED_PAYERS + 4,
        payers: MAX_COUNTED_PAYERS,
        lastUpdated: iso(4),
      });
      // A listing under the cap still counts: the cap is per listing.
      await record(
        store,
        catalogRecord(5, { payTo: OTHER_PAYEE, payer: account(1) }),
        catalogRecord(6, { payTo: OTHER_PAYEE, payer: account(MAX_COUNTED_PAYERS + 9) }),
      );
      expect((await store.listCatalog({ payTo: OTHER_PAYEE, ...ALL })).items[0]).toMatchObject({
        payments: 2,
        payers: 2,
      });
    });
  });

  describe('catalog: listing order, filter and pages', () => {
    // Byte order: 'B' (0x42) before 'a' (0x61), where a linguistic collation would put 'a' first.
    const [LOW, HIGH] = [PAYEE, OTHER_PAYEE].sort();
    const url = (path: string): string => `https://seller.example/${path}`;

    /** Listings built so that every sort key decides somewhere; the expected order, by hand. */
    async function seed(store: Store): Promise<[string, string][]> {
      const pay = (path: string, payTo: string, at: number, times: number): CatalogOp[] =>
        Array.from({ length: times }, (_, i) => catalogRecord(at - times + 1 + i, { resource: url(path), payTo }));
      await record(store, ...pay('c', HIGH!, 20, 1)); // 1 payment, lastUpdated 20
      await record(store, ...pay('most', LOW!, 5, 4)); // 4 payments: first whatever its time
      await record(store, ...pay('a', HIGH!, 10, 1)); // 1 payment, lastUpdated 10: after c, by time
      await record(store, ...pay('two-old', LOW!, 30, 2), ...pay('two-new', HIGH!, 40, 2)); // 2 payments, newest first
      await record(store, ...pay('a', LOW!, 10, 1)); // ties with (a, HIGH) but for payTo
      await record(store, ...pay('B', HIGH!, 10, 1)); // ties with a but for resource: B before a
      return [
        [url('most'), LOW!],
        [url('two-new'), HIGH!],
        [url('two-old'), LOW!],
        [url('c'), HIGH!],
        [url('B'), HIGH!],
        [url('a'), LOW!],
        [url('a'), HIGH!],
      ];
    }

    const keys = (items: CatalogEntry[]): [string, string][] => items.map((e) => [e.resource, e.payTo]);

    it('orders by payments, then lastUpdated newest first, then resource and payTo in byte order', async () => {
      const { store } = ctx();
      const order = await seed(store);
      const { items, total } = await store.listCatalog(ALL);
      expect(keys(items)).toEqual(order);
      expect(total).toBe(order.length);
      expect(items.map((e) => e.payments)).toEqual([4, 2, 2, 1, 1, 1, 1]);
      // A new payment moves a listing up.
      await record(
        store,
        catalogRecord(50, { resource: url('a'), payTo: HIGH! }),
        catalogRecord(51, { resource: url('a'), payTo: HIGH! }),
      );
      expect(keys((await store.listCatalog(ALL)).items).slice(0, 2)).toEqual([order[0], [url('a'), HIGH!]]);
    });

    it('filters by payTo, with the total of that seller only', async () => {
      const { store } = ctx();
      const order = await seed(store);
      for (const payTo of [LOW!, HIGH!]) {
        const mine = order.filter(([, p]) => p === payTo);
        const got = await store.listCatalog({ payTo, ...ALL });
        expect(keys(got.items)).toEqual(mine);
        expect(got.total).toBe(mine.length);
      }
      expect(await store.listCatalog({ payTo: PAYER, ...ALL })).toEqual({ items: [], total: 0 });
    });

    it('pages with limit and offset, with the full total on every page', async () => {
      const { store } = ctx();
      const order = await seed(store);
      const all = (await store.listCatalog(ALL)).items;
      const pages = [];
      for (let offset = 0; offset < order.length; offset += 3)
        pages.push(await store.listCatalog({ limit: 3, offset }));
      expect(pages.map((p) => p.items.length)).toEqual([3, 3, 1]);
      expect(pages.every((p) => p.total === order.length)).toBe(true);
      expect(pages.flatMap((p) => p.items)).toEqual(all);
      expect(await store.listCatalog({ limit: 3, offset: order.length })).toEqual({ items: [], total: order.length });
      expect(await store.listCatalog({ limit: 0, offset: 0 })).toEqual({ items: [], total: order.length });
      const highPage = await store.listCatalog({ payTo: HIGH!, limit: 2, offset: 1 });
      expect(keys(highPage.items)).toEqual(order.filter(([, p]) => p === HIGH).slice(1, 3));
      expect(highPage.total).toBe(order.filter(([, p]) => p === HIGH).length);
      await expect(store.listCatalog({ limit: -1, offset: 0 })).rejects.toThrow(RangeError);
      await expect(store.listCatalog({ limit: 1, offset: 1.5 })).rejects.toThrow(RangeError);
    });
  });

  describe('catalog: input and atomicity', () => {
    it('accepts values at their bounds', async () => {
      const { store } = ctx();
      const resource = `https://seller.example/${noise(2048 - 'https://seller.example/'.length)}`;
      const json = (bytes: number): string => noise(bytes - 4);
      const op = catalogRecord(1, {
        resource,
        payTo: contract(1),
        payer: OTHER_PAYER,
        accepts: [json(16 * 1024)],
        bazaar: { x: noise(16 * 1024 - 8) },
        description: 'd'.repeat(1024),
        mimeType: 'm'.repeat(128),
      });
      expect(JSON.stringify(op.accepts)).toHaveLength(16 * 1024);
      expect(JSON.stringify(op.bazaar)).toHaveLength(16 * 1024);
      await record(store, op, { ...op, at: iso(2) });
      expect(await only(store)).toEqual(listing(op, { ...op, at: iso(2) }, 2, 1));
    });

    it('rejects an invalid record without storing anything of its call or failing the calls beside it', async () => {
      const { store } = ctx();
      const bad: Partial<Omit<CatalogOp, 'op'>>[] = [
        { resource: 'ftp://seller.example/book' },
        { resource: 'not a url' },
        { resource: `https://seller.example/${'a'.repeat(2048)}` },
        // 2048 characters, but more than 2048 bytes of UTF-8.
        { resource: `https://seller.example/${'é'.repeat(2048 - 'https://seller.example/'.length)}` },
        { resource: 'https://seller.example/\u0000' },
        { resource: 42 as unknown as string },
        { payTo: 'GSELLER' },
        { payTo: PAYEE.slice(0, -1) + (PAYEE.endsWith('A') ? 'B' : 'A') },
        { payTo: 'SBGWSG6BTNCKCOB3DIFBGCVMUPQFYPA2G4O34RMTB343OYPXU5DJDVMN' },
        { payer: '' },
        { payer: `${PAYER}X` },
        { payments: 0 },
        { payments: 1.5 },
        { payments: 1_000_000_001 },
        { accepts: {} as unknown as unknown[] },
        { accepts: [{ amount: 5n }] },
        { accepts: [noise(16 * 1024 - 3)] },
        { bazaar: [] as unknown as Record<string, unknown> },
        { bazaar: null as unknown as Record<string, unknown> },
        { bazaar: { x: noise(16 * 1024) } },
        { description: 'd'.repeat(1025) },
        { description: 'nul \u0000' },
        { mimeType: 'm'.repeat(129) },
        { mimeType: undefined },
        { at: 'yesterday' },
        { at: '2026-11-22T10:00:00Z' },
        { at: '2026-13-45T10:00:00.000Z' },
      ];
      const good = store.write([catalogRecord(1)]);
      const settled = await Promise.allSettled(
        bad.map((over, i) => store.write([{ op: 'meta.set', key: `bad-${i}`, value: 'x' }, catalogRecord(2, over)])),
      );
      expect(settled.map((s) => s.status)).toEqual(bad.map(() => 'rejected'));
      for (const s of settled) expect((s as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      await expect(good).resolves.toEqual(OK);
      expect(await store.listCatalog(ALL)).toEqual({
        items: [listing(catalogRecord(1), catalogRecord(1), 1, 1)],
        total: 1,
      });
      for (let i = 0; i < bad.length; i++) expect(await store.getMeta(`bad-${i}`)).toBeNull();
    });

    it('applies a voucher call with its catalog record all or nothing', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      const verifierCall = (
        expected: bigint,
        cumulative: bigint,
        key: string,
        n: number,
        before: WriteOp[] = [],
      ): WriteOp[] => {
        const { ops } = acceptOps(1n, expected, cumulative, iso(n));
        return [
          ...before,
          ...ops,
          catalogRecord(n),
          { op: 'idempotency', key, fingerprint: `f${n}`, response: `r${n}`, at: iso(n) },
        ];
      };
      // A lost compare-and-set (op 0), alone and beside an op that takes SQLite's savepoint path.
      expect(await store.write(verifierCall(5n, 10n, 'k1', 1))).toEqual({ ok: false, reason: 'conflict', op: 0 });
      expect(
        await store.write(verifierCall(5n, 10n, 'k1', 1, [{ op: 'channel.insert', channel: channel(2n) }])),
      ).toEqual({
        ok: false,
        reason: 'conflict',
        op: 1,
      });
      expect(await store.listCatalog(ALL)).toEqual({ items: [], total: 0 });
      expect(await store.getIdempotent('k1')).toBeNull();
      expect(await store.getChannel(2n)).toBeNull();
      const won = await store.write(verifierCall(0n, 10n, 'k1', 2));
      expect(won.ok).toBe(true);
      expect(await only(store)).toEqual(listing(catalogRecord(2), catalogRecord(2), 1, 1));
      // A duplicate key after the record (op 4): nothing of the call stays, the record included.
      expect(await store.write(verifierCall(10n, 20n, 'k1', 3))).toEqual({ ok: false, reason: 'duplicate', op: 4 });
      expect(
        await store.write(verifierCall(10n, 20n, 'k1', 3, [{ op: 'channel.insert', channel: channel(2n) }])),
      ).toEqual({
        ok: false,
        reason: 'duplicate',
        op: 5,
      });
      expect(await only(store)).toEqual(listing(catalogRecord(2), catalogRecord(2), 1, 1));
      expect(await store.getChannel(1n)).toMatchObject({ lastAccepted: 10n, vouchers: 1 });
      expect(await store.getChannel(2n)).toBeNull();
    });

    it('counts only the payment that won among concurrent copies of one voucher', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.write([...acceptOps(1n, 0n, 5_000n, iso(i)).ops, catalogRecord(i, { payer: account(i) })]),
        ),
      );
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      const w = catalogRecord(winners[0]!, { payer: account(winners[0]!) });
      expect(await only(store)).toEqual(listing(w, w, 1, 1));
    });
  });

  describe('catalog: durability', () => {
    it('keeps listings and their payers across close and reopen', async () => {
      const { store, reopen } = ctx();
      await record(
        store,
        catalogRecord(1),
        catalogRecord(2, { payer: OTHER_PAYER }),
        catalogRecord(3, { payTo: OTHER_PAYEE }),
      );
      const before = await store.listCatalog(ALL);
      expect(before.total).toBe(2);
      const again = await reopen();
      expect(await again.listCatalog(ALL)).toEqual(before);
      // Payers already seen are still known: a repeat adds a payment, not a payer.
      await record(again, catalogRecord(4, { payer: OTHER_PAYER }));
      expect((await again.listCatalog({ payTo: PAYEE, ...ALL })).items).toEqual([
        listing(catalogRecord(1), catalogRecord(4, { payer: OTHER_PAYER }), 3, 2),
      ]);
    });

    it('upgrades a version-2 database once: its data stays and the catalog works', async () => {
      const old = await ctx().legacy(2);
      expect(await old.versions()).toEqual([1, 2]);
      await old.exec(legacyChannelSql(channel(1n)));
      await old.store.write([{ op: 'meta.set', key: 'cursor', value: '7' }]);
      // Version 2 has no catalog at all.
      await expect(old.store.write([catalogRecord(1)])).rejects.toThrow();
      await expect(old.store.listCatalog(ALL)).rejects.toThrow();
      const store = await old.upgrade();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await store.getChannel(1n)).toEqual(channel(1n));
      expect(await store.write([openStream(stream(1))])).toEqual({ ok: true, events: [] });
      expect(await store.getStream(streamId(1))).toEqual(stream(1));
      expect(await store.getMeta('cursor')).toBe('7');
      expect(await store.listCatalog(ALL)).toEqual({ items: [], total: 0 });
      await record(store, catalogRecord(1));
      await store.migrate();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await only(store)).toEqual(listing(catalogRecord(1), catalogRecord(1), 1, 1));
    });
  });
};
