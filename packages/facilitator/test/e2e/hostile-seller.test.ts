// A seller that lies to the buyer's sdk. The seller writes the 402's terms, `extra.facilitator`
// among them, so whatever the buyer reads through them may be the seller's own word: payFetch must
// never sign more than what it owes on top of what it has itself signed, nor take a receipt for a
// cumulative it did not sign. The deposit is the buyer's maximum loss; one request must not be.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJsonHeader, encodeJsonHeader, randomKeypair, signReceipt, isChannelTerms } from '@svc/core';
import type { ChannelPayload, PaymentRequired } from '@svc/core';
import { PaymentError, Wallet, payFetch, streamPaid } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

/** What an honest gate does with a payment: /verify at the real facilitator; the receipt it returns. */
async function verifiedAt(h: Harness, paymentPayload: unknown, paymentRequirements: unknown): Promise<unknown> {
  const res = await fetch(`${h.url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements, method: 'GET' }),
  });
  return ((await res.json()) as { extra: { receipt: unknown } }).extra.receipt;
}

type Mode = 'not-increasing' | 'own-receipt' | 'fails-after-payment' | 'unreadable-supported';

describe('payFetch against a seller that names itself as the facilitator', () => {
  let h: Harness;
  let seller: http.Server;
  let sellerUrl = '';
  let mode: Mode = 'not-increasing';
  const received: bigint[] = [];
  const hostile = randomKeypair();

  beforeAll(async () => {
    h = await startHarness();
    // The demo book's real terms, with the seller's own server as the facilitator.
    const real = decodeJsonHeader((await fetch(`${h.url}/demo/book`)).headers.get('payment-required')!);
    const terms = real.ok ? (real.value as PaymentRequired) : null;
    seller = http.createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
    async function answer(req: http.IncomingMessage, res: http.ServerResponse) {
      const facilitator = mode === 'unreadable-supported' ? `${sellerUrl}/broken` : sellerUrl;
      const accept = { ...terms!.accepts[0]!, extra: { ...terms!.accepts[0]!.extra, facilitator } };
      const mine = { ...terms!, accepts: [accept] };
      if (req.url?.startsWith('/channels/')) {
        // The channel as the real facilitator shows it, but with nearly all of it "accepted".
        const view = (await (await fetch(`${h.url}${req.url}`)).json()) as Record<string, string>;
        const lastAccepted = (BigInt(view['deposit']!) - 5000n).toString();
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ...view, lastAccepted }));
        return;
      }
      if (req.url === '/broken/supported') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>not an x402 facilitator</html>');
        return;
      }
      if (req.url === '/supported') {
        const supported = (await (await fetch(`${h.url}/supported`)).json()) as Record<string, unknown>;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ...supported, signers: { 'stellar:*': [hostile.address] } }));
        return;
      }
      const header = req.headers['payment-signature'];
      if (typeof header !== 'string') {
        res.writeHead(402, { 'payment-required': encodeJsonHeader(mine), 'content-type': 'application/json' });
        res.end(JSON.stringify(mine));
        return;
      }
      const decoded = decodeJsonHeader(header);
      const payload = (decoded.ok ? (decoded.value as { payload: ChannelPayload }).payload : null)!;
      received.push(BigInt(payload.cumulative));
      if (mode === 'fails-after-payment' || mode === 'unreadable-supported') {
        // An honest gate (the real facilitator accepts the voucher), then a handler that throws.
        const receipt = await verifiedAt(h, decoded.ok ? decoded.value : null, terms!.accepts[0]!);
        const status = mode === 'fails-after-payment' ? 500 : 200;
        res.writeHead(status, { 'payment-response': encodeJsonHeader(receipt) });
        res.end(status === 500 ? 'the handler failed' : 'served');
        return;
      }
      if (mode === 'not-increasing') {
        const refused = { ...mine, error: 'VOUCHER_NOT_INCREASING' };
        res.writeHead(402, { 'payment-required': encodeJsonHeader(refused), 'content-type': 'application/json' });
        res.end(JSON.stringify(refused));
        return;
      }
      // A receipt of the seller's own signing, for the whole deposit.
      const deposit = 5_000_000n;
      const receipt = signReceipt(hostile, {
        v: 1,
        network: accept.network,
        signer: hostile.address,
        channelId: payload.channelId,
        payer: hostile.address,
        payee: accept.payTo,
        resource: `${sellerUrl}/paid`,
        method: 'GET',
        unit: 'request',
        amount: deposit.toString(),
        cumulative: deposit.toString(),
        requestHash: null,
        ts: new Date().toISOString(),
      });
      const payment = {
        success: true,
        transaction: '',
        network: accept.network,
        payer: hostile.address,
        scheme: 'channel',
        channelId: payload.channelId,
        cumulative: deposit.toString(),
        delta: deposit.toString(),
        remaining: '0',
        latencyMs: 0,
        receipt,
      };
      res.writeHead(200, { 'payment-response': encodeJsonHeader(payment), 'content-type': 'text/plain' });
      res.end('served');
    }
    await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
    sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => seller.close(resolve));
    await h.close();
  });

  it('refuses to catch up to a cumulative it never signed (VOUCHER_NOT_INCREASING from the seller), signing no more than one price', async () => {
    mode = 'not-increasing';
    received.length = 0;
    const buyer = await h.buyer({ deposit: 5_000_000n });
    const paid = payFetch(`${sellerUrl}/paid`, {}, { signer: buyer.signer, maxAmount: 5000n });
    await expect(paid).rejects.toMatchObject({ name: 'PaymentError', code: 'RESYNC_REFUSED' });
    expect(received.length).toBeGreaterThan(0);
    expect(received.every((c) => c <= 5000n)).toBe(true);
    expect(buyer.signer.cumulative).toBe(0n);
  });

  it('returns the receipt of a payment taken before the handler failed, and keeps its books by it', async () => {
    mode = 'fails-after-payment';
    received.length = 0;
    const buyer = await h.buyer({ deposit: 5_000_000n });
    // The seller's terms name the real facilitator here: its receipts verify.
    const res = await payFetch(`${sellerUrl}/paid`, {}, { signer: buyer.signer, trustedSigners: [h.f.address] });
    expect(res.status).toBe(500);
    expect(res.payment?.receipt.cumulative).toBe('5000');
    expect(buyer.signer.cumulative).toBe(5000n);
  });

  it('opens no channel above the wallet’s maxDeposit, whatever minimum deposit the seller asks', async () => {
    const real = decodeJsonHeader((await fetch(`${h.url}/demo/book`)).headers.get('payment-required')!);
    const accept = (real.ok ? (real.value as PaymentRequired) : null)!.accepts.filter(isChannelTerms)[0]!;
    const greedy = { ...accept, extra: { ...accept.extra, minDeposit: '100000000000' } };
    const wallet = Wallet.open({ ledgerUrl: `${h.url}/ledger`, maxDeposit: 10_000_000n });
    await expect(wallet.signerFor(greedy)).rejects.toMatchObject({ code: 'DEPOSIT_ABOVE_LIMIT' });
    expect(wallet.channels).toHaveLength(0);
    expect((await wallet.signerFor(accept)).deposit).toBe(BigInt(accept.extra.minDeposit));
  });

  it('says the receipt cannot be checked when the facilitator’s /supported is unreadable, with the answer attached', async () => {
    mode = 'unreadable-supported';
    const buyer = await h.buyer({ deposit: 5_000_000n });
    const error = await payFetch(`${sellerUrl}/paid`, {}, { signer: buyer.signer }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'PaymentError', code: 'FACILITATOR_UNREADABLE' });
    expect(await (error as PaymentError).response?.text()).toBe('served');
  });

  it('refuses a receipt for a cumulative it did not sign, and keeps its books', async () => {
    mode = 'own-receipt';
    received.length = 0;
    const buyer = await h.buyer({ deposit: 5_000_000n });
    const paid = payFetch(`${sellerUrl}/paid`, {}, { signer: buyer.signer });
    await expect(paid).rejects.toBeInstanceOf(PaymentError);
    await expect(payFetch(`${sellerUrl}/paid`, {}, { signer: buyer.signer })).rejects.toMatchObject({
      code: 'BAD_RECEIPT',
    });
    expect(received).toEqual([5000n, 5000n]);
    expect(buyer.signer.cumulative).toBe(0n);
  });
});

describe('streamPaid against a seller that lies in its stream', () => {
  let h: Harness;
  let seller: http.Server;
  let sellerUrl = '';
  let mode: 'steal' | 'silent' = 'steal';
  const stolen: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    const real = decodeJsonHeader((await fetch(`${h.url}/demo/ticker/stream`)).headers.get('payment-required')!);
    const terms = (real.ok ? real.value : null) as PaymentRequired;
    const accept = terms.accepts[0]!;
    seller = http.createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
    async function answer(req: http.IncomingMessage, res: http.ServerResponse) {
      if (req.url === '/steal') {
        stolen.push(req.method ?? '');
        res.end('{}');
        return;
      }
      const header = req.headers['payment-signature'];
      if (typeof header !== 'string') {
        res.writeHead(402, { 'payment-required': encodeJsonHeader(terms), 'content-type': 'application/json' });
        res.end(JSON.stringify(terms));
        return;
      }
      // The first slice, verified by the real facilitator as an honest seller would.
      const decoded = decodeJsonHeader(header);
      const paymentPayload = decoded.ok ? (decoded.value as { payload: ChannelPayload }) : null;
      const receipt = await verifiedAt(h, paymentPayload, accept);
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'payment-response': encodeJsonHeader(receipt),
      });
      const paid = BigInt(paymentPayload!.payload.cumulative);
      const slice = BigInt(accept.extra.sliceAmount!);
      const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      const streamId = 'ab'.repeat(16);
      if (mode === 'steal') {
        send('session', { streamId, voucherUrl: `${sellerUrl}/steal`, sliceAmount: '99999999999' });
        send('payment-required', { requiredCumulative: '5000000' });
      } else {
        // Slices asked for one after the other, with nothing sent for any of them.
        send('session', { streamId, voucherUrl: `${h.url}/channels/${paymentPayload!.payload.channelId}/voucher` });
        for (let i = 1n; i <= 5n; i++) send('payment-required', { requiredCumulative: (paid + i * slice).toString() });
        send('done', { reason: 'TIMEOUT', units: 0, charged: null, vouchers: null });
      }
      res.end();
    }
    await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
    sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => seller.close(resolve));
    await h.close();
  });

  it('sends vouchers only to the terms’ facilitator, and pays no slice larger than the terms’', async () => {
    mode = 'steal';
    const buyer = await h.buyer({ deposit: 5_000_000n });
    await expect(streamPaid({ url: `${sellerUrl}/stream`, signer: buyer.signer })).rejects.toMatchObject({
      code: 'BAD_SESSION',
    });
    expect(stolen).toEqual([]);
    expect(buyer.signer.signed).toBe(buyer.signer.cumulative); // the first slice, and nothing more
  });

  it('pays no further slice while the stream sends nothing', async () => {
    mode = 'silent';
    const buyer = await h.buyer({ deposit: 5_000_000n });
    const run = await streamPaid({ url: `${sellerUrl}/stream`, signer: buyer.signer });
    expect(run.vouchers).toBe(1);
    expect(buyer.signer.signed).toBe(run.paid);
    expect(run.ended.reason).toBe('TIMEOUT');
  });
});
