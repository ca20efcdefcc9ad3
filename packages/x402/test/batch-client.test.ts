// BatchSettlementStellarScheme (client): the voucher payload, spend controls, and the books kept
// through the onPaymentResponse hook — a paid answer adopted only when it adds up, a corrective
// 402 only when the channel's own voucher key proves it.
import { describe, expect, it } from 'vitest';
import { PAYMENT_ID_RE, fromHex, paymentIdentifierDeclaration, randomKeypair, toHex, voucherContext } from '@svc/core';
import type { BatchRequirements, PaymentRequirements as SvcRequirements } from '@svc/core';
import { x402Client } from '@x402/core/client';
import type { PaymentResponseContext } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { BatchSettlementStellarScheme } from '../src/batch-settlement/client.js';
import { singleChannel } from '../src/index.js';
import { PASSPHRASE, fixture } from './helpers/fixtures.js';

const asX402 = (t: object) => t as PaymentRequirements;
const MISMATCH = 'invalid_batch_settlement_stellar_cumulative_amount_mismatch';

function setup(o: { bound?: string | null; holdTimeoutMs?: number } = {}) {
  const f = fixture();
  const signer = f.signer(1_000_000n, 7n, o.bound === undefined ? f.receiverAuthorizer : o.bound);
  const logs: string[] = [];
  const asked: unknown[][] = [];
  const client = new BatchSettlementStellarScheme(
    {
      signerFor: (...args: unknown[]) => {
        asked.push(args);
        return Promise.resolve(signer);
      },
    },
    { log: (l) => logs.push(l), ...(o.holdTimeoutMs ? { holdTimeoutMs: o.holdTimeoutMs } : {}) },
  );
  const pay = async (terms: BatchRequirements = f.batchTerms) => {
    const result = await client.createPaymentPayload(2, asX402(terms));
    const paymentPayload: PaymentPayload = { x402Version: 2, accepted: asX402(terms), payload: result.payload };
    return paymentPayload;
  };
  const respond = (ctx: Omit<PaymentResponseContext, 'requirements'>) =>
    client.schemeHooks.onPaymentResponse!({ ...ctx, requirements: ctx.paymentPayload.accepted });
  const ceilingOf = (p: PaymentPayload) =>
    BigInt((p.payload as { voucher: { maxClaimableAmount: string } }).voucher.maxClaimableAmount);
  const settled = (chargedAmount: string, chargedCumulativeAmount: string, over: object = {}): SettleResponse => ({
    success: true,
    transaction: '',
    network: 'stellar:local',
    amount: '',
    extra: {
      chargedAmount,
      channelState: {
        channelId: '7',
        balance: '1000000',
        totalClaimed: '0',
        chargedCumulativeAmount,
        refundNonce: '0',
        expiryLedger: 100,
      },
      ...over,
    },
  });
  /** A corrective 402 for channel 7: `charged` charged, proved by `voucherState`. */
  const corrective = (charged: string, voucherState?: object, over: object = {}): PaymentRequired => ({
    x402Version: 2,
    error: MISMATCH,
    resource: { url: 'http://127.0.0.1:1/r' },
    accepts: [
      asX402(f.terms),
      asX402({
        ...f.batchTerms,
        extra: {
          ...f.batchTerms.extra,
          channelState: {
            channelId: '7',
            balance: '1000000',
            totalClaimed: '0',
            chargedCumulativeAmount: charged,
            refundNonce: '0',
            expiryLedger: 100,
            ...over,
          },
          ...(voucherState ? { voucherState } : {}),
        },
      }),
    ],
  });
  const own = (amount: bigint) => ({
    signedMaxClaimable: amount.toString(),
    signature: toHex(voucherContext(PASSPHRASE, f.channelContract).sign(f.voucherKey, 7n, amount)),
  });
  return { f, signer, client, logs, asked, pay, respond, ceilingOf, settled, corrective, own };
}

