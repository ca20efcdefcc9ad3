// The Verifier (`channel` vouchers: verifier.ts and the modules it runs) at its own seam, below
// Payments: each money rule of a voucher, answered with the code the service gives over HTTP
// (test/e2e/reason-codes.test.ts, payment-identifier.test.ts), on the real adapters (SQLite, the
// in-process local ledger) in a temporary directory. Every case opens its own channel, so that one
// case's vouchers never stand in another's way (nor count in its voucher rate).
import { describe, expect, it } from 'vitest';
import { generatePaymentId, randomKeypair, toHex } from '@svc/core';
import type { VerifyInput, VerifyOutcome } from '../../src/domain/verify-types.js';
import { acceptedEventOf, acceptedEventsOf, domainPerSuite, loserOfTwo, voucherInput } from '../helpers/domain.js';

const PRICE = 5000n;
const DEPOSIT = 1_000_000n;

describe('Verifier (channel)', () => {
  const d = domainPerSuite();
  const payee = randomKeypair().address;
  const terms = () => d.terms(payee, PRICE);
  const verify = (input: VerifyInput) => d.services.verifier.verify(input);
  const lastAccepted = async (channelId: bigint) => (await d.services.store.getChannel(channelId))?.lastAccepted;
  const receiptsOf = async (channelId: bigint) => d.services.store.listReceipts({ channelId, limit: 10 });

  it('refuses a voucher signed by a key other than the channel’s, and advances nothing', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const forged = toHex(d.services.vouchers.sign(randomKeypair(), signer.channelId, PRICE));
    expect(await verify(voucherInput(signer, terms(), PRICE, { signature: forged }))).toMatchObject({
      ok: false,
      code: 'VOUCHER_BAD_SIGNATURE',
    });
    expect(await lastAccepted(signer.channelId)).toBe(0n);
    // The same amount under the channel's own key is taken: it was the key that was refused.
    expect(await verify(voucherInput(signer, terms(), PRICE))).toMatchObject({ ok: true });
  });

  it('refuses a cumulative that does not advance (VOUCHER_NOT_INCREASING) or adds less than the price (VOUCHER_UNDERPAID)', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    expect(await verify(voucherInput(signer, terms(), 2n * PRICE))).toMatchObject({ ok: true });
    // Below the last accepted, and equal to it (the same voucher, for another request).
    const again = { resource: 'http://seller.test/again' };
    for (const cumulative of [PRICE, 2n * PRICE])
      expect(await verify(voucherInput(signer, terms(), cumulative, again))).toMatchObject({
        ok: false,
        code: 'VOUCHER_NOT_INCREASING',
      });
    expect(await verify(voucherInput(signer, terms(), 3n * PRICE - 1n))).toMatchObject({
      ok: false,
      code: 'VOUCHER_UNDERPAID',
    });
    expect(await lastAccepted(signer.channelId)).toBe(2n * PRICE);
    expect(await receiptsOf(signer.channelId)).toHaveLength(1);
  });

  it('refuses a cumulative above the deposit (CHANNEL_EXHAUSTED) and takes one of exactly the deposit', async () => {
    const deposit = 3n * PRICE;
    const { signer, voucherKey } = await d.channel({ payee, deposit });
    // The buyer's signer refuses to sign past the deposit: the key signs it directly, as a hostile buyer would.
    const over = toHex(d.services.vouchers.sign(voucherKey, signer.channelId, deposit + 1n));
    expect(await verify(voucherInput(signer, terms(), deposit + 1n, { signature: over }))).toMatchObject({
      ok: false,
      code: 'CHANNEL_EXHAUSTED',
    });
    expect(await lastAccepted(signer.channelId)).toBe(0n);
    expect(await verify(voucherInput(signer, terms(), deposit))).toMatchObject({ ok: true });
    expect(await lastAccepted(signer.channelId)).toBe(deposit);
  });

  it('the same Idempotency-Key with the same voucher replays the first answer; another voucher under it that does not advance is refused', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const keyed = voucherInput(signer, terms(), PRICE, { idempotencyKey: 'verifier-key-1' });
    const first = await verify(keyed);
    const again = await verify(keyed);
    expect(again).toMatchObject({ ok: true, replayed: true });
    expect(responseOf(again)).toEqual(responseOf(first));
    // Another payload under the key is not the request the key answered: no first answer for it.
    const older = voucherInput(signer, terms(), PRICE - 1n, { idempotencyKey: 'verifier-key-1' });
    expect(await verify(older)).toMatchObject({ ok: false, code: 'VOUCHER_NOT_INCREASING' });
    // The same voucher without the key is a replay of a spent voucher.
    expect(await verify(voucherInput(signer, terms(), PRICE))).toMatchObject({
      ok: false,
      code: 'VOUCHER_NOT_INCREASING',
    });
    expect(await lastAccepted(signer.channelId)).toBe(PRICE);
    expect(await receiptsOf(signer.channelId)).toHaveLength(1);
  });

  it('a new voucher that advances the channel under a used Idempotency-Key is a new payment; the key keeps its first answer', async () => {
    // advance-refusals.ts withoutForeignKey: the key belongs to the first voucher; the second is accepted without it.
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const key = { idempotencyKey: 'verifier-key-2' };
    const first = await verify(voucherInput(signer, terms(), PRICE, key));
    const second = await verify(voucherInput(signer, terms(), 2n * PRICE, key));
    expect(second).toMatchObject({ ok: true, response: { cumulative: '10000', delta: '5000' } });
    expect(second).not.toHaveProperty('replayed');
    const replay = await verify(voucherInput(signer, terms(), PRICE, key));
    expect(responseOf(replay).receipt.id).toBe(responseOf(first).receipt.id);
    expect(await lastAccepted(signer.channelId)).toBe(2n * PRICE);
  });

  it('the same payment id with the same payment replays the first answer; with another payment it is refused', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const named = { paymentId: generatePaymentId() };
    const first = await verify(voucherInput(signer, terms(), PRICE, named));
    const again = await verify(voucherInput(signer, terms(), PRICE, named));
    expect(again).toMatchObject({ ok: true, replayed: true });
    expect(responseOf(again).receipt.id).toBe(responseOf(first).receipt.id);
    expect(await verify(voucherInput(signer, terms(), 2n * PRICE, named))).toMatchObject({
      ok: false,
      code: 'invalid_payment_identifier_conflict',
    });
    expect(await lastAccepted(signer.channelId)).toBe(PRICE);
  });

  it('two copies of one voucher for two requests at once: exactly one is accepted (compare-and-set), with one receipt and one event', async () => {
    const { signer } = await d.channel({ payee, deposit: DEPOSIT });
    const lost = await loserOfTwo((request) => verify(voucherInput(signer, terms(), PRICE, request)));
    expect(lost).toMatchObject({ ok: false, code: 'VOUCHER_NOT_INCREASING' });
    expect(await lastAccepted(signer.channelId)).toBe(PRICE);
    const receipts = (await receiptsOf(signer.channelId)).map((r) => r.receipt);
    expect(receipts).toMatchObject([{ amount: '5000', cumulative: '5000' }]);
    // A `channel` event names no scheme: its data is exactly the receipt's figures.
    expect(await acceptedEventsOf(d, signer.channelId)).toEqual([acceptedEventOf(receipts[0]!)]);
  });
});

/** The answer of an accepted voucher; a refusal fails the test with its code. */
function responseOf(outcome: VerifyOutcome) {
  if (!outcome.ok) throw new Error(`refused ${outcome.code}: ${outcome.message}`);
  return outcome.response;
}
