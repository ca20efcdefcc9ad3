// Store contract: extreme values, refused input, many concurrent calls across batches, closing,
// reopening and migrating again.
import { describe, expect, it } from 'vitest';
import type { WriteOp } from '../../src/store/index.js';
import { I128_MAX, PAYEE, PAYER, U64_MAX, acceptOps, channel, event, iso, receipt, sig } from './builders.js';
import type { Section } from './contract-context.js';

export const lifecycleSection: Section = (ctx) => {
  describe('values and input', () => {
    it('round-trips the i128 maximum in every amount and the u64 maximum as a channel id', async () => {
      const { store } = ctx();
      const big = channel(U64_MAX, {
        deposit: I128_MAX,
        claimed: I128_MAX - 2n,
        charged: I128_MAX - 1n,
        lastAccepted: I128_MAX - 1n,
        expiryLedger: 4_294_967_295,
      });
      await store.write([{ op: 'channel.insert', channel: big }]);
      expect(await store.getChannel(U64_MAX)).toEqual(big);
      const out = await store.write(acceptOps(U64_MAX, I128_MAX - 1n, I128_MAX).ops);
      expect(out.ok).toBe(true);
      await store.write([
        { op: 'channel.ledger', channelId: U64_MAX, claimed: I128_MAX, closed: { at: iso(9), refunded: I128_MAX } },
      ]);
      const read = await store.getChannel(U64_MAX);
      expect(read).toMatchObject({
        lastAccepted: I128_MAX,
        charged: I128_MAX,
        claimed: I128_MAX,
        refunded: I128_MAX,
        status: 'closed',
        vouchers: 1,
      });
      expect(typeof read?.deposit).toBe('bigint');
      expect(await store.listChannels({ payer: PAYER })).toEqual([read]);
      const r = acceptOps(U64_MAX, I128_MAX - 1n, I128_MAX).receipt;
      expect(await store.findReceipt(U64_MAX, I128_MAX)).toEqual(r);
      expect(await store.listReceipts({ channelId: U64_MAX, limit: 5 })).toEqual([
        { receipt: r, position: expect.any(Number) as number },
      ]);
      const [e] = await store.events({ channelId: U64_MAX, limit: 5 });
      expect(e?.channelId).toBe(U64_MAX);
    });

    it('tells channel ids apart that differ only past 2^53', async () => {
      const { store } = ctx();
      const a = 9_007_199_254_740_993n;
      await store.write([
        { op: 'channel.insert', channel: channel(a) },
        { op: 'channel.insert', channel: channel(a - 1n, { payer: PAYEE }) },
      ]);
      expect((await store.getChannel(a))?.payer).toBe(PAYER);
      expect((await store.getChannel(a - 1n))?.payer).toBe(PAYEE);
    });

    it('rejects out-of-range amounts and ids without storing anything or failing the calls beside it', async () => {
      const { store } = ctx();
      const bad: WriteOp[][] = [
        [{ op: 'channel.insert', channel: channel(1n, { deposit: I128_MAX + 1n }) }],
        [{ op: 'channel.insert', channel: channel(U64_MAX + 1n) }],
        [{ op: 'channel.insert', channel: channel(1n, { claimed: -1n }) }],
        [
          {
            op: 'channel.advance',
            channelId: 1n,
            expected: 0n,
            cumulative: I128_MAX + 1n,
            signature: sig(1n),
            at: iso(1),
          },
        ],
        [
          { op: 'meta.set', key: 'x', value: 'y' },
          { op: 'event', event: event({ channelId: -1n }) },
        ],
      ];
      const good = store.write([{ op: 'channel.insert', channel: channel(2n) }]);
      for (const ops of bad) await expect(store.write(ops)).rejects.toThrow(RangeError);
      await expect(good).resolves.toEqual({ ok: true, events: [] });
      expect(await store.getChannel(1n)).toBeNull();
      expect(await store.getMeta('x')).toBeNull();
    });

    it('rejects a call whose event data is not JSON, and only that call', async () => {
      const { store } = ctx();
      const bad = store.write([
        { op: 'meta.set', key: 'a', value: '1' },
        { op: 'event', event: event({ data: { amount: 5n } }) },
      ]);
      const good = store.write([{ op: 'meta.set', key: 'b', value: '2' }]);
      await expect(bad).rejects.toThrow(TypeError);
      await expect(good).resolves.toMatchObject({ ok: true });
      expect(await store.getMeta('a')).toBeNull();
      expect(await store.getMeta('b')).toBe('2');
      expect(await store.lastEventId()).toBe(0);
    });

    it('accepts a call with no ops', async () => {
      expect(await ctx().store.write([])).toEqual({ ok: true, events: [] });
    });
  });

  describe('concurrency and lifecycle', () => {
    it('settles every one of 600 concurrent calls with its own outcome', async () => {
      const { store } = ctx();
      await store.write(
        Array.from({ length: 20 }, (_, i): WriteOp => ({ op: 'channel.insert', channel: channel(BigInt(i + 1)) })),
      );
      // 20 channels × 30 vouchers; each voucher appears twice, so half of the calls must conflict.
      const calls = Array.from({ length: 600 }, (_, i) => {
        const ch = BigInt((i % 20) + 1);
        const step = BigInt(Math.floor(i / 40));
        return store.write([
          {
            op: 'channel.advance',
            channelId: ch,
            expected: step * 10n,
            cumulative: step * 10n + 10n,
            signature: sig(step),
            at: iso(i),
          },
        ]);
      });
      const results = await Promise.all(calls);
      // Whatever the batching, every acknowledged advance is in the stored state and nothing else is.
      const channels = await store.listChannels();
      const accepted = channels.reduce((n, c) => n + c.vouchers, 0);
      expect(results.filter((r) => r.ok)).toHaveLength(accepted);
      expect(accepted).toBeGreaterThanOrEqual(20);
      for (const c of channels) expect(c.lastAccepted).toBe(BigInt(c.vouchers) * 10n);
    });

    it('commits calls still queued when closed, then refuses new ones', async () => {
      const { store, reopen } = ctx();
      const pending = store.write([{ op: 'meta.set', key: 'late', value: 'yes' }]);
      await store.close();
      await expect(pending).resolves.toEqual({ ok: true, events: [] });
      await expect(store.write([{ op: 'meta.set', key: 'x', value: 'y' }])).rejects.toThrow(/closed/);
      const again = await reopen();
      expect(await again.getMeta('late')).toBe('yes');
    });

    it('keeps everything across close and reopen, and continues the event ids', async () => {
      const { store, reopen } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      const accepted = acceptOps(1n, 0n, 5_000n);
      const first = await store.write(accepted.ops);
      await store.write([
        { op: 'idempotency', key: 'k', fingerprint: 'f', response: 'r', at: iso(1) },
        { op: 'meta.set', key: 'cursor', value: '7' },
      ]);
      const before = { channel: await store.getChannel(1n), events: await store.events({ limit: 10 }) };
      const again = await reopen();
      expect(await again.getChannel(1n)).toEqual(before.channel);
      expect(await again.events({ limit: 10 })).toEqual(before.events);
      expect(await again.getReceipt(accepted.receipt.id)).toEqual(accepted.receipt);
      expect(await again.getIdempotent('k')).toEqual({ key: 'k', fingerprint: 'f', response: 'r', at: iso(1) });
      expect(await again.getMeta('cursor')).toBe('7');
      const next = await again.write(acceptOps(1n, 5_000n, 6_000n).ops);
      expect(next.ok && first.ok && next.events[0]!.id > first.events[0]!.id).toBe(true);
    });

    it('migrates again as a no-op', async () => {
      const { store } = ctx();
      await store.write([
        { op: 'channel.insert', channel: channel(1n) },
        { op: 'receipt', receipt: receipt(1n, 1n) },
      ]);
      await store.migrate();
      await store.migrate();
      expect(await store.getChannel(1n)).toEqual(channel(1n));
      expect(await store.listReceipts({ limit: 5 })).toHaveLength(1);
      expect((await store.write([{ op: 'event', event: event() }])).ok).toBe(true);
    });
  });
};
