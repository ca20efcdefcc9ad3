// Store contract: channels — insert, the compare-and-set advance, ledger facts, claims, listing,
// and the atomicity of one write() call.
import { describe, expect, it } from 'vitest';
import type { WriteOp } from '../../src/store/index.js';
import { OTHER_PAYEE, OTHER_PAYER, PAYEE, PAYER, acceptOps, channel, event, iso, sig } from './builders.js';
import type { Section } from './contract-context.js';

export const channelSection: Section = (ctx) => {
  describe('channels', () => {
    it('inserts a channel once: a second insert of the same id has no effect', async () => {
      const { store } = ctx();
      expect(await store.write([{ op: 'channel.insert', channel: channel(7n) }])).toEqual({ ok: true, events: [] });
      expect(
        await store.write([{ op: 'channel.insert', channel: channel(7n, { deposit: 5n, payer: OTHER_PAYER }) }]),
      ).toEqual({ ok: true, events: [] });
      expect(await store.getChannel(7n)).toEqual(channel(7n));
      expect(await store.getChannel(8n)).toBeNull();
    });

    it('advances on the expected value: charged follows, and vouchers, lastVoucherAt and lastSignature are bumped', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      const first = await store.write([
        { op: 'channel.advance', channelId: 1n, expected: 0n, cumulative: 5_000n, signature: sig(5_000n), at: iso(10) },
      ]);
      expect(first).toEqual({ ok: true, events: [] });
      const second = await store.write([
        {
          op: 'channel.advance',
          channelId: 1n,
          expected: 5_000n,
          cumulative: 12_000n,
          signature: sig(12_000n),
          at: iso(11),
        },
      ]);
      expect(second.ok).toBe(true);
      expect(await store.getChannel(1n)).toEqual(
        channel(1n, {
          lastAccepted: 12_000n,
          charged: 12_000n,
          lastSignature: sig(12_000n),
          vouchers: 2,
          lastVoucherAt: iso(11),
        }),
      );
    });

    it('refuses an advance from a stale expected value, a non-increasing cumulative, a closed or a missing channel', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n, { lastAccepted: 100n, vouchers: 3 }) }]);
      await store.write([
        { op: 'channel.insert', channel: channel(2n, { status: 'closed', closedAt: iso(1), refunded: 0n }) },
      ]);
      const advance = (channelId: bigint, expected: bigint, cumulative: bigint): WriteOp => ({
        op: 'channel.advance',
        channelId,
        expected,
        cumulative,
        signature: sig(cumulative),
        at: iso(9),
      });
      const conflict = { ok: false, reason: 'conflict', op: 0 };
      expect(await store.write([advance(1n, 99n, 200n)])).toEqual(conflict);
      expect(await store.write([advance(1n, 100n, 100n)])).toEqual(conflict);
      expect(await store.write([advance(1n, 100n, 50n)])).toEqual(conflict);
      expect(await store.write([advance(2n, 0n, 10n)])).toEqual(conflict);
      expect(await store.write([advance(3n, 0n, 10n)])).toEqual(conflict);
      expect(await store.getChannel(1n)).toEqual(channel(1n, { lastAccepted: 100n, vouchers: 3 }));
      expect(await store.getChannel(2n)).toEqual(channel(2n, { status: 'closed', closedAt: iso(1), refunded: 0n }));
    });

    it('rolls back every op of a call whose advance conflicts, and nothing of the calls beside it', async () => {
      const { store } = ctx();
      await store.write([
        { op: 'channel.insert', channel: channel(1n) },
        { op: 'channel.insert', channel: channel(2n) },
      ]);
      const bad = acceptOps(1n, 777n, 5_000n);
      const good = acceptOps(2n, 0n, 5_000n);
      const before = await store.lastEventId();
      const badFirst: WriteOp[] = [{ op: 'meta.set', key: 'k', value: 'v' }, bad.ops[2]!, bad.ops[1]!, bad.ops[0]!];
      const [r1, r2] = await Promise.all([store.write(badFirst), store.write(good.ops)]);
      expect(r1).toEqual({ ok: false, reason: 'conflict', op: 3 });
      expect(r2.ok).toBe(true);
      expect(await store.getReceipt(bad.receipt.id)).toBeNull();
      expect(await store.getMeta('k')).toBeNull();
      expect(await store.events({ after: before, limit: 10, channelId: 1n })).toEqual([]);
      expect(await store.getReceipt(good.receipt.id)).toEqual(good.receipt);
      expect((await store.getChannel(2n))?.lastAccepted).toBe(5_000n);
      expect(await store.events({ after: before, limit: 10 })).toEqual(r2.ok ? r2.events : []);
    });

    it('gives exactly one winner among 50 concurrent copies of one advance', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(9n) }]);
      const copies = Array.from({ length: 50 }, (_, i) => acceptOps(9n, 0n, 5_000n, iso(100 + i)));
      const results = await Promise.all(copies.map((c) => store.write(c.ops)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(
        Array.from({ length: 49 }, () => ({ ok: false, reason: 'conflict', op: 0 })),
      );
      const ch = await store.getChannel(9n);
      expect(ch).toMatchObject({ lastAccepted: 5_000n, vouchers: 1 });
      expect(await store.events({ limit: 100, channelId: 9n })).toHaveLength(1);
      expect(await store.listReceipts({ channelId: 9n, limit: 100 })).toHaveLength(1);
    });

    it('applies concurrent calls in order, and runs the ones after a failed call on the state without it', async () => {
      // On PostgreSQL calls are pipelined optimistically: C first runs on top of B's advance; B
      // then fails on its idempotency key, and C must run again once B is rolled back, and win.
      const { store } = ctx();
      await store.write([
        { op: 'channel.insert', channel: channel(1n) },
        { op: 'idempotency', key: 'taken', fingerprint: 'f', response: 'r', at: iso(0) },
      ]);
      const [a, b, c, d] = await Promise.all([
        store.write(acceptOps(1n, 0n, 5n).ops),
        store.write([
          ...acceptOps(1n, 5n, 10n, iso(1)).ops,
          { op: 'idempotency', key: 'taken', fingerprint: 'g', response: 's', at: iso(1) },
        ]),
        store.write(acceptOps(1n, 5n, 10n, iso(2)).ops),
        store.write(acceptOps(1n, 10n, 15n, iso(3)).ops),
      ]);
      expect([a.ok, b, c.ok, d.ok]).toEqual([true, { ok: false, reason: 'duplicate', op: 3 }, true, true]);
      expect(await store.getChannel(1n)).toMatchObject({ lastAccepted: 15n, vouchers: 3 });
      const events = await store.events({ channelId: 1n, limit: 10 });
      expect(events.map((e) => e.data.cumulative)).toEqual(['5', '10', '15']);
      expect((await store.findReceipt(1n, 10n))?.ts).toBe(iso(2));
    });

    it('applies ledger facts monotonically: deposit, expiry and claimed never decrease, closed never reopens', async () => {
      const { store } = ctx();
      await store.write([
        { op: 'channel.insert', channel: channel(1n, { deposit: 1_000n, expiryLedger: 100, claimed: 10n }) },
      ]);
      const ledger = (fields: Omit<Extract<WriteOp, { op: 'channel.ledger' }>, 'op' | 'channelId'>) =>
        store.write([{ op: 'channel.ledger', channelId: 1n, ...fields }]);
      await ledger({ deposit: 900n, expiryLedger: 50, claimed: 5n });
      expect(await store.getChannel(1n)).toMatchObject({
        deposit: 1_000n,
        expiryLedger: 100,
        claimed: 10n,
        status: 'open',
      });
      await ledger({ deposit: 2_000n });
      await ledger({ expiryLedger: 300 });
      await ledger({ claimed: 400n });
      expect(await store.getChannel(1n)).toMatchObject({
        deposit: 2_000n,
        expiryLedger: 300,
        claimed: 400n,
        status: 'open',
      });
      await ledger({ closed: { at: iso(50), refunded: 1_600n } });
      await ledger({ closed: { at: iso(60), refunded: 1n }, deposit: 3_000n });
      await ledger({ deposit: 100n });
      expect(await store.getChannel(1n)).toEqual(
        channel(1n, {
          deposit: 3_000n,
          expiryLedger: 300,
          claimed: 400n,
          charged: 400n,
          lastAccepted: 400n,
          status: 'closed',
          closedAt: iso(50),
          refunded: 1_600n,
        }),
      );
      expect(
        await store.write([
          { op: 'channel.advance', channelId: 1n, expected: 0n, cumulative: 1n, signature: sig(1n), at: iso(70) },
        ]),
      ).toEqual({ ok: false, reason: 'conflict', op: 0 });
      expect(await store.write([{ op: 'channel.ledger', channelId: 404n, deposit: 1n }])).toEqual({
        ok: true,
        events: [],
      });
      expect(await store.getChannel(404n)).toBeNull();
    });

    it('records claims as maxima of claimed and vouchersClaimed', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n, { lastAccepted: 900n, vouchers: 9 }) }]);
      await store.write([{ op: 'channel.claimed', channelId: 1n, cumulative: 600n, vouchersClaimed: 6 }]);
      await store.write([{ op: 'channel.claimed', channelId: 1n, cumulative: 300n, vouchersClaimed: 3 }]);
      expect(await store.getChannel(1n)).toMatchObject({
        claimed: 600n,
        vouchersClaimed: 6,
        lastAccepted: 900n,
        vouchers: 9,
      });
      await store.write([{ op: 'channel.claimed', channelId: 1n, cumulative: 900n, vouchersClaimed: 9 }]);
      expect(await store.getChannel(1n)).toMatchObject({ claimed: 900n, vouchersClaimed: 9 });
      expect(await store.write([{ op: 'channel.claimed', channelId: 2n, cumulative: 1n, vouchersClaimed: 1 }])).toEqual(
        { ok: true, events: [] },
      );
    });

    it('keeps what the ledger shows claimed as the floor of what was accepted, on insert, ledger facts and claims', async () => {
      const { store } = ctx();
      // A store that lost the vouchers behind a claim: inserted from the ledger with claimed above lastAccepted.
      await store.write([{ op: 'channel.insert', channel: channel(1n, { claimed: 50_000n, lastAccepted: 20_000n }) }]);
      expect(await store.getChannel(1n)).toMatchObject({
        claimed: 50_000n,
        lastAccepted: 50_000n,
        lastSignature: null,
      });
      const advance = (channelId: bigint, expected: bigint, cumulative: bigint): WriteOp => ({
        op: 'channel.advance',
        channelId,
        expected,
        cumulative,
        signature: sig(cumulative),
        at: iso(9),
      });
      expect(await store.write([advance(1n, 20_000n, 30_000n)])).toEqual({ ok: false, reason: 'conflict', op: 0 });
      // Ledger facts and claims above what was accepted raise it, and drop the signature it no longer matches.
      await store.write([{ op: 'channel.insert', channel: channel(2n) }]);
      await store.write([advance(2n, 0n, 20_000n)]);
      await store.write([{ op: 'channel.ledger', channelId: 2n, claimed: 50_000n }]);
      expect(await store.getChannel(2n)).toMatchObject({
        claimed: 50_000n,
        lastAccepted: 50_000n,
        lastSignature: null,
      });
      expect(await store.write([advance(2n, 20_000n, 30_000n)])).toEqual({ ok: false, reason: 'conflict', op: 0 });
      expect(await store.write([advance(2n, 50_000n, 55_000n)])).toEqual({ ok: true, events: [] });
      await store.write([{ op: 'channel.insert', channel: channel(3n) }]);
      await store.write([advance(3n, 0n, 10_000n)]);
      await store.write([{ op: 'channel.claimed', channelId: 3n, cumulative: 40_000n, vouchersClaimed: 1 }]);
      expect(await store.getChannel(3n)).toMatchObject({
        claimed: 40_000n,
        lastAccepted: 40_000n,
        lastSignature: null,
      });
      // A claim at or below what was accepted changes neither the amount nor its signature.
      await store.write([advance(3n, 40_000n, 45_000n)]);
      await store.write([{ op: 'channel.ledger', channelId: 3n, claimed: 45_000n }]);
      await store.write([{ op: 'channel.claimed', channelId: 3n, cumulative: 42_000n, vouchersClaimed: 1 }]);
      expect(await store.getChannel(3n)).toMatchObject({
        claimed: 45_000n,
        lastAccepted: 45_000n,
        lastSignature: sig(45_000n),
      });
    });

    it('lists channels newest first (createdAt, then id), filtered by payer, payee and status', async () => {
      const { store } = ctx();
      await store.write([
        { op: 'channel.insert', channel: channel(1n, { createdAt: iso(1) }) },
        { op: 'channel.insert', channel: channel(2n, { createdAt: iso(3), payee: OTHER_PAYEE }) },
        { op: 'channel.insert', channel: channel(10n, { createdAt: iso(2), payer: OTHER_PAYER }) },
        { op: 'channel.insert', channel: channel(9n, { createdAt: iso(2) }) },
      ]);
      await store.write([{ op: 'channel.ledger', channelId: 9n, closed: { at: iso(5), refunded: 0n } }]);
      const ids = async (filter?: Parameters<typeof store.listChannels>[0]) =>
        (await store.listChannels(filter)).map((c) => c.id);
      expect(await ids()).toEqual([2n, 10n, 9n, 1n]);
      expect(await ids({ payer: PAYER })).toEqual([2n, 9n, 1n]);
      expect(await ids({ payee: PAYEE })).toEqual([10n, 9n, 1n]);
      expect(await ids({ status: 'closed' })).toEqual([9n]);
      expect(await ids({ status: 'open', payer: PAYER, payee: PAYEE })).toEqual([1n]);
      expect(await ids({ payer: 'GNOBODY' })).toEqual([]);
      expect((await store.listChannels())[0]).toEqual(channel(2n, { createdAt: iso(3), payee: OTHER_PAYEE }));
      // Keyset pages walk the same order, ties on createdAt broken by id.
      expect(await ids({ limit: 2 })).toEqual([2n, 10n]);
      expect(await ids({ limit: 2, after: { createdAt: iso(2), id: 10n } })).toEqual([9n, 1n]);
      expect(await ids({ after: { createdAt: iso(2), id: 9n } })).toEqual([1n]);
      expect(await ids({ payer: PAYER, limit: 1, after: { createdAt: iso(3), id: 2n } })).toEqual([9n]);
      expect(await ids({ limit: 0 })).toEqual([]);
      expect(await store.countChannels()).toBe(4);
      expect(await store.countChannels({ payer: PAYER })).toBe(3);
      expect(await store.countChannels({ status: 'open', payee: PAYEE })).toBe(2);
      expect(await store.countChannels({ payer: 'GNOBODY' })).toBe(0);
    });

    it('applies the ops of one call in order: insert then advance then event in a single write', async () => {
      const { store } = ctx();
      const { ops } = acceptOps(3n, 0n, 1_000n);
      const out = await store.write([
        { op: 'channel.insert', channel: channel(3n) },
        ...ops,
        { op: 'event', event: event({ type: 'second' }) },
      ]);
      expect(out.ok && out.events.map((e) => e.type)).toEqual(['voucher.accepted', 'second']);
      expect(out.ok && out.events[0]!.id < out.events[1]!.id).toBe(true);
      expect(await store.getChannel(3n)).toMatchObject({ lastAccepted: 1_000n, vouchers: 1 });
    });
  });
};
