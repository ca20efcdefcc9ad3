// ChannelSchemeClient: payload shape, spend controls, and cumulative bookkeeping through the
// onPaymentResponse hook @x402/fetch fires after the paid request.
import { describe, expect, it } from 'vitest';
import { fromHex, randomKeypair, voucherContext } from '@svc/core';
import { x402Client } from '@x402/core/client';
import type { PaymentResponseContext } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ChannelSchemeClient, singleChannel } from '../src/index.js';
import { PASSPHRASE, fixture } from './helpers/fixtures.js';

const asX402 = (t: object) => t as PaymentRequirements;

describe('ChannelSchemeClient.createPaymentPayload', () => {
  it('signs a voucher for accepted + price in the x402 v2 form', async () => {
    const f = fixture();
    const signer = f.signer();
    const client = new ChannelSchemeClient(singleChannel(signer));
    const out = await client.createPaymentPayload(2, asX402(f.terms));
    expect(out.x402Version).toBe(2);
    expect(Object.keys(out.payload).sort()).toEqual(['channelId', 'cumulative', 'signature']);
    expect(out.payload).toMatchObject({ channelId: '7', cumulative: '5000' });
    const sig = fromHex(out.payload['signature'] as string, 64);
    expect(voucherContext(PASSPHRASE, f.channelContract).verify(f.voucherKey.publicKey, 7n, 5000n, sig)).toBe(true);
    expect(signer.cumulative).toBe(0n); // not confirmed before the seller answers
  });

  it('answers the flat form for x402 v1 (amount in maxAmountRequired) and confirms at once', async () => {
    const f = fixture();
    const signer = f.signer();
    const { amount, ...v1 } = f.terms;
    const out = await new ChannelSchemeClient(singleChannel(signer)).createPaymentPayload(
      1,
      asX402({ ...v1, maxAmountRequired: amount, resource: 'http://x/y', description: '', mimeType: '' }),
    );
    expect(out).toMatchObject({
      x402Version: 1,
      scheme: 'channel',
      network: 'stellar:local',
      payload: { channelId: '7', cumulative: '5000' },
    });
    expect(signer.cumulative).toBe(5000n);
  });

  it('pays one slice for sliced units and per request when terms carry no unit', async () => {
    const f = fixture();
    const client = new ChannelSchemeClient(singleChannel(f.signer()));
    const sliced = await client.createPaymentPayload(
      2,
      asX402({ ...f.terms, unit: 'token', extra: { ...f.terms.extra, sliceTokens: 50, sliceAmount: '250000' } }),
    );
    expect(sliced.payload['cumulative']).toBe('250000');
    const other = fixture();
    const { unit: _unit, ...noUnit } = other.terms;
    const plain = await new ChannelSchemeClient(singleChannel(other.signer())).createPaymentPayload(2, asX402(noUnit));
    expect(plain.payload['cumulative']).toBe('5000');
  });

  it('refuses terms the channel cannot pay: another payee, a foreign scheme, the deposit, the spend cap', async () => {
    const f = fixture();
    const client = new ChannelSchemeClient(singleChannel(f.signer(6000n)));
    await expect(
      client.createPaymentPayload(2, asX402({ ...f.terms, payTo: randomKeypair().address })),
    ).rejects.toThrow(/pays/);
    await expect(client.createPaymentPayload(2, asX402({ ...f.terms, scheme: 'exact' }))).rejects.toThrow(
      /not svc channel terms/,
    );
    await expect(client.createPaymentPayload(2, asX402(f.terms), { maxAmountPerPayment: '4999' })).rejects.toThrow(
      /spend limit/,
    );
    await expect(client.createPaymentPayload(2, asX402({ ...f.terms, amount: '7000' }))).rejects.toThrow(
      /exceed the deposit/,
    );
    await expect(client.createPaymentPayload(3, asX402(f.terms))).rejects.toThrow(/version 3/);
  });
});

describe('findDefaultAsset and @x402/core spend controls', () => {
  const paymentRequired = (terms: object): PaymentRequired => ({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1:1/r' },
    accepts: [asX402(terms)],
  });

  it('describes only the assets it was given', () => {
    const f = fixture();
    const client = new ChannelSchemeClient(singleChannel(f.signer()), {
      assets: [{ network: 'stellar:local', asset: f.asset, decimals: 7, symbol: 'USDC' }],
    });
    expect(client.findDefaultAsset(f.asset, 'stellar:local')).toMatchObject({
      asset: f.asset,
      decimals: 7,
      symbol: 'USDC',
    });
    expect(client.findDefaultAsset(f.asset, 'stellar:testnet')).toBeUndefined();
    expect(client.findDefaultAsset(f.channelContract, 'stellar:local')).toBeUndefined();
  });

  it('lets the default spend controls pay the described asset and refuse an undescribed one', async () => {
    const f = fixture();
    const described = new x402Client().register(
      'stellar:*',
      new ChannelSchemeClient(singleChannel(f.signer()), {
        assets: [{ network: 'stellar:local', asset: f.asset, decimals: 7, symbol: 'USDC' }],
      }),
    );
    const payload = await described.createPaymentPayload(paymentRequired(f.terms));
    expect(payload).toMatchObject({
      x402Version: 2,
      accepted: f.terms,
      resource: { url: 'http://127.0.0.1:1/r' },
      payload: { cumulative: '5000' },
    });
    const bare = new x402Client().register('stellar:*', new ChannelSchemeClient(singleChannel(f.signer())));
    await expect(bare.createPaymentPayload(paymentRequired(f.terms))).rejects.toThrow(/spendControls/);
  });

  it('applies the default $1 cap in base units of 7 decimals', async () => {
    const f = fixture();
    const client = new x402Client().register(
      'stellar:*',
      new ChannelSchemeClient(singleChannel(f.signer(100_000_000n)), {
        assets: [{ network: 'stellar:local', asset: f.asset, decimals: 7, symbol: 'USDC' }],
      }),
    );
    await expect(
      client.createPaymentPayload(paymentRequired({ ...f.terms, amount: '10000000' })),
    ).resolves.toMatchObject({ payload: { cumulative: '10000000' } });
    await expect(client.createPaymentPayload(paymentRequired({ ...f.terms, amount: '10000001' }))).rejects.toThrow(
      /maxAmountPerPayment/,
    );
  });
});