describe('BatchSettlementStellarScheme.createPaymentPayload', () => {
  it('signs a voucher whose ceiling is the charged total plus the price, on a channel bound to the terms’ authorizer', async () => {
    const { f, signer, pay, asked } = setup();
    signer.sign(3000n);
    signer.confirm(3000n);
    const payment = await pay();
    expect(payment.payload).toEqual({
      type: 'voucher',
      voucher: { channelId: '7', maxClaimableAmount: '8000', signature: expect.stringMatching(/^[0-9a-f]{128}$/) },
    });
    const { signature } = (payment.payload as { voucher: { signature: string } }).voucher;
    expect(
      voucherContext(PASSPHRASE, f.channelContract).verify(f.voucherKey.publicKey, 7n, 8000n, fromHex(signature, 64)),
    ).toBe(true);
    expect(signer.cumulative).toBe(3000n); // nothing adopted before the seller answers
    // The source is asked for a channel bound to the authorizer, under the svc channel terms.
    const [terms, count, options] = asked[0] as [SvcRequirements, bigint, object];
    expect(terms).toMatchObject({ scheme: 'channel', amount: '5000', payTo: f.payTo, unit: 'request' });
    // The facilitator sponsors the fees (extra.areFeesSponsored): a channel it lacks opens by deposit.
    expect([count, options]).toEqual([1n, { receiverAuthorizer: f.receiverAuthorizer, byDeposit: true }]);
  });

  it('carries a pending deposit with the next payment, until a paid answer says it landed', async () => {
    const { signer, pay, respond, ceilingOf, settled } = setup();
    const transaction = { source: 'G…', seq: 1, op: 'channel.top_up', args: {}, signature: 'ab'.repeat(64) };
    signer.depositWith({ amount: 500_000n, transaction, hash: 'cd'.repeat(32) }, 1_500_000n);
    const first = await pay();
    expect(first.payload).toMatchObject({
      type: 'deposit',
      deposit: { amount: '500000', transaction },
      voucher: { channelId: '7', maxClaimableAmount: '5000' },
    });
    await respond({
      paymentPayload: first,
      settleResponse: { ...settled('5000', '5000'), transaction: 'cd'.repeat(32), amount: '500000' },
    });
    expect(signer.pendingDeposit).toBeNull();
    expect(signer.cumulative).toBe(5000n);
    const second = await pay();
    expect(second.payload).toMatchObject({ type: 'voucher' });
    expect(ceilingOf(second)).toBe(10_000n);
  });

  it('gives a refused deposit back to the wallet: the deposit is what it was before it', async () => {
    const { signer, pay, respond } = setup();
    const transaction = { source: 'G…', seq: 1, op: 'channel.top_up', args: {}, signature: 'ab'.repeat(64) };
    signer.depositWith({ amount: 500_000n, transaction, hash: 'cd'.repeat(32) }, 1_500_000n);
    expect(signer.deposit).toBe(1_500_000n);
    const failed: SettleResponse = {
      success: false,
      errorReason: 'invalid_batch_settlement_stellar_deposit_transaction_failed',
      transaction: '',
      network: 'stellar:local',
    };
    await respond({ paymentPayload: await pay(), settleResponse: failed });
    expect(signer.pendingDeposit).toBeNull();
    expect(signer.deposit).toBe(1_000_000n);
    expect((await pay()).payload).toMatchObject({ type: 'voucher' });
  });

  it('names each payment with a fresh payment-identifier id where the 402 declares the extension, and only there', async () => {
    const { f, client, respond, settled } = setup();
    const declared = { bazaar: {}, 'payment-identifier': paymentIdentifierDeclaration() };
    const payNamed = async (extensions: Record<string, unknown>, charged: string) => {
      const result = await client.createPaymentPayload(2, asX402(f.batchTerms), { extensions });
      const paymentPayload: PaymentPayload = {
        x402Version: 2,
        accepted: asX402(f.batchTerms),
        payload: result.payload,
      };
      await respond({ paymentPayload, settleResponse: settled('5000', charged) });
      return result.extensions;
    };
    const idOf = (e: Record<string, unknown> | undefined) =>
      (e?.['payment-identifier'] as { info: { required: boolean; id: string } }).info;
    const first = await payNamed(declared, '5000');
    expect(idOf(first).required).toBe(false);
    expect(idOf(first).id).toMatch(PAYMENT_ID_RE);
    expect(Object.keys(first ?? {})).toEqual(['payment-identifier']);
    // The declaration is left as the seller sent it (@x402/core merges the payment's id into it).
    expect(declared['payment-identifier'].info).toEqual({ required: false });
    const second = await payNamed(declared, '10000');
    expect(idOf(second).id).toMatch(PAYMENT_ID_RE);
    expect(idOf(second).id).not.toBe(idOf(first).id);
    expect(await payNamed({ bazaar: {} }, '15000')).toBeUndefined();
  });

  it('refuses what it cannot pay: x402 v1, channel terms, a price of 0, the spend cap, another authorizer or payee', async () => {
    const { f, client } = setup();
    await expect(client.createPaymentPayload(1, asX402(f.batchTerms))).rejects.toThrow(/version 2/);
    await expect(client.createPaymentPayload(2, asX402(f.terms))).rejects.toThrow(/not svc batch-settlement terms/);
    await expect(client.createPaymentPayload(2, asX402({ ...f.batchTerms, amount: '0' }))).rejects.toThrow(/0/);
    await expect(client.createPaymentPayload(2, asX402(f.batchTerms), { maxAmountPerPayment: '4999' })).rejects.toThrow(
      /spend limit/,
    );
    const other = { ...f.batchTerms, extra: { ...f.batchTerms.extra, receiverAuthorizer: randomKeypair().address } };
    await expect(client.createPaymentPayload(2, asX402(other))).rejects.toThrow(/bound to the receiver authorizer/);
    await expect(
      client.createPaymentPayload(2, asX402({ ...f.batchTerms, payTo: randomKeypair().address })),
    ).rejects.toThrow(/pays/);
  });

  it('pays from a channel whose authorizer it does not know (a hand-made signer): the facilitator decides', async () => {
    const { pay, ceilingOf } = setup({ bound: null });
    expect(ceilingOf(await pay())).toBe(5000n);
  });

  it('lets @x402/core’s spend controls pay the facilitator’s asset only, and picks batch-settlement among the options', async () => {
    const f = fixture();
    const assets = [{ network: 'stellar:local', asset: f.asset, decimals: 7, symbol: 'USDC' }];
    const paymentRequired: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1:1/r' },
      accepts: [asX402(f.terms), asX402(f.batchTerms)],
    };
    const scheme = new BatchSettlementStellarScheme(singleChannel(f.signer()), { assets });
    expect(scheme.findDefaultAsset(f.asset, 'stellar:local')).toMatchObject({ decimals: 7, symbol: 'USDC' });
    expect(scheme.findDefaultAsset(f.asset, 'stellar:testnet')).toBeUndefined();
    const payload = await new x402Client().register('stellar:*', scheme).createPaymentPayload(paymentRequired);
    expect(payload).toMatchObject({ accepted: f.batchTerms, payload: { type: 'voucher' } });
    const bare = new x402Client().register('stellar:*', new BatchSettlementStellarScheme(singleChannel(f.signer())));
    await expect(bare.createPaymentPayload(paymentRequired)).rejects.toThrow(/spendControls/);
  });
});

