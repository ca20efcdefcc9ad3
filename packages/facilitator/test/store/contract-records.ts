// Store contract: receipts stored exactly as issued, idempotency keys, meta.
import { describe, expect, it } from 'vitest';
import { receiptBytes, verifyReceipt } from '@svc/core';
import { OTHER_PAYEE, SIGNER, acceptOps, channel, iso, receipt } from './builders.js';
import type { WriteOp } from '../../src/store/index.js';
import type { Section } from './contract-context.js';

export const recordSection: Section = (ctx) => {
  describe('receipts', () => {
    it('returns a receipt exactly as issued: same fields, same order, still verifying', async () => {
      const { store } = ctx();
      const r = receipt(42n, 135_000n);
      expect(await store.write([{ op: 'receipt', receipt: r }])).toEqual({ ok: true, events: [] });
      const got = await store.getReceipt(r.id);
      expect(got).toEqual(r);
      expect(JSON.stringify(got)).toBe(JSON.stringify(r));
      expect(receiptBytes(got!)).toEqual(receiptBytes(r));
      expect(verifyReceipt(got, [SIGNER.address])).toEqual({ ok: true });
      expect(await store.getReceipt('0'.repeat(64))).toBeNull();
    });

    it('ignores a second copy of a receipt id', async () => {
      const { store } = ctx();
      const r = receipt(1n, 10n);
      await store.write([{ op: 'receipt', receipt: r }]);
      expect(await store.write([{ op: 'receipt', receipt: { ...r, resource: 'https://other.example/' } }])).toEqual({
        ok: true,
        events: [],
      });
      expect(await store.getReceipt(r.id)).toEqual(r);
      expect(await store.listReceipts({ limit: 10 })).toHaveLength(1);
    });

    it('finds the receipt issued for a channel at a cumulative amount', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(5n) }]);
      const a = acceptOps(5n, 0n, 5_000n);
      const b = acceptOps(5n, 5_000n, 10_000n);
      await store.write(a.ops);
      await store.write(b.ops);
      await store.write([{ op: 'receipt', receipt: receipt(6n, 5_000n) }]);
      expect(await store.findReceipt(5n, 5_000n)).toEqual(a.receipt);
      expect(await store.findReceipt(5n, 10_000n)).toEqual(b.receipt);
      expect(await store.findReceipt(5n, 7_000n)).toBeNull();
      expect(await store.findReceipt(7n, 5_000n)).toBeNull();
    });

    it('lists receipts newest first with increasing positions as cursors, filtered by payee and channel', async () => {
      const { store } = ctx();
      const issued = [
        receipt(1n, 10n, { ts: iso(1) }),
        receipt(2n, 10n, { ts: iso(2), payee: OTHER_PAYEE }),
        receipt(1n, 20n, { ts: iso(3) }),
        receipt(3n, 10n, { ts: iso(4) }),
        receipt(1n, 30n, { ts: iso(5), payee: OTHER_PAYEE }),
      ];
      for (const r of issued) await store.write([{ op: 'receipt', receipt: r }]);
      const all = await store.listReceipts({ limit: 10 });
      expect(all.map((x) => x.receipt)).toEqual([...issued].reverse());
      const positions = all.map((x) => x.position);
      expect(positions.every((p, i) => i === 0 || p < positions[i - 1]!)).toBe(true);
      const page1 = await store.listReceipts({ limit: 2 });
      const page2 = await store.listReceipts({ limit: 2, before: page1.at(-1)!.position });
      const page3 = await store.listReceipts({ limit: 2, before: page2.at(-1)!.position });
      expect([...page1, ...page2, ...page3]).toEqual(all);
      expect(await store.listReceipts({ limit: 2, before: all.at(-1)!.position })).toEqual([]);
      const byPayee = await store.listReceipts({ payee: OTHER_PAYEE, limit: 10 });
      expect(byPayee.map((x) => x.receipt)).toEqual([issued[4], issued[1]]);
      const byChannel = await store.listReceipts({ channelId: 1n, limit: 10 });
      expect(byChannel.map((x) => x.receipt)).toEqual([issued[4], issued[2], issued[0]]);
      const both = await store.listReceipts({ channelId: 1n, payee: OTHER_PAYEE, limit: 10 });
      expect(both.map((x) => x.receipt)).toEqual([issued[4]]);
      const paged = await store.listReceipts({ channelId: 1n, limit: 10, before: byChannel[0]!.position });
      expect(paged.map((x) => x.receipt)).toEqual([issued[2], issued[0]]);
    });
  });

  describe('idempotency', () => {
    it('refuses a second response under a key as a duplicate and keeps the first', async () => {
      const { store } = ctx();
      const first = { key: 'req-1', fingerprint: 'f1', response: '{"isValid":true}', at: iso(1) };
      expect(await store.write([{ op: 'idempotency', ...first }])).toEqual({ ok: true, events: [] });
      expect(
        await store.write([
          { op: 'meta.set', key: 'm', value: 'x' },
          { op: 'idempotency', ...first, response: 'other', at: iso(2) },
        ]),
      ).toEqual({
        ok: false,
        reason: 'duplicate',
        op: 1,
      });
      expect(await store.getIdempotent('req-1')).toEqual(first);
      expect(await store.getMeta('m')).toBeNull();
      expect(await store.getIdempotent('req-2')).toBeNull();
    });

    it('lets exactly one of many concurrent calls claim a key', async () => {
      const { store } = ctx();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.write([{ op: 'idempotency', key: 'k', fingerprint: `f${i}`, response: `r${i}`, at: iso(i) }]),
        ),
      );
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect((await store.getIdempotent('k'))?.response).toBe(`r${winners[0]}`);
    });

    it('takes a record once, only with its fingerprint, and rolls the call back when it cannot', async () => {
      const { store } = ctx();
      await store.write([{ op: 'idempotency', key: 'mark', fingerprint: 'f1', response: 'r', at: iso(1) }]);
      const take = (fingerprint: string): WriteOp => ({ op: 'idempotency.take', key: 'mark', fingerprint });
      expect(await store.write([{ op: 'meta.set', key: 'm', value: 'x' }, take('other')])).toEqual({
        ok: false,
        reason: 'conflict',
        op: 1,
      });
      expect(await store.getMeta('m')).toBeNull();
      expect(await store.getIdempotent('mark')).not.toBeNull();
      const results = await Promise.all(Array.from({ length: 10 }, () => store.write([take('f1')])));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(await store.getIdempotent('mark')).toBeNull();
      // Taken, the key is free again.
      expect(
        await store.write([{ op: 'idempotency', key: 'mark', fingerprint: 'f2', response: '', at: iso(2) }]),
      ).toEqual({ ok: true, events: [] });
    });

    it('upgrades a version-4 database once: its idempotency records stay, and a key is still taken once', async () => {
      const old = await ctx().legacy(4);
      expect(await old.versions()).toEqual([1, 2, 3, 4]);
      const kept = { key: 'verify:old', fingerprint: 'f', response: 'x'.repeat(1500), at: iso(1) };
      expect(await old.store.write([{ op: 'idempotency', ...kept }])).toEqual({ ok: true, events: [] });
      const store = await old.upgrade();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await store.getIdempotent('verify:old')).toEqual(kept);
      expect(await store.write([{ op: 'idempotency', ...kept, response: 'again' }])).toEqual({
        ok: false,
        reason: 'duplicate',
        op: 0,
      });
      const fresh = { key: 'verify:new', fingerprint: 'g', response: 'y'.repeat(1500), at: iso(2) };
      expect(await store.write([{ op: 'idempotency', ...fresh }])).toEqual({ ok: true, events: [] });
      expect(await store.getIdempotent('verify:new')).toEqual(fresh);
    });
  });

  describe('meta', () => {
    it('sets, reads and overwrites values', async () => {
      const { store } = ctx();
      expect(await store.getMeta('cursor')).toBeNull();
      await store.write([{ op: 'meta.set', key: 'cursor', value: '100' }]);
      expect(await store.getMeta('cursor')).toBe('100');
      await store.write([
        { op: 'meta.set', key: 'cursor', value: '250' },
        { op: 'meta.set', key: 'other', value: '' },
      ]);
      expect(await store.getMeta('cursor')).toBe('250');
      expect(await store.getMeta('other')).toBe('');
    });

    it('meta.init sets a value only where there is none: the first writer wins, later ones change nothing', async () => {
      const { store } = ctx();
      expect(await store.write([{ op: 'meta.init', key: 'first', value: 'a' }])).toEqual({ ok: true, events: [] });
      expect(await store.getMeta('first')).toBe('a');
      const [b, c] = await Promise.all([
        store.write([{ op: 'meta.init', key: 'first', value: 'b' }]),
        store.write([{ op: 'meta.init', key: 'first', value: 'c' }]),
      ]);
      expect([b.ok, c.ok]).toEqual([true, true]);
      expect(await store.getMeta('first')).toBe('a');
      await store.write([{ op: 'meta.set', key: 'first', value: 'd' }]);
      expect(await store.getMeta('first')).toBe('d');
    });
  });
};
