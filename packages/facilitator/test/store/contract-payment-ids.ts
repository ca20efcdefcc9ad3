// Store contract: the `payment.id` records of x402's payment-identifier extension — one live record
// per (payTo, id), kept until it expires, refused as a duplicate while it lives, durable.
import { describe, expect, it } from 'vitest';
import { OTHER_PAYEE, PAYEE, iso } from './builders.js';
import type { WriteOp } from '../../src/store/index.js';
import type { Section } from './contract-context.js';

const ID = 'pay_0123456789abcdef0123456789abcdef';

function record(n: number, over: Partial<Extract<WriteOp, { op: 'payment.id' }>> = {}): WriteOp {
  return {
    op: 'payment.id',
    payTo: PAYEE,
    id: ID,
    fingerprint: `f${n}`,
    response: `{"n":${n}}`,
    at: iso(n),
    expiresAt: iso(n + 100),
    ...over,
  };
}

export const paymentIdSection: Section = (ctx) => {
  describe('payment ids', () => {
    it('keeps one live record per (payTo, id), refuses a second as a duplicate and rolls its call back', async () => {
      const { store } = ctx();
      expect(await store.write([record(1)])).toEqual({ ok: true, events: [] });
      expect(await store.write([{ op: 'meta.set', key: 'm', value: 'x' }, record(2)])).toEqual({
        ok: false,
        reason: 'duplicate',
        op: 1,
      });
      expect(await store.getMeta('m')).toBeNull();
      expect(await store.getPaymentId(PAYEE, ID, iso(2))).toEqual({
        payTo: PAYEE,
        id: ID,
        fingerprint: 'f1',
        response: '{"n":1}',
        at: iso(1),
        expiresAt: iso(101),
      });
      // Another payee's buyer may use the same id: the records are the payee's own.
      expect(await store.write([record(3, { payTo: OTHER_PAYEE })])).toEqual({ ok: true, events: [] });
      expect((await store.getPaymentId(OTHER_PAYEE, ID, iso(3)))?.fingerprint).toBe('f3');
      expect(await store.getPaymentId(PAYEE, 'pay_ffffffffffffffffffff', iso(3))).toBeNull();
    });

    it('lets exactly one of many concurrent calls claim an id', async () => {
      const { store } = ctx();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => store.write([record(i % 3)])));
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect((await store.getPaymentId(PAYEE, ID, iso(5)))?.fingerprint).toBe(`f${winners[0]! % 3}`);
    });

    it('forgets a record once it expires: not read, and the id is free again', async () => {
      const { store } = ctx();
      await store.write([record(1)]);
      expect(await store.getPaymentId(PAYEE, ID, iso(100))).not.toBeNull();
      expect(await store.getPaymentId(PAYEE, ID, iso(101))).toBeNull();
      expect(await store.write([record(100)])).toEqual({ ok: false, reason: 'duplicate', op: 0 });
      expect(await store.write([record(101)])).toEqual({ ok: true, events: [] });
      expect((await store.getPaymentId(PAYEE, ID, iso(102)))?.fingerprint).toBe('f101');
    });

    it('sweeps expired records of other ids as it writes', async () => {
      const { store } = ctx();
      const other = 'pay_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
      await store.write([record(1, { id: other })]);
      await store.write([record(200)]);
      // Read at a time before the first one expired: it is gone all the same.
      expect(await store.getPaymentId(PAYEE, other, iso(2))).toBeNull();
      expect(await store.getPaymentId(PAYEE, ID, iso(201))).not.toBeNull();
    });

    it('is durable across a reopen', async () => {
      await ctx().store.write([record(1)]);
      const store = await ctx().reopen();
      expect((await store.getPaymentId(PAYEE, ID, iso(2)))?.response).toBe('{"n":1}');
    });

    it('refuses a malformed id or time before writing anything', async () => {
      const { store } = ctx();
      await expect(store.write([record(1, { id: 'short' })])).rejects.toThrow(/payment id/);
      await expect(store.write([record(1, { expiresAt: 'tomorrow' })])).rejects.toThrow(/expiresAt/);
      expect(await store.getPaymentId(PAYEE, ID, iso(2))).toBeNull();
    });
  });
};