describe('the books, through onPaymentResponse', () => {
  it('adopts a paid answer’s charge, less than the price too, and signs the next ceiling from it', async () => {
    const { signer, pay, respond, ceilingOf, settled } = setup();
    const first = await pay();
    expect(await respond({ paymentPayload: first, settleResponse: settled('1200', '1200') })).toBeUndefined();
    expect(signer.cumulative).toBe(1200n);
    const second = await pay();
    expect(ceilingOf(second)).toBe(6200n);
    await respond({ paymentPayload: second, settleResponse: settled('5000', '6200') });
    expect(signer.cumulative).toBe(6200n);
    expect(signer.signed).toBe(6200n);
  });

  it('moves nothing on a failed settlement, a failed handler or a refusal that proves nothing', async () => {
    const { signer, pay, respond, ceilingOf, corrective, logs } = setup();
    const failed: SettleResponse = { success: false, errorReason: 'X', transaction: '', network: 'stellar:local' };
    await respond({ paymentPayload: await pay(), settleResponse: failed });
    await respond({ paymentPayload: await pay() }); // a 500 without PAYMENT-RESPONSE
    const refused = { ...corrective('0'), error: 'invalid_batch_settlement_stellar_channel_busy' };
    expect(await respond({ paymentPayload: await pay(), paymentRequired: refused })).toBeUndefined();
    expect(signer.cumulative).toBe(0n);
    expect(ceilingOf(await pay())).toBe(5000n);
    expect(logs).toEqual([]);
  });

  it.each([
    ['no charge', { chargedAmount: undefined }, /no charge/],
    ['a charge above the price', { chargedAmount: '5001' }, /above the price of 5000/],
    ['another channel', { channelId: '8' }, /for channel 8/],
    [
      'a total that is not the previous plus the charge',
      { chargedCumulativeAmount: '4000' },
      /not the 0 charged before/,
    ],
  ])('refuses a paid answer with %s, and signs no more on the channel', async (_what, change, reason) => {
    const { signer, pay, respond, settled, logs } = setup();
    const answer = settled('5000', '5000');
    const extra = answer.extra as { chargedAmount?: string; channelState: Record<string, unknown> };
    if ('chargedAmount' in change) {
      if (change.chargedAmount === undefined) delete extra.chargedAmount;
      else extra.chargedAmount = change.chargedAmount;
    } else Object.assign(extra.channelState, change);
    // The hook never throws: a thrown hook would reject the buyer's fetch.
    await expect(respond({ paymentPayload: await pay(), settleResponse: answer })).resolves.toBeUndefined();
    expect(signer.cumulative).toBe(0n);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(reason);
    await expect(pay()).rejects.toThrow(/channel 7 is not used any more by this client/);
  });

  it('holds the next payment on a channel until the previous one is answered, and lets the hold lapse', async () => {
    const { pay, respond, ceilingOf, settled } = setup();
    const first = await pay();
    let signed = false;
    const second = pay().then((p) => ((signed = true), p));
    await new Promise((r) => setTimeout(r, 20));
    expect(signed).toBe(false);
    await respond({ paymentPayload: first, settleResponse: settled('5000', '5000') });
    expect(ceilingOf(await second)).toBe(10_000n);
    const lapsing = setup({ holdTimeoutMs: 30 });
    const a = await lapsing.pay();
    expect(lapsing.ceilingOf(await lapsing.pay())).toBe(lapsing.ceilingOf(a));
  });
});

