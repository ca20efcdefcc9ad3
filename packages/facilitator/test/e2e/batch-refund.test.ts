// The `batch-settlement` cooperative refund over real HTTP (src/domain/refunds.ts): a buyer signs a
// refund over its channel's refund nonce and POSTs it to /settle; the facilitator claims what was
// charged, then has the contract refund the rest (or the amount asked) to the payer at once. A
// replay refunds once, another key's signature and a channel without this facilitator as receiver
// authorizer are refused, and the seller's revenue still adds up (a refund moves no seller money).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SCHEME, decodeJsonHeader, randomKeypair, refundContext } from '@svc/core';
import type { BatchRequirements, Keypair, PaymentRequired, RefundContext } from '@svc/core';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { createPgDatabase } from '../helpers/pg.js';
import type { PgDatabase } from '../helpers/pg.js';

const PRICE = 5000n;
const DEPOSIT = 5_000_000n;

// Both stores: the hold, the lower deposit and the kept answer are store writes.
describe.each(['sqlite', 'postgres'] as const)('batch-settlement refund (%s)', (store) => {
  let h: Harness;
  let db: PgDatabase | undefined;
  let terms: BatchRequirements;
  let refunds: RefundContext;

  beforeAll(async () => {
    if (store === 'postgres') db = await createPgDatabase();
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600', ...(db ? { DATABASE_URL: db.url } : {}) });
    const res = await fetch(`${h.url}/demo/book`);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    const book = (decoded.ok ? decoded.value : null) as PaymentRequired;
    terms = book.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
    const info = await h.ledger.info();
    refunds = refundContext(info.passphrase, info.contracts.channel);
  });
  afterAll(async () => {
    await h?.close();
    await db?.drop();
  });

  /** Charges the channel `n` payments of PRICE through /settle. */
  async function pay(b: Buyer, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const v = b.signer.next(PRICE);
      const body = await post('/settle', {
        type: 'voucher',
        voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
      });
      expect(body['success'], JSON.stringify(body)).toBe(true);
      b.signer.confirm(BigInt(v.cumulative));
    }
  }

  async function post(route: '/verify' | '/settle', payload: Record<string, unknown>) {
    const res = await fetch(`${h.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: terms, payload, resource: { url: `${h.url}/r` } },
        paymentRequirements: terms,
        method: 'GET',
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  function refundPayload(b: Buyer, nonce: bigint, amount?: bigint, key: Keypair = b.voucherKey) {
    return {
      type: 'refund',
      channelId: b.channelId.toString(),
      ...(amount === undefined ? {} : { amount: amount.toString() }),
      nonce: nonce.toString(),
      signature: refunds.sign(key, b.channelId, amount ?? null, nonce),
    };
  }

  it('a refund of 100,000 reaches the buyer’s ledger balance at once, after what was charged is claimed', async () => {
    const b = await h.buyer({ batch: true, deposit: DEPOSIT });
    await pay(b, 3);
    const before = await h.ledger.balance(b.keys.address);
    const verified = await post('/verify', refundPayload(b, 0n, 100_000n));
    expect(verified).toMatchObject({ isValid: true, payer: b.keys.address });
    // /verify moves nothing.
    expect(await h.ledger.balance(b.keys.address)).toBe(before);

    // Read back as soon as /settle answers: the refund is on the ledger by then, not at expiry.
    const body = await post('/settle', refundPayload(b, 0n, 100_000n));
    expect(body).toMatchObject({ success: true, payer: b.keys.address, amount: '100000' });
    expect(body['transaction']).toMatch(/.+/);
    expect((body['extra'] as Record<string, unknown>)['chargedAmount']).toBeUndefined();
    expect((body['extra'] as Record<string, unknown>)['channelState']).toEqual({
      channelId: b.channelId.toString(),
      balance: (DEPOSIT - 100_000n).toString(),
      totalClaimed: (3n * PRICE).toString(),
      chargedCumulativeAmount: (3n * PRICE).toString(),
      refundNonce: '1',
      expiryLedger: expect.any(Number) as number,
    });
    expect(await h.ledger.balance(b.keys.address)).toBe(before + 100_000n);
    const onLedger = await h.ledger.channel(b.channelId);
    expect(onLedger).toMatchObject({ deposit: '4900000', claimed: '15000', refundNonce: '1', open: true });

    // The channel keeps paying after a partial refund, within what is left.
    await pay(b, 1);
    const store = h.f.store;
    await until(
      async () =>
        (await store.events({ limit: 10, channelId: b.channelId, types: ['channel.refunded'] })).some(
          (e) => e.data['amount'] === '100000' && e.data['refundNonce'] === '1',
        ),
      10_000,
    );
  });

  it('a refund without an amount returns everything not charged; the channel stays open with nothing in it', async () => {
    const b = await h.buyer({ batch: true, deposit: DEPOSIT });
    await pay(b, 2);
    const before = await h.ledger.balance(b.keys.address);
    const body = await post('/settle', refundPayload(b, 0n));
    expect(body).toMatchObject({ success: true, amount: (DEPOSIT - 2n * PRICE).toString() });
    expect(await h.ledger.balance(b.keys.address)).toBe(before + DEPOSIT - 2n * PRICE);
    // Nothing is left: a second refund under the next nonce is refused as such.
    const again = await post('/settle', refundPayload(b, 1n));
    expect(again).toMatchObject({ success: false, errorReason: 'invalid_batch_settlement_stellar_refund_no_balance' });
  });

  it('a replayed refund answers the same result and refunds once', async () => {
    const b = await h.buyer({ batch: true, deposit: DEPOSIT });
    await pay(b, 1);
    const before = await h.ledger.balance(b.keys.address);
    const payload = refundPayload(b, 0n, 250_000n);
    const [first, second] = await Promise.all([post('/settle', payload), post('/settle', payload)]);
    const third = await post('/settle', payload);
    expect(first).toMatchObject({ success: true, amount: '250000' });
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(await h.ledger.balance(b.keys.address)).toBe(before + 250_000n);
    expect((await h.ledger.channel(b.channelId))?.refundNonce).toBe('1');
  });

  it('refuses a refund signed by another key, an old nonce, and more than is unused, with clear codes', async () => {
    const b = await h.buyer({ batch: true, deposit: DEPOSIT });
    await pay(b, 1);
    const before = await h.ledger.balance(b.keys.address);
    const forged = await post('/settle', refundPayload(b, 0n, 1000n, randomKeypair()));
    expect(forged).toMatchObject({ success: false, errorReason: 'invalid_batch_settlement_stellar_voucher_signature' });
    expect(forged['errorMessage']).toMatch(/does not verify/);
    const verifyForged = await post('/verify', refundPayload(b, 0n, 1000n, randomKeypair()));
    expect(verifyForged).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_stellar_voucher_signature',
    });
    // A voucher signature is no refund signature (another domain).
    const v = b.signer.sign(2n * PRICE);
    const asVoucher = await post('/settle', { ...refundPayload(b, 0n), signature: v.signature });
    expect(asVoucher).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_voucher_signature',
    });
    const wrongNonce = await post('/settle', refundPayload(b, 7n, 1000n));
    expect(wrongNonce).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_refund_payload',
    });
    expect(wrongNonce['errorMessage']).toMatch(/refund nonce is 0/);
    const tooMuch = await post('/settle', refundPayload(b, 0n, DEPOSIT));
    expect(tooMuch).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_refund_amount_invalid',
    });
    expect(tooMuch['errorMessage']).toMatch(/has 4995000 unused/);
    expect(await h.ledger.balance(b.keys.address)).toBe(before);
    expect((await h.ledger.channel(b.channelId))?.refundNonce).toBe('0');
  });

  it('refuses a channel opened without this facilitator as receiver authorizer, saying what to do', async () => {
    const b = await h.buyer({ deposit: DEPOSIT });
    const before = await h.ledger.balance(b.keys.address);
    const body = await post('/settle', refundPayload(b, 0n));
    expect(body).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_receiver_authorizer_mismatch',
    });
    expect(body['errorMessage']).toMatch(/has no receiver authorizer/);
    expect(body['errorMessage']).toMatch(/as receiver authorizer/);
    expect(body['errorMessage']).toMatch(/the payer closes itself from ledger \d+/);
    expect(await h.ledger.balance(b.keys.address)).toBe(before);
  });

  it('a malformed refund is refused with the refund_payload code, not a 500', async () => {
    const b = await h.buyer({ batch: true, deposit: DEPOSIT });
    const zero = await post('/settle', { ...refundPayload(b, 0n), amount: '0' });
    expect(zero).toMatchObject({ success: false, errorReason: 'invalid_batch_settlement_stellar_refund_payload' });
    const noSig = await post('/verify', { type: 'refund', channelId: b.channelId.toString(), nonce: '0' });
    expect(noSig).toMatchObject({ isValid: false, invalidReason: 'invalid_batch_settlement_stellar_refund_payload' });
  });

  it('after refunds the seller still earned what was charged: earned = settled + receivable + lost', async () => {
    const payTo = terms.payTo;
    const revenue = (await (await fetch(`${h.url}/sellers/${payTo}/revenue`)).json()) as {
      totals: Record<string, string>;
    };
    const t = revenue.totals;
    expect(BigInt(t['earned']!)).toBe(BigInt(t['settled']!) + BigInt(t['receivable']!) + BigInt(t['lost']!));
    // Every payment of this file was charged PRICE: 3 + 1 + 2 + 1 + 1 of them, all earned.
    expect(BigInt(t['earned']!)).toBeGreaterThanOrEqual(8n * PRICE);
    // Each refund claimed what its channel had charged first.
    expect(BigInt(t['settled']!)).toBeGreaterThanOrEqual(6n * PRICE);
  });
});

describe('batch-settlement refund, rate limited', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600', CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refunds count against the channel’s voucher rate: past it, 429 with Retry-After and nothing moves', async () => {
    const res = await fetch(`${h.url}/demo/book`);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    const terms = ((decoded.ok ? decoded.value : null) as PaymentRequired).accepts.find(
      (a): a is BatchRequirements => a.scheme === BATCH_SCHEME,
    )!;
    const info = await h.ledger.info();
    const ctx = refundContext(info.passphrase, info.contracts.channel);
    const b = await h.buyer({ batch: true, deposit: DEPOSIT });
    const refund = (nonce: bigint) =>
      fetch(`${h.url}/settle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: {
            x402Version: 2,
            accepted: terms,
            payload: {
              type: 'refund',
              channelId: b.channelId.toString(),
              amount: '1000',
              nonce: nonce.toString(),
              signature: ctx.sign(b.voucherKey, b.channelId, 1000n, nonce),
            },
          },
          paymentRequirements: terms,
        }),
      });
    expect((await refund(0n)).status).toBe(200);
    expect((await refund(1n)).status).toBe(200);
    const before = await h.ledger.balance(b.keys.address);
    const limited = await refund(2n);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: string }).error).toBe('RATE_LIMITED');
    expect(await h.ledger.balance(b.keys.address)).toBe(before);
    expect((await h.ledger.channel(b.channelId))?.refundNonce).toBe('2');
  });
});
