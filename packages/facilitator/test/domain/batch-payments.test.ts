// BatchPayments (`batch-settlement`: batch-payments.ts) at its own seam, below Payments: a voucher
// is a ceiling — what was charged plus the price — /verify reserves the channel for one payment and
// /settle charges what the request cost. Each money rule is answered with the scheme's code, as
// over HTTP (test/e2e/batch-settlement.test.ts, payment-identifier.test.ts), on the real adapters
// (SQLite, the in-process local ledger) in a temporary directory; every case opens its own channel.
import { describe, expect, it } from 'vitest';
import { batchCode, batchTermsOf, generatePaymentId, randomKeypair, toHex } from '@svc/core';
import type { BatchCodeName } from '@svc/core';
import type { BatchSettled } from '../../src/domain/batch-types.js';
import { acceptedEventOf, acceptedEventsOf, batchInput, domainPerSuite, loserOfTwo } from '../helpers/domain.js';

const PRICE = 5000n;
const DEPOSIT = 1_000_000n;

describe('BatchPayments (batch-settlement)', () => {
  const d = domainPerSuite();
  const payee = randomKeypair().address;
  const refused = (name: BatchCodeName) => ({ ok: false, code: batchCode(name) });

  /** A channel bound to this facilitator as its receiver authorizer, with the seller's batch terms. */
  async function bound(deposit = DEPOSIT) {
    const opened = await d.channel({ payee, deposit, bound: true });
    return { ...opened, requirements: batchTermsOf(d.terms(payee, PRICE), d.services.keys.address) };
  }
  const channelOf = async (id: bigint) => (await d.services.store.getChannel(id))!;

  it('refuses a voucher signed by a key other than the channel’s, and reserves nothing', async () => {
    const { signer, requirements } = await bound();
    const forged = toHex(d.services.vouchers.sign(randomKeypair(), signer.channelId, PRICE));
    const input = batchInput(signer, requirements, PRICE, PRICE, { signature: forged });
    expect(await d.services.batch.verify(input)).toMatchObject(refused('voucher_signature'));
    expect((await channelOf(signer.channelId)).reservation).toBeNull();
    expect(await d.services.batch.verify(batchInput(signer, requirements, PRICE, PRICE))).toMatchObject({ ok: true });
  });

  it('refuses a ceiling above the deposit (cumulative_exceeds_balance) at /verify and /settle, and charges nothing', async () => {
    // The ceiling is the right one (nothing charged + the price): only the deposit does not cover it.
    const { signer, voucherKey, requirements } = await bound(PRICE - 1n);
    const signature = toHex(d.services.vouchers.sign(voucherKey, signer.channelId, PRICE));
    const input = batchInput(signer, requirements, PRICE, PRICE, { signature });
    expect(await d.services.batch.verify(input)).toMatchObject(refused('cumulative_exceeds_balance'));
    expect(await d.services.batch.settle(input)).toMatchObject(refused('cumulative_exceeds_balance'));
    expect(await channelOf(signer.channelId)).toMatchObject({ charged: 0n, lastAccepted: 0n, reservation: null });
  });

  it('refuses a ceiling that does not advance past what the ledger shows claimed (cumulative_below_claimed)', async () => {
    const { signer, requirements } = await bound();
    expect(await d.services.batch.settle(batchInput(signer, requirements, PRICE, PRICE))).toMatchObject({ ok: true });
    expect(await d.services.manualClaims.claim(signer.channelId)).toMatchObject({ amount: '5000' });
    const spent = batchInput(signer, requirements, PRICE, PRICE, { resource: 'http://seller.test/again' });
    expect(await d.services.batch.verify(spent)).toMatchObject({
      ...refused('cumulative_below_claimed'),
      channelState: { totalClaimed: '5000', chargedCumulativeAmount: '5000' },
    });
    expect(await channelOf(signer.channelId)).toMatchObject({ charged: PRICE, claimed: PRICE, reservation: null });
  });

  it('records the charge as charged, not the ceiling: the channel, the receipt and its event say the charge', async () => {
    const { signer, requirements } = await bound();
    expect(await d.services.batch.verify(batchInput(signer, requirements, PRICE, PRICE))).toMatchObject({ ok: true });
    const settled = await d.services.batch.settle(batchInput(signer, requirements, PRICE, 1200n));
    expect(settled).toMatchObject({
      ok: true,
      chargedAmount: 1200n,
      channelState: { chargedCumulativeAmount: '1200' },
    });
    const receipt = receiptOf(settled);
    expect(receipt).toMatchObject({ amount: '1200', cumulative: '1200' });
    // The ceiling stays the voucher to claim; what may be claimed is the charge.
    expect(await channelOf(signer.channelId)).toMatchObject({ charged: 1200n, lastAccepted: PRICE, reservation: null });
    expect(await acceptedEventsOf(d, signer.channelId)).toEqual([
      acceptedEventOf(receipt, { scheme: 'batch-settlement' }),
    ]);
  });

  it('refuses a charge above the ceiling (charge_exceeds_signed_cumulative), after its /verify or without one', async () => {
    const { signer, requirements } = await bound();
    expect(await d.services.batch.verify(batchInput(signer, requirements, PRICE, PRICE))).toMatchObject({ ok: true });
    const over = batchInput(signer, requirements, PRICE, PRICE + 1n);
    expect(await d.services.batch.settle(over)).toMatchObject(refused('charge_exceeds_signed_cumulative'));
    // Without a /verify of its own, the price it signed for is the most it may be charged.
    const unverified = batchInput(signer, requirements, PRICE, PRICE + 1n, { resource: 'http://seller.test/other' });
    expect(await d.services.batch.settle(unverified)).toMatchObject(refused('charge_exceeds_signed_cumulative'));
    expect((await channelOf(signer.channelId)).charged).toBe(0n);
    // The whole price, under the reservation, is within the ceiling.
    expect(await d.services.batch.settle(batchInput(signer, requirements, PRICE, PRICE))).toMatchObject({
      ok: true,
      chargedAmount: PRICE,
    });
  });

  it('the same Idempotency-Key with the same payment replays the first answer, charged once; another payment under it gets no first answer', async () => {
    const { signer, requirements } = await bound();
    const keyed = batchInput(signer, requirements, PRICE, 1200n, { idempotencyKey: 'batch-key-1' });
    const first = await d.services.batch.settle(keyed);
    const again = await d.services.batch.settle(keyed);
    expect(again).toMatchObject({ ok: true, replayed: true, chargedAmount: 1200n });
    expect(receiptOf(again).id).toBe(receiptOf(first).id);
    // Another request on the same ceiling is not the one the key answered: its ceiling is spent.
    const other = batchInput(signer, requirements, PRICE, 1200n, {
      idempotencyKey: 'batch-key-1',
      resource: 'http://seller.test/other',
    });
    expect(await d.services.batch.settle(other)).toMatchObject(refused('cumulative_amount_mismatch'));
    expect((await channelOf(signer.channelId)).charged).toBe(1200n);
    // A new payment on the next ceiling under the used key is charged as itself, and the key stays the first's.
    const next = batchInput(signer, requirements, 1200n + PRICE, PRICE, { idempotencyKey: 'batch-key-1' });
    expect(await d.services.batch.settle(next)).toMatchObject({ ok: true, chargedAmount: PRICE });
    expect(receiptOf(await d.services.batch.settle(keyed)).id).toBe(receiptOf(first).id);
    expect((await channelOf(signer.channelId)).charged).toBe(1200n + PRICE);
  });

  it('the same payment id with the same payment replays the first answer; with another payment it is refused', async () => {
    const { signer, requirements } = await bound();
    const named = { paymentId: generatePaymentId() };
    const first = await d.services.batch.settle(batchInput(signer, requirements, PRICE, PRICE, named));
    const again = await d.services.batch.settle(batchInput(signer, requirements, PRICE, PRICE, named));
    expect(again).toMatchObject({ ok: true, replayed: true });
    expect(receiptOf(again).id).toBe(receiptOf(first).id);
    const next = batchInput(signer, requirements, 2n * PRICE, PRICE, named);
    expect(await d.services.batch.settle(next)).toMatchObject({
      ok: false,
      code: 'invalid_payment_identifier_conflict',
    });
    expect((await channelOf(signer.channelId)).charged).toBe(PRICE);
  });

  it('two payments on one ceiling at once: one reserves the channel, the other is told it is busy', async () => {
    const { signer, requirements } = await bound();
    const lost = await loserOfTwo((request) =>
      d.services.batch.verify(batchInput(signer, requirements, PRICE, PRICE, request)),
    );
    expect(lost).toMatchObject(refused('channel_busy'));
  });

  it('two charges on one ceiling at once: exactly one is charged (compare-and-set on the charged total)', async () => {
    const { signer, requirements } = await bound();
    const lost = await loserOfTwo((request) =>
      d.services.batch.settle(batchInput(signer, requirements, PRICE, PRICE, request)),
    );
    expect(lost).toMatchObject(refused('cumulative_amount_mismatch'));
    expect((await channelOf(signer.channelId)).charged).toBe(PRICE);
    expect(await d.services.store.listReceipts({ channelId: signer.channelId, limit: 10 })).toHaveLength(1);
  });
});

/** The receipt of a charge; a refusal, or a charge of nothing, fails the test. */
function receiptOf(settled: BatchSettled) {
  if (!settled.ok) throw new Error(`refused ${settled.code}: ${settled.message}`);
  if (!settled.response) throw new Error('no receipt: nothing was charged');
  return settled.response.receipt;
}