describe('bookkeeping through onPaymentResponse', () => {
  const setup = (fetchImpl?: typeof fetch, holdTimeoutMs?: number) => {
    const f = fixture();
    const signer = f.signer();
    const client = new ChannelSchemeClient(singleChannel(signer), {
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
      ...(holdTimeoutMs ? { holdTimeoutMs } : {}),
    });
    const pay = async () => {
      const result = await client.createPaymentPayload(2, asX402(f.terms));
      const paymentPayload: PaymentPayload = { x402Version: 2, accepted: asX402(f.terms), payload: result.payload };
      return paymentPayload;
    };
    const respond = (ctx: Omit<PaymentResponseContext, 'requirements'>) =>
      client.schemeHooks.onPaymentResponse!({ ...ctx, requirements: asX402(f.terms) });
    return { f, signer, client, pay, respond };
  };

  it('confirms a voucher only when the seller reports success', async () => {
    const { signer, pay, respond } = setup();
    const first = await pay();
    await respond({
      paymentPayload: first,
      settleResponse: { success: false, errorReason: 'X', transaction: '', network: 'stellar:local' },
    });
    expect(signer.cumulative).toBe(0n);
    const again = await pay();
    expect(again.payload['cumulative']).toBe('5000');
    await respond({
      paymentPayload: again,
      settleResponse: { success: true, transaction: '', network: 'stellar:local' },
    });
    expect(signer.cumulative).toBe(5000n);
    expect((await pay()).payload['cumulative']).toBe('10000');
  });

  it('holds the next payment on a channel until the previous one is answered', async () => {
    const { pay, respond } = setup();
    const first = await pay();
    let secondSigned = false;
    const second = pay().then((p) => {
      secondSigned = true;
      return p;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(secondSigned).toBe(false);
    await respond({
      paymentPayload: first,
      settleResponse: { success: true, transaction: '', network: 'stellar:local' },
    });
    expect((await second).payload['cumulative']).toBe('10000');
  });

  it('lets a hold lapse when no answer ever comes', async () => {
    const { pay } = setup(undefined, 30);
    const first = await pay();
    const second = await pay();
    expect(second.payload['cumulative']).toBe(first.payload['cumulative']);
  });

  it('resyncs from the facilitator on VOUCHER_NOT_INCREASING and asks for a retry, up to what it signed', async () => {
    const urls: string[] = [];
    let claimed = '25000';
    const fakeFetch = ((url: string) => {
      urls.push(url);
      return Promise.resolve(new Response(JSON.stringify(view(claimed))));
    }) as unknown as typeof fetch;
    const { signer, pay, respond } = setup(fakeFetch);
    const rejected = (error: string) => ({ x402Version: 2, error, resource: { url: 'http://x/r' }, accepts: [] });
    const view = (lastAccepted: string) => ({
      id: '7',
      network: 'stellar:local',
      channelContract: signer.channelContract,
      payer: randomKeypair().address,
      payee: signer.payee,
      asset: signer.asset,
      voucherKey: '0'.repeat(64),
      deposit: '1000000',
      claimed: '0',
      lastAccepted,
      charged: lastAccepted,
      unclaimed: lastAccepted,
      remaining: '0',
      expiryLedger: 100,
      expiresInLedgers: 90,
      status: 'open',
      vouchers: 5,
      vouchersSinceClaim: 5,
      openedAt: null,
      lastVoucherAt: null,
      closedAt: null,
      refunded: null,
    });
    // A facilitator (which the seller names) saying more was accepted than was ever signed: no
    // recovery, and the books stay, so that the next voucher does not pay for it.
    claimed = '50000';
    const lied = await pay();
    expect(
      await respond({ paymentPayload: lied, paymentRequired: rejected('VOUCHER_NOT_INCREASING') }),
    ).toBeUndefined();
    expect(urls).toEqual(['http://127.0.0.1:9/channels/7']);
    expect(signer.cumulative).toBe(0n);
    urls.length = 0;
    claimed = '25000';
    signer.sign(25_000n); // a voucher whose answer was lost: the facilitator may have accepted it
    const first = await pay();
    expect(await respond({ paymentPayload: first, paymentRequired: rejected('VOUCHER_NOT_INCREASING') })).toEqual({
      recovered: true,
    });
    expect(urls).toEqual(['http://127.0.0.1:9/channels/7']);
    expect(signer.cumulative).toBe(25_000n);
    const retried = await pay();
    expect(retried.payload['cumulative']).toBe('30000');
    await respond({
      paymentPayload: retried,
      settleResponse: { success: true, transaction: '', network: 'stellar:local' },
    });
    // The facilitator is not ahead of our books: no pointless retry. Another rejection: no resync.
    const third = await pay();
    expect(
      await respond({ paymentPayload: third, paymentRequired: rejected('VOUCHER_NOT_INCREASING') }),
    ).toBeUndefined();
    const fourth = await pay();
    expect(await respond({ paymentPayload: fourth, paymentRequired: rejected('CHANNEL_EXHAUSTED') })).toBeUndefined();
    expect(urls).toHaveLength(2);
  });
});
