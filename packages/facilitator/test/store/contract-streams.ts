// Store contract: streaming sessions (docs/protocol.md#streams) — open with its limits and its one-receipt
// binding, credit, consume, touch, end, units, listing, durability and the upgrade that adds them.
// Several calls are written twice, alone and beside a second stream op: SQLite decides the first
// kind's preconditions before applying it (no savepoint) and the second inside a savepoint, and
// both must give the same outcome.
import { describe, expect, it } from 'vitest';
import type { Store, StreamRecord, WriteOp, WriteResult } from '../../src/store/index.js';
import {
  I128_MAX,
  OTHER_PAYEE,
  OTHER_PAYER,
  PAYEE,
  PAYER,
  U64_MAX,
  account,
  channel,
  event,
  iso,
  legacyChannelSql,
  openStream,
  receiptId,
  stream,
  streamId,
} from './builders.js';
import type { Section } from './contract-context.js';

type Op<K extends WriteOp['op']> = Extract<WriteOp, { op: K }>;

const credit = (n: number, over: Partial<Omit<Op<'stream.credit'>, 'op'>> = {}): Op<'stream.credit'> => ({
  op: 'stream.credit',
  streamId: streamId(n),
  cumulative: 2_000n,
  delta: 1_000n,
  receiptId: receiptId(1_000 + n),
  required: 3_000n,
  at: iso(100),
  ...over,
});

const consume = (n: number, receipt: string, at = iso(101)): Op<'stream.consume'> => ({
  op: 'stream.consume',
  streamId: streamId(n),
  receiptId: receipt,
  at,
});
const touch = (n: number, at: string): Op<'stream.touch'> => ({ op: 'stream.touch', streamId: streamId(n), at });
const end = (n: number, over: Partial<Omit<Op<'stream.end'>, 'op'>> = {}): Op<'stream.end'> => ({
  op: 'stream.end',
  streamId: streamId(n),
  reason: 'done',
  units: 12,
  at: iso(200),
  ...over,
});
const units = (n: number, value: number): Op<'stream.units'> => ({
  op: 'stream.units',
  streamId: streamId(n),
  units: value,
});
const ended = (n: number): WriteOp => ({
  op: 'event',
  event: event({ type: 'stream.ended', channelId: 1n, data: { streamId: streamId(n) } }),
});
const started = (n: number): WriteOp => ({
  op: 'event',
  event: event({ type: 'stream.started', channelId: 1n, data: { streamId: streamId(n) } }),
});

const conflict = (op: number): WriteResult => ({ ok: false, reason: 'conflict', op });
const duplicate = (op: number): WriteResult => ({ ok: false, reason: 'duplicate', op });
const limit = (op: number): WriteResult => ({ ok: false, reason: 'limit', op });
const OK = { ok: true, events: [] };

async function open(store: Store, ...streams: StreamRecord[]): Promise<void> {
  for (const st of streams) expect(await store.write([openStream(st)])).toEqual(OK);
}

async function eventsOfType(store: Store, type: string): Promise<number> {
  return (await store.events({ limit: 1_000, types: [type] })).length;
}

