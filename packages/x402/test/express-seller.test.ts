// An @x402/express seller paid through the svc facilitator: by the svc SDK's payFetch and by an
// @x402/fetch buyer; a rejected payment is a 402 with the reason, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PaymentResponseSchema,
  SupportedResponseSchema,
  decodeJsonHeader,
  encodeJsonHeader,
  randomKeypair,
  verifyReceipt,
} from '@svc/core';
import { ChannelSigner, payFetch } from '@svc/sdk';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ChannelSchemeClient, SvcFacilitatorClient, singleChannel } from '../src/index.js';
import type { VoucherSigner } from '../src/index.js';
import { startSeller } from './helpers/seller.js';
import type { Seller } from './helpers/seller.js';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Harness } from '../../facilitator/test/helpers/harness.js';

const PASSPHRASE = 'Standalone Network ; February 2017';

function decodeHeader(res: Response, name: string): Record<string, unknown> {
  const decoded = decodeJsonHeader(res.headers.get(name) ?? '', 64 * 1024);
  if (!decoded.ok) throw new Error(`no readable ${name}`);
  return decoded.value as Record<string, unknown>;
}

describe('@x402/express seller + svc facilitator', () => {
  let h: Harness;
  let official: Seller; // the stock HTTPFacilitatorClient
  let keeping: Seller; // SvcFacilitatorClient: the svc receipt reaches the buyer
  let signers: string[];
  const x402Buyer = async (signer: VoucherSigner) =>
    wrapFetchWithPayment(
      fetch,
      new x402Client().register('stellar:*', await ChannelSchemeClient.fromFacilitator(h.url, singleChannel(signer))),
    );

  beforeAll(async () => {
    h = await startHarness();
    official = await startSeller(new HTTPFacilitatorClient({ url: h.url }), randomKeypair().address);
    keeping = await startSeller(new SvcFacilitatorClient({ url: h.url }), randomKeypair().address);
    signers = Object.values(
      SupportedResponseSchema.parse(await (await fetch(`${h.url}/supported`)).json()).signers,
    ).flat();
  });
  afterAll(async () => {
    await official.close();
    await keeping.close();
    await h.close();
  });

  it('answers 402 with channel terms filled from the facilitator', async () => {
    const res = await fetch(`${official.url}/weather`);
    expect(res.status).toBe(402);
    const terms = decodeHeader(res, 'payment-required') as { x402Version: number; accepts: Record<string, unknown>[] };
    const info = await h.ledger.info();
    expect(terms.x402Version).toBe(2);
    expect(terms.accepts).toEqual([
      {
        scheme: 'channel',
        network: 'stellar:local',
        asset: info.contracts.asset,
        payTo: official.payTo,
        amount: '5000',
        unit: 'request',
        maxTimeoutSeconds: 300,
        extra: {
          channelContract: info.contracts.channel,
          minDeposit: '5000000',
          facilitator: h.url,
          areFeesSponsored: true,
        },
      },
    ]);
    expect(official.served()).toBe(0);
  });

  it('is paid by an @x402/fetch buyer through the stock facilitator client', async () => {
    const b = await h.buyer({ payee: official.payTo });
    const pay = await x402Buyer(b.signer);
    for (let i = 1; i <= 3; i++) {
      const res = await pay(`${official.url}/weather`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ city: 'Lisbon', forecast: 'sunny' });
      expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).toMatchObject({
        success: true,
        transaction: '',
        network: 'stellar:local',
        payer: b.keys.address,
      });
      expect(b.signer.cumulative).toBe(5000n * BigInt(i));
    }
    expect(official.served()).toBe(3);
    const view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as {
      lastAccepted: string;
      vouchers: number;
      payee: string;
    };
    expect(view).toMatchObject({ lastAccepted: '15000', vouchers: 3, payee: official.payTo });
  });

  it('is paid by an @x402/fetch buyer with a receipt that verifies offline (SvcFacilitatorClient)', async () => {
    const b = await h.buyer({ payee: keeping.payTo });
    const pay = await x402Buyer(b.signer);
    for (let i = 1; i <= 2; i++) {
      const res = await pay(`${keeping.url}/weather`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ city: 'Lisbon', forecast: 'sunny' });
      const payment = PaymentResponseSchema.parse(decodeHeader(res, 'payment-response'));
      expect(verifyReceipt(payment.receipt, signers)).toEqual({ ok: true });
      expect(payment.receipt).toMatchObject({
        payee: keeping.payTo,
        resource: `${keeping.url}/weather`,
        amount: '5000',
        cumulative: String(5000 * i),
        channelId: b.channelId.toString(),
      });
    }
  });

  it('is paid by the svc SDK’s payFetch (terms read, receipt checked offline)', async () => {
    const b = await h.buyer({ payee: keeping.payTo });
    const before = keeping.served();
    for (let i = 1; i <= 2; i++) {
      const res = await payFetch(`${keeping.url}/weather`, {}, { signer: b.signer });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ city: 'Lisbon', forecast: 'sunny' });
      expect(res.payment?.receipt).toMatchObject({ payee: keeping.payTo, cumulative: String(5000 * i) });
      expect(verifyReceipt(res.payment?.receipt, signers)).toEqual({ ok: true });
    }
    expect(keeping.served()).toBe(before + 2);
    expect(b.signer.cumulative).toBe(10_000n);
  });

  it('is paid by payFetch through the stock facilitator client too, with the receipt relayed under `extra`', async () => {
    const b = await h.buyer({ payee: official.payTo });
    const before = official.served();
    const res = await payFetch(`${official.url}/weather`, {}, { signer: b.signer });
    expect(res.status).toBe(200);
    expect(res.payment?.receipt).toMatchObject({ payee: official.payTo, cumulative: '5000' });
    expect(official.served()).toBe(before + 1);
    const view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as { lastAccepted: string };
    expect(view.lastAccepted).toBe('5000');
  });

  describe('a rejected payment is a 402 with the reason, never a 5xx', () => {
    const payRaw = async (seller: Seller, signer: ChannelSigner, cumulative: bigint) => {
      const terms = decodeHeader(await fetch(`${seller.url}/weather`), 'payment-required') as {
        accepts: Record<string, unknown>[];
        resource: unknown;
      };
      const payload = signer.sign(cumulative);
      const header = encodeJsonHeader({
        x402Version: 2,
        accepted: terms.accepts[0],
        payload,
        resource: terms.resource,
      });
      return fetch(`${seller.url}/weather`, { headers: { 'PAYMENT-SIGNATURE': header } });
    };

    it('a channel to another payee: WRONG_PAYEE', async () => {
      const b = await h.buyer(); // pays the demo seller, not this one
      const before = official.served();
      const res = await payRaw(official, b.signer, 5000n);
      expect(res.status).toBe(402);
      expect(decodeHeader(res, 'payment-required')['error']).toBe('WRONG_PAYEE');
      expect(official.served()).toBe(before);
    });

    it('a voucher over the deposit: CHANNEL_EXHAUSTED, and the @x402/fetch buyer gets the 402 unconfirmed', async () => {
      const b = await h.buyer({ payee: official.payTo, deposit: 5000n });
      // A signer that believes the deposit is larger than it is.
      const info = await h.ledger.info();
      const liar = new ChannelSigner({
        channelId: b.channelId,
        deposit: 1_000_000n,
        voucherKey: b.voucherKey,
        networkPassphrase: PASSPHRASE,
        channelContract: info.contracts.channel,
        network: info.network,
        payee: official.payTo,
        asset: info.contracts.asset,
      });
      const before = official.served();
      const raw = await payRaw(official, liar, 10_000n);
      expect(raw.status).toBe(402);
      expect(decodeHeader(raw, 'payment-required')['error']).toBe('CHANNEL_EXHAUSTED');

      liar.confirm(5000n); // pretend one payment went through: the next voucher is 10000 > deposit
      const res = await (await x402Buyer(liar))(`${official.url}/weather`);
      expect(res.status).toBe(402);
      expect(decodeHeader(res, 'payment-required')['error']).toBe('CHANNEL_EXHAUSTED');
      expect(liar.cumulative).toBe(5000n);
      expect(official.served()).toBe(before);
    });

    it('a forged signature: VOUCHER_BAD_SIGNATURE', async () => {
      const b = await h.buyer({ payee: keeping.payTo });
      const info = await h.ledger.info();
      const forger = new ChannelSigner({
        channelId: b.channelId,
        deposit: b.signer.deposit,
        voucherKey: randomKeypair(),
        networkPassphrase: PASSPHRASE,
        channelContract: info.contracts.channel,
        network: info.network,
        payee: keeping.payTo,
        asset: info.contracts.asset,
      });
      const res = await payRaw(keeping, forger, 5000n);
      expect(res.status).toBe(402);
      expect(decodeHeader(res, 'payment-required')['error']).toBe('VOUCHER_BAD_SIGNATURE');
    });
  });
});
