// Store contract: batch-settlement on a channel — charged beside lastAccepted, the reservation a
// verified payment holds, charges, releases, refunds, the ledger's floor, and the version-6 upgrade.
import { describe, expect, it } from 'vitest';
import type { WriteOp } from '../../src/store/index.js';
import {
  I128_MAX,
  SIGNER,
  acceptOps,
  channel,
  chargeOp,
  event,
  iso,
  legacyChannelSql,
  receipt,
  reserveOp,
  sig,
} from './builders.js';
import type { Section } from './contract-context.js';

const OK = { ok: true, events: [] };
const conflict = (op = 0) => ({ ok: false, reason: 'conflict', op });

type AdvanceOp = Extract<WriteOp, { op: 'channel.advance' }>;

const advance = (
  channelId: bigint,
  expected: bigint,
  cumulative: bigint,
  over: Partial<AdvanceOp> = {},
): AdvanceOp => ({
  op: 'channel.advance',
  channelId,
  expected,
  cumulative,
  signature: sig(cumulative),
  at: iso(30),
  ...over,
});

/** An op as text for a failure message (JSON has no bigint). */
const shown = (op: WriteOp): string => JSON.stringify(op, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

export const chargeSection: Section = (ctx) => {
  describe('channels: batch-settlement records', () => {
    it('stores the authorizer, refund nonce, charged and reservation of an inserted channel as given', async () => {
      const { store, reopen } = ctx();
      const full = channel(1n, {
        claimed: 1_000n,
        charged: 4_000n,
        lastAccepted: 5_000n,
        lastSignature: sig(5_000n),
        receiverAuthorizer: SIGNER.address,
        refundNonce: 3,
        reservation: { fingerprint: 'payment-a', until: iso(60) },
      });
      await store.write([{ op: 'channel.insert', channel: full }]);
      expect(await store.getChannel(1n)).toEqual(full);
      expect(await store.listChannels()).toEqual([full]);
      expect(await (await reopen()).getChannel(1n)).toEqual(full);
    });

    it('inserts with claimed ≤ charged ≤ lastAccepted: the ledger floors charged, and charged floors lastAccepted', async () => {
      const { store } = ctx();
      await store.write([
        // Claimed above charged: charged is lifted, lastAccepted and its signature stay.
        {
          op: 'channel.insert',
          channel: channel(1n, { claimed: 3_000n, charged: 1_000n, lastAccepted: 5_000n, lastSignature: sig(5_000n) }),
        },
        // Charged above lastAccepted: nothing at or below it is accepted again, and the signature no longer names it.
        {
          op: 'channel.insert',
          channel: channel(2n, { charged: 7_000n, lastAccepted: 5_000n, lastSignature: sig(5_000n) }),
        },
        // Claimed above both.
        {
          op: 'channel.insert',
          channel: channel(3n, { claimed: 9_000n, charged: 1_000n, lastAccepted: 5_000n, lastSignature: sig(5_000n) }),
        },
      ]);
      expect(await store.getChannel(1n)).toMatchObject({
        claimed: 3_000n,
        charged: 3_000n,
        lastAccepted: 5_000n,
        lastSignature: sig(5_000n),
      });
      expect(await store.getChannel(2n)).toMatchObject({
        claimed: 0n,
        charged: 7_000n,
        lastAccepted: 7_000n,
        lastSignature: null,
      });
      expect(await store.getChannel(3n)).toMatchObject({
        claimed: 9_000n,
        charged: 9_000n,
        lastAccepted: 9_000n,
        lastSignature: null,
      });
    });

    it('round-trips the i128 maximum as charged and the largest refund nonce', async () => {
      const { store } = ctx();
      const big = channel(1n, {
        claimed: I128_MAX,
        charged: I128_MAX,
        lastAccepted: I128_MAX,
        refundNonce: Number.MAX_SAFE_INTEGER,
      });
      await store.write([{ op: 'channel.insert', channel: big }]);
      expect(await store.getChannel(1n)).toEqual(big);
    });

    it('refuses malformed batch-settlement fields and ops without storing anything', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      const bad: [WriteOp, typeof RangeError | typeof TypeError][] = [
        [{ op: 'channel.insert', channel: channel(2n, { charged: -1n }) }, RangeError],
        [{ op: 'channel.insert', channel: channel(2n, { charged: I128_MAX + 1n }) }, RangeError],
        [{ op: 'channel.insert', channel: channel(2n, { receiverAuthorizer: 'GNOTANADDRESS' }) }, TypeError],
        [{ op: 'channel.insert', channel: channel(2n, { refundNonce: -1 }) }, RangeError],
        [{ op: 'channel.insert', channel: channel(2n, { refundNonce: 1.5 }) }, RangeError],
        [
          { op: 'channel.insert', channel: channel(2n, { reservation: { fingerprint: 'a', until: 'later' } }) },
          TypeError,
        ],
        [
          { op: 'channel.insert', channel: channel(2n, { reservation: { fingerprint: '', until: iso(1) } }) },
          TypeError,
        ],
        [advance(1n, 0n, 5n, { expectedCharged: -1n }), RangeError],
        [{ ...reserveOp(1n, 0n, 'payment-a'), until: '2026-11-22 10:01:00' }, TypeError],
        [{ ...reserveOp(1n, 0n, 'payment-a'), at: 'now' }, TypeError],
        [reserveOp(1n, 0n, 'x'.repeat(513)), RangeError],
        [reserveOp(1n, 0n, 'nul\0'), TypeError],
        [chargeOp(1n, 0n, -5n, 10n), RangeError],
        [chargeOp(1n, 0n, 5n, I128_MAX + 1n), RangeError],
        [chargeOp(1n, 0n, 5n, 10n, { at: 'now' }), TypeError],
        [chargeOp(1n, 0n, 5n, 10n, { fingerprint: '' }), TypeError],
        [{ op: 'channel.release', channelId: -1n, fingerprint: 'payment-a' }, RangeError],
        [{ op: 'channel.refunded', channelId: 1n, refundNonce: -1, deposit: 5n }, RangeError],
        [{ op: 'channel.refunded', channelId: 1n, refundNonce: 1, deposit: -5n }, RangeError],
      ];
      for (const [op, type] of bad) await expect(store.write([op]), shown(op)).rejects.toThrow(type);
      expect(await store.getChannel(1n)).toEqual(channel(1n));
      expect(await store.getChannel(2n)).toBeNull();
    });
  });

  describe('channels: advance beside batch-settlement', () => {
    it('advances only from the expected charged: expectedCharged when given, else the expected lastAccepted', async () => {
      const { store } = ctx();
      // A batch-settlement charge left charged below lastAccepted.
      await store.write([
        {
          op: 'channel.insert',
          channel: channel(1n, { charged: 3_000n, lastAccepted: 5_000n, lastSignature: sig(5_000n), vouchers: 2 }),
        },
      ]);
      expect(await store.write([advance(1n, 5_000n, 8_000n)])).toEqual(conflict());
      expect(await store.write([advance(1n, 5_000n, 8_000n, { expectedCharged: 4_000n })])).toEqual(conflict());
      expect(await store.write([advance(1n, 4_000n, 8_000n, { expectedCharged: 3_000n })])).toEqual(conflict());
      expect(await store.getChannel(1n)).toMatchObject({ charged: 3_000n, lastAccepted: 5_000n, vouchers: 2 });
      expect(await store.write([advance(1n, 5_000n, 8_000n, { expectedCharged: 3_000n })])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({
        charged: 8_000n,
        lastAccepted: 8_000n,
        lastSignature: sig(8_000n),
        vouchers: 3,
        lastVoucherAt: iso(30),
      });
    });

    it('refuses an advance while a reservation is live, and ignores one whose time is up', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      const reserve = reserveOp(1n, 0n, 'payment-a', iso(10)); // live until iso(70)
      expect(await store.write([reserve])).toEqual(OK);
      expect(await store.write([advance(1n, 0n, 5_000n, { at: iso(30) })])).toEqual(conflict());
      expect(await store.write([advance(1n, 0n, 5_000n, { at: iso(69) })])).toEqual(conflict());
      expect(await store.getChannel(1n)).toMatchObject({ charged: 0n, lastAccepted: 0n, vouchers: 0 });
      // At `until` the reservation is over.
      expect(await store.write([advance(1n, 0n, 5_000n, { at: iso(70) })])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ charged: 5_000n, lastAccepted: 5_000n, vouchers: 1 });
    });
  });

  describe('channels: reservations', () => {
    it('reserves an open channel on the expected charged, and refuses a stale charged, a closed or a missing channel', async () => {
      const { store } = ctx();
      await store.write([
        { op: 'channel.insert', channel: channel(1n, { charged: 2_000n, lastAccepted: 2_000n }) },
        { op: 'channel.insert', channel: channel(2n, { status: 'closed', closedAt: iso(1), refunded: 0n }) },
      ]);
      expect(await store.write([reserveOp(1n, 1_000n, 'payment-a')])).toEqual(conflict());
      expect(await store.write([reserveOp(2n, 0n, 'payment-a')])).toEqual(conflict());
      expect(await store.write([reserveOp(3n, 0n, 'payment-a')])).toEqual(conflict());
      expect((await store.getChannel(1n))?.reservation).toBeNull();
      expect((await store.getChannel(2n))?.reservation).toBeNull();
      expect(await store.write([reserveOp(1n, 2_000n, 'payment-a', iso(10))])).toEqual(OK);
      expect(await store.getChannel(1n)).toEqual(
        channel(1n, {
          charged: 2_000n,
          lastAccepted: 2_000n,
          reservation: { fingerprint: 'payment-a', until: iso(70) },
        }),
      );
    });

    it('lets the same payment reserve again, and another only once the reservation is over', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      await store.write([reserveOp(1n, 0n, 'payment-a', iso(10))]);
      // The same payment verified again: its reservation is renewed.
      expect(await store.write([reserveOp(1n, 0n, 'payment-a', iso(40))])).toEqual(OK);
      expect((await store.getChannel(1n))?.reservation).toEqual({ fingerprint: 'payment-a', until: iso(100) });
      expect(await store.write([reserveOp(1n, 0n, 'payment-b', iso(99))])).toEqual(conflict());
      expect((await store.getChannel(1n))?.reservation).toEqual({ fingerprint: 'payment-a', until: iso(100) });
      expect(await store.write([reserveOp(1n, 0n, 'payment-b', iso(100))])).toEqual(OK);
      expect((await store.getChannel(1n))?.reservation).toEqual({ fingerprint: 'payment-b', until: iso(160) });
    });

    it('releases a reservation only for its own payment; a release of anything else changes nothing', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      await store.write([reserveOp(1n, 0n, 'payment-a')]);
      const release = (fingerprint: string, channelId = 1n): WriteOp => ({
        op: 'channel.release',
        channelId,
        fingerprint,
      });
      expect(await store.write([release('payment-b')])).toEqual(OK);
      expect((await store.getChannel(1n))?.reservation).toEqual({ fingerprint: 'payment-a', until: iso(70) });
      expect(await store.write([release('payment-a', 2n)])).toEqual(OK);
      expect(await store.write([release('payment-a')])).toEqual(OK);
      expect(await store.getChannel(1n)).toEqual(channel(1n));
      expect(await store.write([release('payment-a')])).toEqual(OK);
      // Released, the channel takes another payment at once.
      expect(await store.write([reserveOp(1n, 0n, 'payment-b', iso(11))])).toEqual(OK);
    });

    it('gives the channel to exactly one of 30 concurrent reservations by different payments', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => store.write([reserveOp(1n, 0n, `payment-${i}`)])),
      );
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 29 }, () => conflict()));
      expect((await store.getChannel(1n))?.reservation?.fingerprint).toBe(`payment-${winners[0]}`);
    });
  });

  describe('channels: charges', () => {
    it('charges on the expected charged: the ceiling becomes the voucher to claim when above lastAccepted', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      expect(await store.write([chargeOp(1n, 0n, 1_000n, 1_000n, { at: iso(20) })])).toEqual(OK);
      expect(await store.getChannel(1n)).toEqual(
        channel(1n, {
          charged: 1_000n,
          lastAccepted: 1_000n,
          lastSignature: sig(1_000n),
          vouchers: 1,
          lastVoucherAt: iso(20),
        }),
      );
      // Charged less than the ceiling (an x402 settlement override): charged grows by the charge only.
      expect(await store.write([chargeOp(1n, 1_000n, 400n, 2_000n, { at: iso(21) })])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({
        charged: 1_400n,
        lastAccepted: 2_000n,
        lastSignature: sig(2_000n),
        vouchers: 2,
        lastVoucherAt: iso(21),
      });
      // A ceiling at or below the highest accepted one keeps that voucher (and its signature) as the one to claim.
      expect(await store.write([chargeOp(1n, 1_400n, 100n, 1_500n, { at: iso(22) })])).toEqual(OK);
      expect(await store.write([chargeOp(1n, 1_500n, 500n, 2_000n, { at: iso(23), signature: sig(7n) })])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({
        charged: 2_000n,
        lastAccepted: 2_000n,
        lastSignature: sig(2_000n),
        vouchers: 4,
        lastVoucherAt: iso(23),
      });
    });

    it('refuses a charge on a stale charged, above its ceiling, or on a closed or missing channel', async () => {
      const { store } = ctx();
      await store.write([
        {
          op: 'channel.insert',
          channel: channel(1n, { charged: 1_000n, lastAccepted: 1_500n, lastSignature: sig(1_500n), vouchers: 1 }),
        },
        { op: 'channel.insert', channel: channel(2n, { status: 'closed', closedAt: iso(1), refunded: 0n }) },
      ]);
      expect(await store.write([chargeOp(1n, 900n, 100n, 2_000n)])).toEqual(conflict());
      expect(await store.write([chargeOp(1n, 1_500n, 100n, 2_000n)])).toEqual(conflict());
      expect(await store.write([chargeOp(1n, 1_000n, 600n, 1_500n)])).toEqual(conflict());
      expect(await store.write([chargeOp(2n, 0n, 100n, 100n)])).toEqual(conflict());
      expect(await store.write([chargeOp(3n, 0n, 100n, 100n)])).toEqual(conflict());
      expect(await store.getChannel(1n)).toEqual(
        channel(1n, { charged: 1_000n, lastAccepted: 1_500n, lastSignature: sig(1_500n), vouchers: 1 }),
      );
      expect(await store.getChannel(3n)).toBeNull();
      // Exactly at the ceiling is allowed.
      expect(await store.write([chargeOp(1n, 1_000n, 500n, 1_500n)])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ charged: 1_500n, lastAccepted: 1_500n, vouchers: 2 });
    });

    it('charges a reserved channel only for the payment that holds it, and clears the reservation', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n) }]);
      await store.write([reserveOp(1n, 0n, 'payment-a', iso(10))]); // until iso(70)
      expect(await store.write([chargeOp(1n, 0n, 1_000n, 1_000n, { fingerprint: 'payment-b', at: iso(30) })])).toEqual(
        conflict(),
      );
      expect(await store.getChannel(1n)).toMatchObject({
        charged: 0n,
        vouchers: 0,
        reservation: { fingerprint: 'payment-a' },
      });
      expect(await store.write([chargeOp(1n, 0n, 1_000n, 1_000n, { fingerprint: 'payment-a', at: iso(30) })])).toEqual(
        OK,
      );
      expect(await store.getChannel(1n)).toMatchObject({ charged: 1_000n, vouchers: 1, reservation: null });
      // A reservation that is over holds nothing: another payment's charge goes through, and clears it.
      await store.write([reserveOp(1n, 1_000n, 'payment-c', iso(40))]); // until iso(100)
      expect(
        await store.write([chargeOp(1n, 1_000n, 1_000n, 2_000n, { fingerprint: 'payment-d', at: iso(100) })]),
      ).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ charged: 2_000n, vouchers: 2, reservation: null });
      // Without any reservation (settled without a verify), any payment may charge.
      expect(
        await store.write([chargeOp(1n, 2_000n, 1_000n, 3_000n, { fingerprint: 'payment-e', at: iso(101) })]),
      ).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ charged: 3_000n, lastAccepted: 3_000n, vouchers: 3 });
    });

    it('gives exactly one winner among 40 concurrent charges on the same charged', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n, { charged: 5_000n, lastAccepted: 5_000n }) }]);
      const calls = Array.from({ length: 40 }, (_, i) => {
        const ceiling = 6_000n + BigInt(i);
        const r = receipt(1n, 6_000n, { amount: 1_000n, ts: iso(200 + i) });
        return store.write([
          chargeOp(1n, 5_000n, 1_000n, ceiling, { fingerprint: `payment-${i}`, at: iso(200 + i) }),
          { op: 'receipt', receipt: r },
          { op: 'event', event: event({ ts: iso(200 + i), channelId: 1n, data: { i } }) },
        ]);
      });
      const results = await Promise.all(calls);
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 39 }, () => conflict()));
      const w = BigInt(winners[0]!);
      expect(await store.getChannel(1n)).toMatchObject({
        charged: 6_000n,
        lastAccepted: 6_000n + w,
        lastSignature: sig(6_000n + w),
        vouchers: 1,
      });
      expect(await store.events({ channelId: 1n, limit: 100 })).toHaveLength(1);
      expect(await store.listReceipts({ channelId: 1n, limit: 100 })).toHaveLength(1);
    });

    it('rolls back a charge with the rest of its call, and keeps the reservation for a retry', async () => {
      const { store } = ctx();
      await store.write([
        { op: 'channel.insert', channel: channel(1n) },
        { op: 'idempotency', key: 'taken', fingerprint: 'f', response: 'r', at: iso(0) },
      ]);
      await store.write([reserveOp(1n, 0n, 'payment-a')]);
      const r = receipt(1n, 1_000n, { amount: 1_000n });
      const failed = await store.write([
        chargeOp(1n, 0n, 1_000n, 1_000n),
        { op: 'receipt', receipt: r },
        { op: 'event', event: event({ channelId: 1n }) },
        { op: 'idempotency', key: 'taken', fingerprint: 'g', response: 's', at: iso(20) },
      ]);
      expect(failed).toEqual({ ok: false, reason: 'duplicate', op: 3 });
      expect(await store.getChannel(1n)).toEqual(
        channel(1n, { reservation: { fingerprint: 'payment-a', until: iso(70) } }),
      );
      expect(await store.getReceipt(r.id)).toBeNull();
      expect(await store.lastEventId()).toBe(0);
      // A call whose charge conflicts after other ops: none of them stays.
      const late = await store.write([
        { op: 'meta.set', key: 'k', value: 'v' },
        { op: 'receipt', receipt: r },
        chargeOp(1n, 0n, 1_000n, 1_000n, { fingerprint: 'payment-b' }),
      ]);
      expect(late).toEqual(conflict(2));
      expect(await store.getMeta('k')).toBeNull();
      expect(await store.getReceipt(r.id)).toBeNull();
      // The payment that holds the reservation charges and releases in one call with its receipt.
      const out = await store.write([
        chargeOp(1n, 0n, 1_000n, 1_000n),
        { op: 'receipt', receipt: r },
        { op: 'channel.release', channelId: 1n, fingerprint: 'payment-a' },
      ]);
      expect(out).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ charged: 1_000n, reservation: null });
      expect(await store.getReceipt(r.id)).toEqual(r);
    });
  });

  describe('channels: refunds and the ledger floor', () => {
    it('applies refunds in nonce order: the deposit is lowered, and an older or repeated nonce changes nothing', async () => {
      const { store } = ctx();
      await store.write([{ op: 'channel.insert', channel: channel(1n, { deposit: 10_000n }) }]);
      const refunded = (refundNonce: number, deposit: bigint, channelId = 1n): WriteOp => ({
        op: 'channel.refunded',
        channelId,
        refundNonce,
        deposit,
      });
      expect(await store.write([refunded(1, 7_000n)])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ deposit: 7_000n, refundNonce: 1 });
      expect(await store.write([refunded(1, 5_000n)])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ deposit: 7_000n, refundNonce: 1 });
      expect(await store.write([refunded(3, 4_000n)])).toEqual(OK);
      expect(await store.write([refunded(2, 6_000n)])).toEqual(OK);
      expect(await store.getChannel(1n)).toEqual(channel(1n, { deposit: 4_000n, refundNonce: 3 }));
      expect(await store.write([refunded(1, 1n, 404n)])).toEqual(OK);
      expect(await store.getChannel(404n)).toBeNull();
    });

    it('lifts charged to what the ledger shows claimed, and lastAccepted only above it', async () => {
      const { store } = ctx();
      const accepted = { charged: 1_000n, lastAccepted: 5_000n, lastSignature: sig(5_000n) };
      await store.write([
        { op: 'channel.insert', channel: channel(1n, accepted) },
        { op: 'channel.insert', channel: channel(2n, accepted) },
      ]);
      // A claim below charged changes nothing of it.
      await store.write([{ op: 'channel.ledger', channelId: 1n, claimed: 500n }]);
      expect(await store.getChannel(1n)).toMatchObject({ claimed: 500n, ...accepted });
      // Between charged and lastAccepted: charged is lifted, the voucher to claim stays.
      await store.write([{ op: 'channel.ledger', channelId: 1n, claimed: 3_000n }]);
      expect(await store.getChannel(1n)).toMatchObject({
        claimed: 3_000n,
        charged: 3_000n,
        lastAccepted: 5_000n,
        lastSignature: sig(5_000n),
      });
      await store.write([{ op: 'channel.claimed', channelId: 2n, cumulative: 4_000n, vouchersClaimed: 1 }]);
      expect(await store.getChannel(2n)).toMatchObject({
        claimed: 4_000n,
        charged: 4_000n,
        lastAccepted: 5_000n,
        lastSignature: sig(5_000n),
      });
      // Above lastAccepted: both are lifted and the signature no longer names lastAccepted.
      await store.write([{ op: 'channel.ledger', channelId: 1n, claimed: 6_000n }]);
      await store.write([{ op: 'channel.claimed', channelId: 2n, cumulative: 7_000n, vouchersClaimed: 2 }]);
      expect(await store.getChannel(1n)).toMatchObject({
        claimed: 6_000n,
        charged: 6_000n,
        lastAccepted: 6_000n,
        lastSignature: null,
      });
      expect(await store.getChannel(2n)).toMatchObject({
        claimed: 7_000n,
        charged: 7_000n,
        lastAccepted: 7_000n,
        lastSignature: null,
      });
      // What was lifted is what the next payment must start from.
      expect(await store.write([chargeOp(1n, 1_000n, 1_000n, 8_000n)])).toEqual(conflict());
      expect(await store.write([chargeOp(1n, 6_000n, 1_000n, 8_000n)])).toEqual(OK);
      expect(await store.write([advance(2n, 7_000n, 9_000n)])).toEqual(OK);
    });
  });

  describe('channels: upgrade to batch-settlement', () => {
    it('upgrades a version-5 database once: its channels read charged = lastAccepted, no authorizer, nonce 0, no reservation', async () => {
      const old = await ctx().legacy(5);
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5]);
      const paid = channel(1n, {
        claimed: 2_000n,
        lastAccepted: 12_000n,
        lastSignature: sig(12_000n),
        vouchers: 3,
        lastVoucherAt: iso(5),
      });
      const fresh = channel(2n, { createdAt: iso(1) });
      await old.exec(legacyChannelSql(paid));
      await old.exec(legacyChannelSql(fresh));
      const store = await old.upgrade();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await store.getChannel(1n)).toEqual({ ...paid, charged: 12_000n });
      expect(await store.getChannel(2n)).toEqual(fresh);
      // Both kinds of payment work on the upgraded rows.
      expect(await store.write(acceptOps(1n, 12_000n, 15_000n).ops)).toMatchObject({ ok: true });
      expect(await store.write([reserveOp(2n, 0n, 'payment-a'), chargeOp(1n, 15_000n, 1_000n, 16_000n)])).toEqual(OK);
      expect(await store.write([chargeOp(2n, 0n, 1_000n, 1_000n)])).toEqual(OK);
      expect(await store.getChannel(1n)).toMatchObject({ charged: 16_000n, lastAccepted: 16_000n, vouchers: 5 });
      expect(await store.getChannel(2n)).toMatchObject({ charged: 1_000n, lastAccepted: 1_000n, reservation: null });
      await store.migrate();
      expect(await old.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });
  });
};
