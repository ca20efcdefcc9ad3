// A buyer written only with @x402/fetch + the svc scheme client pays the facilitator's own
// /demo/book (an svc-native seller) 20 times: 20 receipts that verify offline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentResponseSchema, SupportedResponseSchema, decodeJsonHeader, verifyReceipt } from '@svc/core';
import { Wallet } from '@svc/sdk';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ChannelSchemeClient } from '../src/index.js';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Harness } from '../../facilitator/test/helpers/harness.js';

describe('@x402/fetch buyer → svc /demo/book', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('pays 20 times: 200 each time, receipts verify offline, cumulatives rise by the price', async () => {
    const wallet = Wallet.open();
    const client = new x402Client().register('stellar:*', await ChannelSchemeClient.fromFacilitator(h.url, wallet));
    const pay = wrapFetchWithPayment(fetch, client);
    const supported = SupportedResponseSchema.parse(await (await fetch(`${h.url}/supported`)).json());
    const signers = Object.values(supported.signers).flat();
    expect(signers).toContain(h.f.address);

    const seen: bigint[] = [];
    let channelId: string | undefined;
    for (let i = 1; i <= 20; i++) {
      const res = await pay(`${h.url}/demo/book`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { title: string; paidWith: { cumulative: string } };
      expect(body.title).toBe('The Cumulative Voucher');
      const header = res.headers.get('payment-response');
      expect(header).toBeTruthy();
      expect(decodePaymentResponseHeader(header!)).toMatchObject({
        success: true,
        network: 'stellar:local',
        transaction: '',
      });
      const decoded = decodeJsonHeader(header!, 64 * 1024);
      const payment = PaymentResponseSchema.parse(decoded.ok ? decoded.value : null);
      expect(verifyReceipt(payment.receipt, signers)).toEqual({ ok: true });
      expect(payment.receipt.resource).toBe(`${h.url}/demo/book`);
      expect(payment.receipt.amount).toBe('5000');
      channelId ??= payment.channelId;
      expect(payment.channelId).toBe(channelId);
      expect(body.paidWith.cumulative).toBe(payment.cumulative);
      seen.push(BigInt(payment.receipt.cumulative));
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => 5000n * BigInt(i + 1)));
    expect(wallet.channels).toHaveLength(1);
    expect(wallet.channels[0]!.cumulative).toBe(100_000n); // confirmed through the onPaymentResponse hook
    const view = (await (await fetch(`${h.url}/channels/${channelId}`)).json()) as {
      lastAccepted: string;
      vouchers: number;
    };
    expect(view).toMatchObject({ lastAccepted: '100000', vouchers: 20 });
  });

  it('pays concurrent requests on one channel one voucher at a time, each exactly once', async () => {
    const b = await h.buyer();
    const client = new x402Client().register(
      'stellar:*',
      await ChannelSchemeClient.fromFacilitator(h.url, { signerFor: () => Promise.resolve(b.signer) }),
    );
    const pay = wrapFetchWithPayment(fetch, client);
    const responses = await Promise.all(Array.from({ length: 6 }, () => pay(`${h.url}/demo/book`)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const cumulatives = responses.map((r) => {
      const decoded = decodeJsonHeader(r.headers.get('payment-response') ?? '', 64 * 1024);
      return PaymentResponseSchema.parse(decoded.ok ? decoded.value : null).cumulative;
    });
    expect(cumulatives.map(BigInt).sort((x, y) => (x < y ? -1 : 1))).toEqual([
      5000n,
      10_000n,
      15_000n,
      20_000n,
      25_000n,
      30_000n,
    ]);
    expect(b.signer.cumulative).toBe(30_000n);
    // No voucher collided: the facilitator rejected none on this channel.
    expect(await h.f.store.events({ types: ['voucher.rejected'], channelId: b.channelId, limit: 50 })).toEqual([]);
  });

  it('catches up when its books are behind the facilitator (VOUCHER_NOT_INCREASING → resync → retry)', async () => {
    const b = await h.buyer();
    const client = new x402Client().register(
      'stellar:*',
      await ChannelSchemeClient.fromFacilitator(h.url, { signerFor: () => Promise.resolve(b.signer) }),
    );
    const pay = wrapFetchWithPayment(fetch, client);
    // Another device spent on this channel: the facilitator accepted 10000 the signer never heard of.
    const other = await h.verify(b.signer.sign(10_000n));
    expect(other.body['isValid']).toBe(true);
    const res = await pay(`${h.url}/demo/book`);
    expect(res.status).toBe(200);
    const decoded = decodeJsonHeader(res.headers.get('payment-response') ?? '', 64 * 1024);
    expect(PaymentResponseSchema.parse(decoded.ok ? decoded.value : null).cumulative).toBe('15000');
    expect(b.signer.cumulative).toBe(15_000n);
    const rejected = await h.f.store.events({
      types: ['voucher.rejected'],
      channelId: b.channelId,
      limit: 50,
    });
    expect(rejected.map((e) => e.data['code'])).toEqual(['VOUCHER_NOT_INCREASING']);
  });
});