describe('the corrective 402', () => {
  it('adopts a charged total its own voucher proves, backwards too, and asks @x402/fetch for its one retry', async () => {
    const { signer, pay, respond, ceilingOf, corrective, own, settled } = setup();
    signer.sign(20_000n); // its books say 20000 was charged, the facilitator says 10000
    signer.confirm(20_000n);
    const payment = await pay();
    expect(ceilingOf(payment)).toBe(25_000n);
    expect(await respond({ paymentPayload: payment, paymentRequired: corrective('10000', own(25_000n)) })).toEqual({
      recovered: true,
    });
    expect(signer.cumulative).toBe(10_000n);
    const retried = await pay(); // not held: the answer released the channel
    expect(ceilingOf(retried)).toBe(15_000n);
    await respond({ paymentPayload: retried, settleResponse: settled('5000', '15000') });
    expect(signer.cumulative).toBe(15_000n);
  });

  it('learns a voucher its wallet forgot (a file put back to an older copy), since its key signed it', async () => {
    const { signer, pay, respond, corrective, own } = setup();
    const payment = await pay(); // the old copy knows of nothing signed
    expect(await respond({ paymentPayload: payment, paymentRequired: corrective('15000', own(15_000n)) })).toEqual({
      recovered: true,
    });
    expect([signer.cumulative, signer.signed]).toEqual([15_000n, 15_000n]);
  });

  it.each([
    ['no voucher', (s: ReturnType<typeof setup>) => s.corrective('5000'), /no voucher to prove/],
    [
      'a voucher of another key',
      (s: ReturnType<typeof setup>) =>
        s.corrective('40000', {
          signedMaxClaimable: '40000',
          signature: toHex(voucherContext(PASSPHRASE, s.f.channelContract).sign(randomKeypair(), 7n, 40_000n)),
        }),
      /not signed by this channel's voucher key/,
    ],
    [
      'a charge above its voucher',
      (s: ReturnType<typeof setup>) => s.corrective('5001', s.own(5000n)),
      /above its voucher/,
    ],
    [
      'a charge below what the ledger shows claimed',
      (s: ReturnType<typeof setup>) => s.corrective('0', s.own(5000n), { totalClaimed: '5000' }),
      /below the 5000 claimed/,
    ],
    [
      'another channel’s state',
      (s: ReturnType<typeof setup>) => s.corrective('0', s.own(5000n), { channelId: '8' }),
      /for channel 8/,
    ],
  ])('refuses a state with %s and moves nothing', async (_what, build, reason) => {
    const s = setup();
    s.signer.sign(5000n);
    s.signer.confirm(5000n);
    const payment = await s.pay();
    await expect(s.respond({ paymentPayload: payment, paymentRequired: build(s) })).resolves.toBeUndefined();
    expect([s.signer.cumulative, s.signer.signed]).toEqual([5000n, 10_000n]);
    expect(s.logs).toHaveLength(1);
    expect(s.logs[0]).toMatch(reason);
    expect(s.ceilingOf(await s.pay())).toBe(10_000n); // still signing: the 402 charged nothing
  });

  it('asks for no retry when the state matches its books, and reads only its own network’s option', async () => {
    const { signer, pay, respond, corrective, own, logs } = setup();
    signer.sign(5000n);
    signer.confirm(5000n);
    // The price changed, say: the same books would be refused again.
    expect(await respond({ paymentPayload: await pay(), paymentRequired: corrective('5000', own(5000n)) })).toBe(
      undefined,
    );
    const elsewhere = corrective('0', own(5000n));
    elsewhere.accepts = elsewhere.accepts.map((a) => ({ ...a, network: 'stellar:testnet' }));
    expect(await respond({ paymentPayload: await pay(), paymentRequired: elsewhere })).toBeUndefined();
    expect(logs.at(-1)).toMatch(/carries no channel state/);
    expect(signer.cumulative).toBe(5000n);
  });
});
