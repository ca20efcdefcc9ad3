// A seller that lies to the buyer's sdk. The seller writes the 402's terms, `extra.facilitator`
// among them, so whatever the buyer reads through them may be the seller's own word: payFetch must
// never sign more than what it owes on top of what it has itself signed, nor take a receipt for a
// cumulative it did not sign. The deposit is the buyer's maximum loss; one request must not be.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJsonHeader, encodeJsonHeader, randomKeypair, signReceipt } from '@svc/core';
import type { ChannelPayload, PaymentRequired } from '@svc/core';
import { PaymentError, payFetch } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

type Mode = 'not-increasing' | 'own-receipt';

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
      const accept = { ...terms!.accepts[0]!, extra: { ...terms!.accepts[0]!.extra, facilitator: sellerUrl } };
      const mine = { ...terms!, accepts: [accept] };
      if (req.url?.startsWith('/channels/')) {
        // The channel as the real facilitator shows it, but with nearly all of it "accepted".
        const view = (await (await fetch(`${h.url}${req.url}`)).json()) as Record<string, string>;
        const lastAccepted = (BigInt(view['deposit']!) - 5000n).toString();
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ...view, lastAccepted }));
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
