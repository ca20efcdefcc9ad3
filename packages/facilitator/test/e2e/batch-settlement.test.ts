// x402 `batch-settlement` on the svc facilitator (docs/schemes/scheme_batch_settlement_stellar.md),
// over real HTTP: /supported lists it after the `channel` kinds, a metered resource offers it as the
// second option of every 402 (the first one unchanged), a voucher is a ceiling — what was charged
// so far plus the price — and the facilitator keeps what was charged; a ceiling that does not match
// is answered with the channel's state (the corrective 402); /verify reserves the channel and
// /settle charges what the request cost; a claim takes what was charged, not the ceiling.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BATCH_SCHEME,
  decodeJsonHeader,
  encodeJsonHeader,
  fromHex,
  isChannelTerms,
  randomKeypair,
  verifyReceipt,
  voucherContext,
} from '@svc/core';
import type { BatchRequirements, PaymentRequired, PaymentRequirements } from '@svc/core';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const PRICE = 5000n;

describe('batch-settlement on the svc facilitator', () => {
  let h: Harness;
  let book: PaymentRequired;
  let batchTerms: BatchRequirements;
  let channelTerms: PaymentRequirements;

  beforeAll(async () => {
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600', MANUAL_CLAIM_COOLDOWN_SECONDS: '0' });
    const res = await fetch(`${h.url}/demo/book`);
    expect(res.status).toBe(402);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    book = decoded.ok ? (decoded.value as PaymentRequired) : (null as never);
    channelTerms = book.accepts.filter(isChannelTerms)[0]!;
    batchTerms = book.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
  });
  afterAll(async () => {
    await h?.close();
  });

  /** A PAYMENT-SIGNATURE of a batch-settlement voucher for `ceiling`. */
  function voucherHeader(b: Buyer, ceiling: bigint, terms: BatchRequirements = batchTerms): string {
    const v = b.signer.sign(ceiling);
    return encodeJsonHeader({
      x402Version: 2,
      accepted: terms,
      payload: {
        type: 'voucher',
        voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
      },
    });
  }

  async function view(id: bigint) {
    return (await (await fetch(`${h.url}/channels/${id}`)).json()) as Record<string, string>;
  }

  async function facilitator(route: '/verify' | '/settle', b: Buyer, ceiling: bigint, amount = PRICE, path = '/r') {
    const v = b.signer.sign(ceiling);
    const requirements = { ...batchTerms, amount: amount.toString() };
    const res = await fetch(`${h.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: batchTerms,
          payload: {
            type: 'voucher',
            voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
          },
          resource: { url: `${h.url}${path}` },
        },
        paymentRequirements: requirements,
        method: 'GET',
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  it('/supported lists batch-settlement after the channel kinds, with the receiver authorizer', async () => {
    const supported = (await (await fetch(`${h.url}/supported`)).json()) as {
      kinds: { x402Version: number; scheme: string; network: string; extra: Record<string, unknown> }[];
    };
    expect(supported.kinds.map((k) => [k.scheme, k.x402Version])).toEqual([
      ['channel', 2],
      ['channel', 1],
      ['batch-settlement', 2],
    ]);
    const batch = supported.kinds[2]!;
    expect(batch.network).toBe('stellar:local');
    expect(batch.extra['receiverAuthorizer']).toBe(h.f.address);
  });

  it('every 402 offers batch-settlement second, the channel option first and as the specification has it', () => {
    expect(book.accepts).toHaveLength(2);
    expect(book.accepts[0]).toBe(channelTerms);
    expect(Object.keys(channelTerms).sort()).toEqual(
      ['amount', 'asset', 'extra', 'maxTimeoutSeconds', 'network', 'payTo', 'scheme', 'unit'].sort(),
    );
    expect(Object.keys(channelTerms.extra).sort()).toEqual(
      ['areFeesSponsored', 'channelContract', 'facilitator', 'minDeposit'].sort(),
    );
    expect(batchTerms).toMatchObject({
      scheme: 'batch-settlement',
      network: channelTerms.network,
      asset: channelTerms.asset,
      payTo: channelTerms.payTo,
      amount: channelTerms.amount,
      maxTimeoutSeconds: channelTerms.maxTimeoutSeconds,
      extra: {
        receiverAuthorizer: h.f.address,
        channelContract: channelTerms.extra.channelContract,
        facilitator: channelTerms.extra.facilitator,
        minDeposit: channelTerms.extra.minDeposit,
        areFeesSponsored: true,
        unit: 'request',
        unitPrice: channelTerms.amount,
      },
    });
  });

  it('pays the demo seller voucher by voucher, the ceiling what was charged plus the price', async () => {
    const b = await h.buyer({ batch: true });
    const signers = [h.f.address];
    for (let i = 1n; i <= 3n; i++) {
      const res = await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': voucherHeader(b, PRICE * i) } });
      expect(res.status, `payment ${i}`).toBe(200);
      const decoded = decodeJsonHeader(res.headers.get('payment-response')!);
      const answer = (decoded.ok ? decoded.value : null) as {
        success: boolean;
        transaction: string;
        amount: string;
        extra: {
          chargedAmount: string;
          channelState: Record<string, unknown>;
          receipt: { receipt: Parameters<typeof verifyReceipt>[0] };
        };
      };
      expect(answer).toMatchObject({ success: true, transaction: '', amount: '' });
      expect(answer.extra.chargedAmount).toBe('5000');
      expect(answer.extra.channelState).toMatchObject({
        channelId: b.channelId.toString(),
        balance: '5000000',
        totalClaimed: '0',
        chargedCumulativeAmount: (PRICE * i).toString(),
        refundNonce: '0',
      });
      expect(answer.extra).not.toHaveProperty('attestToken');
      expect(verifyReceipt(answer.extra.receipt.receipt, signers)).toEqual({ ok: true });
      b.signer.confirm(PRICE * i);
    }
    expect(await view(b.channelId)).toMatchObject({ charged: '15000', lastAccepted: '15000', unclaimed: '15000' });
  });

  it('answers a ceiling that does not match what was charged with a corrective 402 the buyer can check', async () => {
    const b = await h.buyer({ batch: true });
    for (let i = 1n; i <= 2n; i++)
      expect(
        (await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': voucherHeader(b, PRICE * i) } })).status,
      ).toBe(200);
    // A buyer that lost its books signs from 0 again.
    const res = await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': voucherHeader(b, PRICE) } });
    expect(res.status).toBe(402);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    const terms = (decoded.ok ? decoded.value : null) as PaymentRequired;
    expect(terms.error).toBe('invalid_batch_settlement_stellar_cumulative_amount_mismatch');
    expect(terms.accepts[0]).toEqual(channelTerms);
    const corrective = terms.accepts[1] as BatchRequirements;
    expect(corrective.extra.channelState).toMatchObject({ chargedCumulativeAmount: '10000', balance: '5000000' });
    const state = corrective.extra.voucherState!;
    expect(state.signedMaxClaimable).toBe('10000');
    // The buyer checks the signature against its own voucher key before adopting the state.
    const info = h.f.ledgerInfo;
    const ctx = voucherContext(info.passphrase, info.contracts.channel);
    expect(ctx.verify(fromHex(b.voucherKey.publicKeyHex, 32), b.channelId, 10000n, fromHex(state.signature, 64))).toBe(
      true,
    );
    // Caught up, it pays once more, and is charged once.
    const next = await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': voucherHeader(b, 15000n) } });
    expect(next.status).toBe(200);
    expect(await view(b.channelId)).toMatchObject({ charged: '15000' });
  });

  it('refuses a channel not bound to this facilitator, which still pays with the channel option', async () => {
    const b = await h.buyer();
    const res = await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': voucherHeader(b, PRICE) } });
    expect(res.status).toBe(402);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    expect((decoded.ok ? (decoded.value as PaymentRequired) : null)!.error).toBe(
      'invalid_batch_settlement_stellar_receiver_authorizer_mismatch',
    );
    const channel = encodeJsonHeader({ x402Version: 2, accepted: channelTerms, payload: b.signer.sign(PRICE) });
    expect((await fetch(`${h.url}/demo/book`, { headers: { 'payment-signature': channel } })).status).toBe(200);
  });

  it('x402 servers: /verify reserves the channel, /settle charges what the request cost, a claim takes what was charged', async () => {
    const payee = randomKeypair().address;
    batchTerms = { ...batchTerms, payTo: payee };
    const b = await h.buyer({ batch: true, payee });
    const verified = await facilitator('/verify', b, PRICE);
    expect(verified).toMatchObject({ isValid: true, extra: { channelState: { chargedCumulativeAmount: '0' } } });
    // Another request paid with the same ceiling waits its turn: the channel pays one request at a time.
    expect(await facilitator('/verify', b, PRICE, PRICE, '/another')).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_stellar_channel_busy',
    });
    // The request cost 1200 of its 5000 (an x402 settlement override).
    const settled = await facilitator('/settle', b, PRICE, 1200n);
    expect(settled).toMatchObject({
      success: true,
      transaction: '',
      amount: '',
      extra: { chargedAmount: '1200', channelState: { chargedCumulativeAmount: '1200' } },
    });
    // The next ceiling is the charged total plus the price.
    expect(await facilitator('/verify', b, 1200n + PRICE)).toMatchObject({ isValid: true });
    expect(await facilitator('/settle', b, 1200n + PRICE, 0n)).toMatchObject({
      success: true,
      extra: { chargedAmount: '0', channelState: { chargedCumulativeAmount: '1200' } },
    });
    expect(await facilitator('/verify', b, 1200n + PRICE)).toMatchObject({ isValid: true });
    expect(await facilitator('/settle', b, 1200n + PRICE, 2400n)).toMatchObject({
      extra: { chargedAmount: '2400', channelState: { chargedCumulativeAmount: '3600' } },
    });
    expect(await view(b.channelId)).toMatchObject({ charged: '3600', lastAccepted: '6200', unclaimed: '3600' });
    // A claim of what was charged (below the voucher's ceiling: the facilitator authorises it).
    const claim = await fetch(`${h.url}/channels/${b.channelId}/claim`, { method: 'POST' });
    expect(claim.status).toBe(200);
    expect(await claim.json()).toMatchObject({ amount: '3600', cumulative: '3600' });
    expect(await h.ledger.balance(payee)).toBe(3600n);
    expect(await view(b.channelId)).toMatchObject({ claimed: '3600', charged: '3600', unclaimed: '0' });
    const revenue = (await (await fetch(`${h.url}/sellers/${payee}/revenue`)).json()) as {
      totals: Record<string, string>;
    };
    expect(revenue.totals).toMatchObject({ earned: '3600', settled: '3600', receivable: '0', restored: '0' });
  });
});
