// The payments domain without HTTP: Payments over the verifier and batch-settlement, on the real
// adapters (SQLite, the in-process local ledger) in a temporary directory. What the HTTP tests show
// through /verify and /settle, shown here at the domain's own seam, in milliseconds a case.
import { describe, expect, it } from 'vitest';
import { batchTermsOf, randomKeypair, toHex, verifyReceipt } from '@svc/core';
import type { ChannelSigner } from '@svc/sdk';
import type { PaymentAttempt } from '../../src/domain/payments.js';
import { batchInput, domainPerSuite, voucherInput } from '../helpers/domain.js';

const PRICE = 5000n;
const DEPOSIT = 1_000_000n;

describe('Payments (channel)', () => {
  const d = domainPerSuite();
  const payee = randomKeypair().address;

  function attempt(signer: ChannelSigner, cumulative: bigint, key: string | null = null): PaymentAttempt {
    const input = voucherInput(signer, d.terms(payee, PRICE), cumulative, { idempotencyKey: key });
    return { input, payeeSide: false, listing: null };
  }

  it('accepts the voucher for the price, with a receipt the facilitator signed, and keeps the channel’s total', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const settled = await d.services.payments.settle(attempt(signer, PRICE));
    expect(settled.ok).toBe(true);
    const receipt = settled.ok ? settled.answer.receipt : null;
    expect(receipt).toMatchObject({
      channelId: signer.channelId.toString(),
      cumulative: '5000',
      amount: '5000',
      payee,
    });
    expect(verifyReceipt(receipt!, d.services.receiptSigners)).toEqual({ ok: true });
    expect((await d.services.store.getChannel(signer.channelId))?.lastAccepted).toBe(PRICE);
  });

  it('refuses a voucher that does not pay the price, one above the deposit, and one signed by another key', async () => {
    const { signer, voucherKey } = await d.channel({ payee, deposit: DEPOSIT });
    const sign = (amount: bigint) => toHex(d.services.vouchers.sign(voucherKey, signer.channelId, amount));
    expect(await d.services.payments.settle(attempt(signer, PRICE - 1n))).toMatchObject({
      ok: false,
      code: 'VOUCHER_UNDERPAID',
    });
    const over = attempt(signer, PRICE);
    over.input.payment = { ...over.input.payment, cumulative: DEPOSIT + PRICE, signature: sign(DEPOSIT + PRICE) };
    expect(await d.services.payments.settle(over)).toMatchObject({ ok: false, code: 'CHANNEL_EXHAUSTED' });
    const forged = attempt(signer, PRICE);
    (forged.input.payment as { signature: string }).signature = '00'.repeat(64);
    expect(await d.services.payments.settle(forged)).toMatchObject({ ok: false, code: 'VOUCHER_BAD_SIGNATURE' });
    expect((await d.services.store.getChannel(signer.channelId))?.lastAccepted ?? 0n).toBe(0n);
  });

  it('two vouchers for the same total at once: one is accepted, the other refused (compare-and-set)', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const both = await Promise.all([
      d.services.payments.settle(attempt(signer, PRICE)),
      d.services.payments.settle(attempt(signer, PRICE)),
    ]);
    expect(both.filter((r) => r.ok)).toHaveLength(1);
    expect((await d.services.store.getChannel(signer.channelId))?.lastAccepted).toBe(PRICE);
  });

  it('a retry under the same idempotency key is answered with the first receipt, not charged again', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const first = await d.services.payments.settle(attempt(signer, PRICE, 'retry-key-0001'));
    const again = await d.services.payments.settle(attempt(signer, PRICE, 'retry-key-0001'));
    expect(first.ok && again.ok).toBe(true);
    if (!first.ok || !again.ok) return;
    expect(again.answer.receipt.id).toBe(first.answer.receipt.id);
    expect((await d.services.store.getChannel(signer.channelId))?.lastAccepted).toBe(PRICE);
  });
});

describe('Payments (batch-settlement)', () => {
  const d = domainPerSuite();
  const payee = randomKeypair().address;

  it('charges what the seller charged below the ceiling; the next ceiling is the charged total plus the price', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT, bound: true });
    const terms = d.terms(payee, PRICE);
    const requirements = batchTermsOf(terms, d.services.keys.address);
    const input = (ceiling: bigint, amount: bigint) => ({
      input: batchInput(signer, requirements, ceiling, amount, { resource: 'http://seller.test/summary' }),
      payeeSide: true,
      listing: null,
    });
    // /verify reserves the price under the ceiling; /settle then charges what the handler used.
    const pay = async (ceiling: bigint, charge: bigint) => {
      const verified = await d.services.payments.verifyBatch(input(ceiling, PRICE));
      if (!verified.ok) return verified;
      return d.services.payments.settleBatch(input(ceiling, charge));
    };
    const first = await pay(PRICE, 1200n);
    expect(first).toMatchObject({ ok: true, chargedAmount: 1200n });
    // A ceiling that is not the charged total plus the price is refused, with the channel's state.
    const wrong = await pay(2n * PRICE, 1200n);
    expect(wrong).toMatchObject({
      ok: false,
      code: 'invalid_batch_settlement_stellar_cumulative_amount_mismatch',
      channelState: { chargedCumulativeAmount: '1200' },
    });
    const second = await pay(1200n + PRICE, 1200n);
    expect(second).toMatchObject({ ok: true, chargedAmount: 1200n });
    const channel = await d.services.store.getChannel(signer.channelId);
    expect(channel).toMatchObject({ lastAccepted: 1200n + PRICE });
  });
});