export const streamSection: Section = (ctx) => {
  describe('streams: open', () => {
    it('stores an opened session exactly: bigint amounts, null where nothing is known yet', async () => {
      const { store } = ctx();
      const st = stream(1);
      expect(await store.write([openStream(st)])).toEqual(OK);
      const got = await store.getStream(st.id);
      expect(got).toEqual(st);
      expect(typeof got?.sliceCost).toBe('bigint');
      expect(typeof got?.channelId).toBe('bigint');
      expect(got?.pendingReceiptId).toBeNull();
      expect(got?.units).toBeNull();
      expect(got?.reason).toBeNull();
      expect(got?.endedAt).toBeNull();
      expect(await store.getStream(streamId(2))).toBeNull();
    });

    it('round-trips extreme values and every optional field', async () => {
      const { store } = ctx();
      const big = stream(1, {
        channelId: U64_MAX,
        unit: 'second',
        sliceCost: I128_MAX,
        initialCharge: I128_MAX - 1n,
        required: I128_MAX - 2n,
        paid: I128_MAX - 3n,
        charged: I128_MAX - 4n,
        vouchers: 2 ** 31,
        pendingReceiptId: receiptId(77),
        units: Number.MAX_SAFE_INTEGER,
        lastActivityAt: iso(5),
        scheme: 'batch-settlement',
      });
      const done = stream(2, {
        channelId: 9_007_199_254_740_993n,
        status: 'ended',
        reason: 'ACCOUNT_FROZEN',
        units: 0,
        endedAt: iso(9),
      });
      expect(await store.write([openStream(big), openStream(done)])).toEqual(OK);
      expect(await store.getStream(big.id)).toEqual(big);
      expect((await store.getStream(big.id))?.scheme).toBe('batch-settlement');
      expect(await store.getStream(done.id)).toEqual(done);
      expect(await store.listStreams({ channelId: U64_MAX })).toEqual([big]);
      expect(await store.listStreams({ channelId: 9_007_199_254_740_992n })).toEqual([]);
    });

    it('refuses a second open of one receipt as a duplicate, also once the first session has ended', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      const again = stream(2, { receiptId: receiptId(1) });
      expect(await store.write([started(2), openStream(again)])).toEqual(duplicate(1));
      await store.write([end(1)]);
      expect(await store.write([openStream(again), started(2)])).toEqual(duplicate(0));
      // The same session id twice is the same session opened twice.
      expect(await store.write([openStream(stream(1, { receiptId: receiptId(3) }))])).toEqual(duplicate(0));
      expect(await store.getStream(again.id)).toBeNull();
      expect(await store.listStreams()).toEqual([
        { ...stream(1), status: 'ended', reason: 'done', units: 12, endedAt: iso(200) },
      ]);
      expect(await store.lastEventId()).toBe(0);
    });

    it('reports a duplicate before a limit: a retried open whose own session fills the channel is told it exists', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      expect(await store.write([openStream(stream(1), { maxPerChannel: 1, maxTotal: 1 })])).toEqual(duplicate(0));
      expect(await store.write([openStream(stream(2), { maxPerChannel: 1, maxTotal: 1 })])).toEqual(limit(0));
    });

    it('limits open sessions per channel; ended sessions and other channels do not count', async () => {
      const { store } = ctx();
      const limits = { maxPerChannel: 2, maxTotal: 1_000 };
      expect(await store.write([openStream(stream(1), limits)])).toEqual(OK);
      expect(await store.write([openStream(stream(2), limits)])).toEqual(OK);
      // The refused call is rolled back whole; a call beside it is not.
      const [refused, beside] = await Promise.all([
        store.write([started(3), { op: 'meta.set', key: 'k', value: 'v' }, openStream(stream(3), limits)]),
        store.write([started(9), { op: 'meta.set', key: 'other', value: 'w' }]),
      ]);
      expect(refused).toEqual(limit(2));
      expect(beside.ok).toBe(true);
      expect(await store.getStream(streamId(3))).toBeNull();
      expect(await store.getMeta('k')).toBeNull();
      expect(await store.getMeta('other')).toBe('w');
      expect((await store.events({ limit: 10 })).map((e) => e.data.streamId)).toEqual([streamId(9)]);
      // Another channel has its own slots.
      expect(await store.write([openStream(stream(4, { channelId: 2n }), limits)])).toEqual(OK);
      expect(await store.write([openStream(stream(5, { channelId: 2n }), limits)])).toEqual(OK);
      // An ended session frees its slot.
      expect(await store.write([end(1)])).toEqual(OK);
      expect(await store.write([openStream(stream(3), limits)])).toEqual(OK);
      expect(await store.write([openStream(stream(6), limits)])).toEqual(limit(0));
      expect(await store.countOpenStreams(1n)).toBe(2);
      expect(await store.countOpenStreams(2n)).toBe(2);
    });

    it('limits open sessions in all, across channels', async () => {
      const { store } = ctx();
      const limits = { maxPerChannel: 4, maxTotal: 3 };
      for (const n of [1, 2, 3])
        expect(await store.write([openStream(stream(n, { channelId: BigInt(n) }), limits)])).toEqual(OK);
      expect(await store.write([openStream(stream(4, { channelId: 4n }), limits), started(4)])).toEqual(limit(0));
      expect(await store.lastEventId()).toBe(0);
      expect(await store.write([end(2)])).toEqual(OK);
      expect(await store.write([openStream(stream(4, { channelId: 4n }), limits)])).toEqual(OK);
      expect(await store.write([openStream(stream(5, { channelId: 5n }), limits)])).toEqual(limit(0));
      expect(await store.countOpenStreams()).toBe(3);
    });

    it('limits open sessions per payer and per payee, so one party cannot take the slots everyone shares', async () => {
      const { store } = ctx();
      const limits = { maxPerPayer: 2, maxPerPayee: 3 };
      // One payer, on channels of its own: two, then refused; another payer still opens.
      expect(await store.write([openStream(stream(1, { channelId: 1n }), limits)])).toEqual(OK);
      expect(await store.write([openStream(stream(2, { channelId: 2n }), limits)])).toEqual(OK);
      expect(await store.write([openStream(stream(3, { channelId: 3n }), limits)])).toEqual(limit(0));
      expect(await store.write([openStream(stream(4, { channelId: 4n, payer: OTHER_PAYER }), limits)])).toEqual(OK);
      // The payee has three now: a third payer is refused for it, and opens with another payee.
      expect(await store.write([openStream(stream(5, { channelId: 5n, payer: account(5) }), limits)])).toEqual(
        limit(0),
      );
      expect(
        await store.write([openStream(stream(6, { channelId: 6n, payer: account(6), payTo: OTHER_PAYEE }), limits)]),
      ).toEqual(OK);
      expect(await store.countOpenStreamsOf({ payer: PAYER })).toBe(2);
      expect(await store.countOpenStreamsOf({ payTo: PAYEE })).toBe(3);
      expect(await store.countOpenStreamsOf({ payTo: OTHER_PAYEE })).toBe(1);
      // An ended session frees the payer's slot.
      expect(await store.write([end(1)])).toEqual(OK);
      expect(await store.countOpenStreamsOf({ payer: PAYER })).toBe(1);
      expect(await store.write([openStream(stream(3, { channelId: 3n, payTo: OTHER_PAYEE }), limits)])).toEqual(OK);
      expect((await store.getStream(streamId(3)))?.payer).toBe(PAYER);
    });

    it('counts the sessions opened earlier in the same call', async () => {
      const { store } = ctx();
      const limits = { maxPerChannel: 2, maxTotal: 1_000 };
      expect(
        await store.write([
          openStream(stream(1), limits),
          openStream(stream(2), limits),
          openStream(stream(3), limits),
        ]),
      ).toEqual(limit(2));
      expect(await store.countOpenStreams()).toBe(0);
      expect(
        await store.write([
          openStream(stream(1), limits),
          end(1),
          openStream(stream(2), limits),
          openStream(stream(3), limits),
        ]),
      ).toEqual(OK);
      expect(await store.countOpenStreams(1n)).toBe(2);
    });

    it('gives the last slot of a channel to exactly one of 30 concurrent opens', async () => {
      const { store } = ctx();
      await open(store, stream(1), stream(2), stream(3));
      const racers = Array.from({ length: 30 }, (_, i) => stream(10 + i));
      const results = await Promise.all(racers.map((st, i) => store.write([openStream(st), started(10 + i)])));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 29 }, () => limit(0)));
      expect(await store.countOpenStreams(1n)).toBe(4);
      expect(await store.listStreams({ channelId: 1n })).toHaveLength(4);
      expect(await eventsOfType(store, 'stream.started')).toBe(1);
    });

    it('gives the last slot in all to exactly one of 30 concurrent opens on different channels', async () => {
      const { store } = ctx();
      const limits = { maxPerChannel: 4, maxTotal: 5 };
      for (const n of [1, 2, 3, 4]) await store.write([openStream(stream(n, { channelId: 100n }), limits)]);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.write([openStream(stream(10 + i, { channelId: BigInt(i) }), limits)]),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 29 }, () => limit(0)));
      expect(await store.countOpenStreams()).toBe(5);
    });

    it('binds one receipt to exactly one of 30 concurrent opens', async () => {
      const { store } = ctx();
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.write([openStream(stream(10 + i, { channelId: BigInt(i), receiptId: receiptId(5) }))]),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 29 }, () => duplicate(0)));
      expect(await store.countOpenStreams()).toBe(1);
    });
  });

  describe('streams: slices', () => {
    it('credits a paid slice: paid, charged, vouchers, required, the pending receipt and the activity time', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      expect(await store.write([credit(1)])).toEqual(OK);
      expect(await store.getStream(streamId(1))).toEqual(
        stream(1, {
          paid: 2_000n,
          charged: 2_000n,
          vouchers: 2,
          required: 3_000n,
          pendingReceiptId: receiptId(1_001),
          lastActivityAt: iso(100),
        }),
      );
      // Once a wait took it, beside a second stream op of the same call (SQLite: inside a savepoint)
      // the next one applies the same way; a credit of less than a slice is one slice at most too.
      expect(await store.write([consume(1, receiptId(1_001))])).toEqual(OK);
      const second = credit(1, {
        cumulative: 2_500n,
        delta: 500n,
        receiptId: receiptId(2_001),
        required: 3_500n,
        at: iso(110),
      });
      expect(await store.write([touch(1, iso(105)), second])).toEqual(OK);
      expect(await store.getStream(streamId(1))).toMatchObject({
        paid: 2_500n,
        charged: 2_500n,
        vouchers: 3,
        required: 3_500n,
        pendingReceiptId: receiptId(2_001),
        lastActivityAt: iso(110),
      });
    });

    it('adds to charged exactly, up to the i128 maximum', async () => {
      const { store } = ctx();
      await open(store, stream(1, { initialCharge: I128_MAX - 10n, charged: I128_MAX - 10n, paid: I128_MAX - 10n }));
      expect(await store.write([credit(1, { cumulative: I128_MAX, delta: 10n, required: I128_MAX })])).toEqual(OK);
      const got = await store.getStream(streamId(1));
      expect(got).toMatchObject({
        paid: I128_MAX,
        charged: I128_MAX,
        required: I128_MAX,
        initialCharge: I128_MAX - 10n,
      });
    });

    it('refuses a credit to an ended or a missing session, rolling back its call and nothing beside it', async () => {
      const { store } = ctx();
      await open(store, stream(1), stream(2), stream(3));
      await store.write([end(1)]);
      const before = await store.getStream(streamId(1));
      const [alone, withTouch, missing, beside] = await Promise.all([
        store.write([{ op: 'meta.set', key: 'a', value: '1' }, started(1), credit(1)]),
        store.write([started(1), touch(3, iso(150)), credit(1)]),
        store.write([credit(404), started(404)]),
        store.write([credit(2), started(2)]),
      ]);
      expect([alone, withTouch, missing]).toEqual([conflict(2), conflict(2), conflict(0)]);
      expect(beside.ok).toBe(true);
      expect(await store.getStream(streamId(1))).toEqual(before);
      expect(await store.getStream(streamId(2))).toMatchObject({ vouchers: 2, lastActivityAt: iso(100) });
      expect(await store.getStream(streamId(3))).toEqual(stream(3));
      expect(await store.getMeta('a')).toBeNull();
      expect((await store.events({ limit: 10 })).map((e) => e.data.streamId)).toEqual([streamId(2)]);
      expect(await store.getStream(streamId(404))).toBeNull();
    });

    it('applies a voucher call on a channel and its session together, or neither', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      await open(store, stream(1, { sliceCost: 2_000n }));
      const voucher = (expected: bigint, cumulative: bigint): WriteOp[] => [
        { op: 'channel.advance', channelId: 1n, expected, cumulative, signature: 'ab', at: iso(100) },
        credit(1, { cumulative, delta: cumulative - expected }),
      ];
      expect(await store.write(voucher(0n, 2_000n))).toEqual(OK);
      expect(await store.write(voucher(0n, 2_000n))).toEqual(conflict(0));
      await store.write([end(1)]);
      expect(await store.write(voucher(2_000n, 3_000n))).toEqual(conflict(1));
      expect(await store.getChannel(1n)).toMatchObject({ lastAccepted: 2_000n, vouchers: 1 });
      expect(await store.getStream(streamId(1))).toMatchObject({ paid: 2_000n, charged: 3_000n, vouchers: 2 });
    });

    it('refuses a credit while a slice is pending, rolling back its call, alone or beside a second stream op', async () => {
      const { store } = ctx();
      await open(store, stream(1), stream(2));
      expect(await store.write([credit(1)])).toEqual(OK);
      const pending = await store.getStream(streamId(1));
      const next = credit(1, { cumulative: 3_000n, receiptId: receiptId(2_001), required: 4_000n, at: iso(110) });
      const [alone, withTouch, beside] = await Promise.all([
        store.write([{ op: 'meta.set', key: 'a', value: '1' }, started(1), next]),
        store.write([started(1), touch(2, iso(150)), next]),
        store.write([credit(2), started(2)]),
      ]);
      expect([alone, withTouch]).toEqual([conflict(2), conflict(2)]);
      expect(beside.ok).toBe(true);
      expect(await store.getStream(streamId(1))).toEqual(pending);
      expect(await store.getStream(streamId(2))).toMatchObject({ vouchers: 2, lastActivityAt: iso(100) });
      expect(await store.getMeta('a')).toBeNull();
      expect((await store.events({ limit: 10 })).map((e) => e.data.streamId)).toEqual([streamId(2)]);
      // Once a wait took the pending slice, the same credit applies.
      expect(await store.write([consume(1, receiptId(1_001))])).toEqual(OK);
      expect(await store.write([next])).toEqual(OK);
      expect(await store.getStream(streamId(1))).toMatchObject({
        paid: 3_000n,
        charged: 3_000n,
        vouchers: 3,
        pendingReceiptId: receiptId(2_001),
      });
    });

    it('refuses a credit of more than one slice, alone or beside a second stream op; exactly one slice applies', async () => {
      const { store } = ctx();
      await open(store, stream(1, { sliceCost: I128_MAX - 1_000n }), stream(2));
      const two = credit(2, { cumulative: 3_000n, delta: 2_000n, required: 4_000n });
      expect(await store.write([started(2), two])).toEqual(conflict(1));
      expect(await store.write([touch(2, iso(150)), two])).toEqual(conflict(1));
      expect(await store.write([credit(2, { delta: 1_001n })])).toEqual(conflict(0));
      expect(await store.getStream(streamId(2))).toEqual(stream(2));
      expect(await store.lastEventId()).toBe(0);
      expect(await store.write([credit(2, { delta: 1_000n })])).toEqual(OK);
      // Compared as integers, not as text or floats: one more than a slice near the i128 maximum.
      const near = { cumulative: I128_MAX, required: I128_MAX };
      expect(await store.write([credit(1, { ...near, delta: I128_MAX - 999n })])).toEqual(conflict(0));
      expect(await store.write([credit(1, { ...near, delta: I128_MAX - 1_000n })])).toEqual(OK);
      expect((await store.getStream(streamId(1)))?.charged).toBe(I128_MAX);
    });

    it('refuses the advance of a voucher whose slice is refused: the channel keeps what it had', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      await open(store, stream(1));
      const voucher = (expected: bigint, cumulative: bigint, n: number): WriteOp[] => [
        { op: 'channel.advance', channelId: 1n, expected, cumulative, signature: 'ab', at: iso(100) },
        credit(1, { cumulative, delta: cumulative - expected, receiptId: receiptId(n) }),
      ];
      expect(await store.write(voucher(0n, 1_000n, 10))).toEqual(OK);
      expect(await store.write(voucher(1_000n, 2_000n, 11))).toEqual(conflict(1)); // a slice is pending
      await store.write([consume(1, receiptId(10))]);
      expect(await store.write(voucher(1_000n, 3_000n, 12))).toEqual(conflict(1)); // two slices
      expect(await store.getChannel(1n)).toMatchObject({ lastAccepted: 1_000n, vouchers: 1 });
      expect(await store.getStream(streamId(1))).toMatchObject({ paid: 1_000n, charged: 2_000n, vouchers: 2 });
    });

    it('credits exactly one of 10 concurrent slices of one session', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.write([credit(1, { receiptId: receiptId(500 + i) }), started(1)])),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 9 }, () => conflict(0)));
      expect(await store.getStream(streamId(1))).toMatchObject({ charged: 2_000n, vouchers: 2 });
      expect(await eventsOfType(store, 'stream.started')).toBe(1);
    });

    it('lets a wait consume the pending slice once, and only the slice it names', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      await store.write([credit(1)]);
      expect(await store.write([consume(1, receiptId(9))])).toEqual(conflict(0));
      expect((await store.getStream(streamId(1)))?.pendingReceiptId).toBe(receiptId(1_001));
      expect(await store.write([consume(1, receiptId(1_001), iso(150))])).toEqual(OK);
      // Consuming is not activity by itself: the wait around it touches the session.
      expect(await store.getStream(streamId(1))).toMatchObject({
        pendingReceiptId: null,
        lastActivityAt: iso(100),
        vouchers: 2,
      });
      expect(await store.write([consume(1, receiptId(1_001)), started(1)])).toEqual(conflict(0));
      expect(await store.lastEventId()).toBe(0);
      // A credit and its consume in one call (SQLite: inside a savepoint).
      expect(await store.write([credit(1, { receiptId: receiptId(3_001) }), consume(1, receiptId(3_001))])).toEqual(OK);
      expect((await store.getStream(streamId(1)))?.pendingReceiptId).toBeNull();
      expect(await store.write([consume(404, receiptId(1))])).toEqual(conflict(0));
    });

    it('gives one pending slice to exactly one of two concurrent waits', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      await store.write([credit(1)]);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.write([consume(1, receiptId(1_001), iso(120 + i))])),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 9 }, () => conflict(0)));
    });

    it('refuses to consume the slice of an ended session', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      await store.write([credit(1)]);
      await store.write([end(1)]);
      expect(await store.write([consume(1, receiptId(1_001))])).toEqual(conflict(0));
      expect(
        await store.write([{ op: 'meta.set', key: 'm', value: 'x' }, touch(1, iso(300)), consume(1, receiptId(1_001))]),
      ).toEqual(conflict(2));
      expect((await store.getStream(streamId(1)))?.pendingReceiptId).toBe(receiptId(1_001));
      expect(await store.getMeta('m')).toBeNull();
    });

    it('touches open sessions only, never failing', async () => {
      const { store } = ctx();
      await open(store, stream(1), stream(2));
      await store.write([end(2)]);
      expect(await store.write([touch(1, iso(50))])).toEqual(OK);
      expect(await store.write([touch(2, iso(300)), { op: 'meta.set', key: 'after', value: 'yes' }])).toEqual(OK);
      expect(await store.write([touch(404, iso(300))])).toEqual(OK);
      expect(await store.getStream(streamId(1))).toEqual(stream(1, { lastActivityAt: iso(50) }));
      expect((await store.getStream(streamId(2)))?.lastActivityAt).toBe(iso(2));
      expect(await store.getMeta('after')).toBe('yes');
      expect(await store.getStream(streamId(404))).toBeNull();
    });
  });

  describe('streams: end', () => {
    it('ends a session once: status, reason, units and endedAt, everything else kept', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      await store.write([credit(1)]);
      const before = await store.getStream(streamId(1));
      const first = await store.write([end(1, { reason: 'TIMEOUT', units: 40, at: iso(210) }), ended(1)]);
      expect(first.ok && first.events.map((e) => e.type)).toEqual(['stream.ended']);
      expect(await store.getStream(streamId(1))).toEqual({
        ...before,
        status: 'ended',
        reason: 'TIMEOUT',
        units: 40,
        endedAt: iso(210),
      });
      expect(await store.write([end(1, { reason: 'ABORTED', at: iso(220) }), ended(1)])).toEqual(conflict(0));
      expect(await store.write([ended(1), touch(1, iso(230)), end(1)])).toEqual(conflict(2));
      expect(await store.getStream(streamId(1))).toMatchObject({
        reason: 'TIMEOUT',
        units: 40,
        endedAt: iso(210),
        lastActivityAt: iso(100),
      });
      expect(await eventsOfType(store, 'stream.ended')).toBe(1);
      expect(await store.write([end(404), ended(404)])).toEqual(conflict(0));
      expect(await store.getStream(streamId(404))).toBeNull();
    });

    it('stores the stream.ended event exactly once when many ends race', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      const reasons = ['done', 'TIMEOUT', 'ABORTED', 'CHANNEL_EXHAUSTED', 'ACCOUNT_FROZEN'] as const;
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.write([end(1, { reason: reasons[i % 5]!, at: iso(300 + i) }), ended(1)]),
        ),
      );
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 19 }, () => conflict(0)));
      expect(await store.getStream(streamId(1))).toMatchObject({
        status: 'ended',
        reason: reasons[winners[0]! % 5],
        endedAt: iso(300 + winners[0]!),
      });
      expect(await eventsOfType(store, 'stream.ended')).toBe(1);
    });

    it('records units reported after the end only while they are unknown', async () => {
      const { store } = ctx();
      await open(store, stream(1), stream(2));
      await store.write([end(1, { units: null })]);
      await store.write([end(2, { units: 5 })]);
      expect((await store.getStream(streamId(1)))?.units).toBeNull();
      expect(await store.write([units(1, 42)])).toEqual(OK);
      expect(await store.write([units(1, 7)])).toEqual(OK);
      expect(await store.write([units(2, 9)])).toEqual(OK);
      expect(await store.write([units(404, 1)])).toEqual(OK);
      expect(await store.getStream(streamId(1))).toMatchObject({ units: 42, status: 'ended', reason: 'done' });
      expect((await store.getStream(streamId(2)))?.units).toBe(5);
      expect(await store.getStream(streamId(404))).toBeNull();
    });
  });

  describe('streams: listing', () => {
    it('lists sessions oldest first (openedAt, then id), filtered by status, channel and idleness', async () => {
      const { store } = ctx();
      await open(
        store,
        stream(5, { openedAt: iso(3), lastActivityAt: iso(40) }),
        stream(1, { openedAt: iso(1), lastActivityAt: iso(10), channelId: 2n }),
        stream(4, { openedAt: iso(2), lastActivityAt: iso(20) }),
        stream(3, { openedAt: iso(2), lastActivityAt: iso(30), channelId: 2n }),
        stream(2, { openedAt: iso(4), lastActivityAt: iso(5) }),
      );
      await store.write([end(4, { at: iso(50) })]);
      const ids = async (filter?: Parameters<Store['listStreams']>[0]) =>
        (await store.listStreams(filter)).map((s) => s.id);
      expect(await ids()).toEqual([1, 3, 4, 5, 2].map(streamId));
      expect(await ids({})).toEqual([1, 3, 4, 5, 2].map(streamId));
      expect(await ids({ status: 'open' })).toEqual([1, 3, 5, 2].map(streamId));
      expect(await ids({ status: 'ended' })).toEqual([streamId(4)]);
      expect(await ids({ channelId: 2n })).toEqual([1, 3].map(streamId));
      expect(await ids({ channelId: 1n, status: 'open' })).toEqual([5, 2].map(streamId));
      // The idle sweep: strictly before the given time.
      expect(await ids({ status: 'open', idleBefore: iso(30) })).toEqual([1, 2].map(streamId));
      expect(await ids({ idleBefore: iso(30) })).toEqual([1, 4, 2].map(streamId));
      expect(await ids({ status: 'open', idleBefore: iso(5) })).toEqual([]);
      expect(await ids({ status: 'open', channelId: 2n, idleBefore: iso(31) })).toEqual([1, 3].map(streamId));
      expect(await ids({ channelId: 3n })).toEqual([]);
      expect((await store.listStreams({ status: 'ended' }))[0]).toEqual(
        stream(4, {
          openedAt: iso(2),
          lastActivityAt: iso(20),
          status: 'ended',
          reason: 'done',
          units: 12,
          endedAt: iso(50),
        }),
      );
    });

    it('counts open sessions on one channel or in all', async () => {
      const { store } = ctx();
      expect(await store.countOpenStreams()).toBe(0);
      expect(await store.countOpenStreams(1n)).toBe(0);
      await open(store, stream(1), stream(2), stream(3, { channelId: 2n }), stream(4, { channelId: U64_MAX }));
      await store.write([end(2)]);
      expect(await store.countOpenStreams()).toBe(3);
      expect(await store.countOpenStreams(1n)).toBe(1);
      expect(await store.countOpenStreams(2n)).toBe(1);
      expect(await store.countOpenStreams(U64_MAX)).toBe(1);
      expect(await store.countOpenStreams(7n)).toBe(0);
    });
  });

  describe('streams: input', () => {
    it('refuses malformed stream ops before they reach a batch, storing nothing and failing no other call', async () => {
      const { store } = ctx();
      await open(store, stream(1));
      const bad: WriteOp[][] = [
        [openStream(stream(2, { id: 'ABCDEF'.padEnd(32, '0') }))],
        [openStream(stream(2, { id: streamId(2).slice(1) }))],
        [openStream(stream(2, { receiptId: 'r-2' }))],
        [openStream(stream(2, { sliceCost: -1n }))],
        [openStream(stream(2, { charged: I128_MAX + 1n }))],
        [openStream(stream(2, { channelId: U64_MAX + 1n }))],
        [openStream(stream(2, { unit: 'request' as StreamRecord['unit'] }))],
        [openStream(stream(2, { status: 'paused' as StreamRecord['status'] }))],
        [openStream(stream(2, { reason: 'BORED' as StreamRecord['reason'] }))],
        [openStream(stream(2, { units: -1 }))],
        [openStream(stream(2, { vouchers: 1.5 }))],
        [openStream(stream(2), { maxPerChannel: 0, maxTotal: 1_000 })],
        [openStream(stream(2), { maxPerChannel: 4, maxTotal: 2.5 })],
        [{ op: 'meta.set', key: 'x', value: 'y' }, credit(1, { delta: -1n })],
        [credit(1, { cumulative: I128_MAX + 1n })],
        [credit(1, { receiptId: 'nope' })],
        [credit(1, { streamId: 'nope' })],
        [consume(1, 'nope')],
        [touch(1, 5 as unknown as string)],
        [end(1, { reason: 'BORED' as Op<'stream.end'>['reason'] })],
        [end(1, { units: 1.5 })],
        [units(1, -3)],
      ];
      const good = store.write([openStream(stream(3))]);
      const settled = await Promise.allSettled(bad.map((ops) => store.write(ops)));
      expect(settled.map((s) => s.status)).toEqual(bad.map(() => 'rejected'));
      for (const s of settled) expect((s as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      await expect(good).resolves.toEqual(OK);
      expect(await store.getStream(streamId(2))).toBeNull();
      expect(await store.getMeta('x')).toBeNull();
      expect(await store.getStream(streamId(1))).toEqual(stream(1));
      expect(await store.countOpenStreams()).toBe(2);
    });
  });

  describe('streams: durability', () => {
    it('keeps sessions across close and reopen, and still enforces the limits', async () => {
      const { store, reopen } = ctx();
      await open(store, stream(1), stream(2), stream(3), stream(4, { channelId: 2n }));
      await store.write([credit(1)]);
      await store.write([end(2, { reason: 'CHANNEL_EXHAUSTED', units: 3 })]);
      const before = await store.listStreams();
      const again = await reopen();
      expect(await again.listStreams()).toEqual(before);
      expect(await again.getStream(streamId(1))).toEqual(before[0]);
      expect(await again.countOpenStreams(1n)).toBe(2);
      expect(await again.write([openStream(stream(5), { maxPerChannel: 2, maxTotal: 1_000 })])).toEqual(limit(0));
      expect(await again.write([openStream(stream(6, { receiptId: receiptId(2) }))])).toEqual(duplicate(0));
      expect(await again.write([consume(1, receiptId(1_001))])).toEqual(OK);
    });

    it('upgrades a version-3 database once: sessions keep their parties and the caps per payer and payee work', async () => {
      const old = await ctx().legacy(3);
      expect(await old.versions()).toEqual([1, 2, 3]);
      await old.exec(legacyChannelSql(channel(1n)));
      const store = await old.upgrade();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await store.write([openStream(stream(1), { maxPerPayer: 1 })])).toEqual(OK);
      expect(await store.write([openStream(stream(2, { channelId: 2n }), { maxPerPayer: 1 })])).toEqual(limit(0));
      expect(await store.getStream(streamId(1))).toEqual(stream(1));
      expect(await store.countOpenStreamsOf({ payer: PAYER })).toBe(1);
    });

    it('upgrades a version-1 database once: its data stays and sessions work', async () => {
      const old = await ctx().legacy(1);
      expect(await old.versions()).toEqual([1]);
      await old.exec(legacyChannelSql(channel(1n)));
      await old.store.write([{ op: 'meta.set', key: 'cursor', value: '7' }]);
      // Version 1 has no sessions at all.
      await expect(old.store.write([openStream(stream(1))])).rejects.toThrow();
      const store = await old.upgrade();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await store.getChannel(1n)).toEqual(channel(1n));
      expect(await store.getMeta('cursor')).toBe('7');
      expect(await store.write([openStream(stream(1))])).toEqual(OK);
      await store.migrate();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await store.getStream(streamId(1))).toEqual(stream(1));
      expect(await store.write([openStream(stream(2, { receiptId: receiptId(1) }))])).toEqual(duplicate(0));
    });
  });
};
