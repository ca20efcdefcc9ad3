// x402's payment-identifier extension, end to end over real HTTP: an svc seller (@svc/meter) on
// this facilitator declares it in its 402 (with the batch-settlement option), and a buyer that
// sends the same payment again under the same id — its answer lost — gets the same answer and is
// charged once; the id on another payment or another request is refused 409
// invalid_payment_identifier_conflict, a malformed id 400 invalid_payment_identifier; the answers
// survive a restart of the facilitator (they are in its store). payFetch's `paymentId` does the
// same for the `channel` scheme.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BATCH_SCHEME,
  PAYMENT_IDENTIFIER,
  decodeJsonHeader,
  encodeJsonHeader,
  generatePaymentId,
  randomKeypair,
} from '@svc/core';
import type { BatchRequirements, PaymentRequired } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { svc } from '@svc/meter';
import { payFetch } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const PRICE = 5000n;

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

describe('payment-identifier: the same payment under the same id is answered again and charged once', () => {
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-payid-ledger-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-payid-data-'));
  let ledger: LedgerServer;
  let h: Harness;
  let seller: http.Server;
  let sellerUrl = '';
  let terms: PaymentRequired;
  let batchTerms: BatchRequirements;
  const payTo = randomKeypair().address;
  const served: string[] = [];

  const start = (port = '0') =>
    startHarness({ LEDGER_URL: ledger.url, DEMO: 'off', LOG_LEVEL: 'fatal', DATA_DIR: dataDir, PORT: port });

  beforeAll(async () => {
    ledger = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    h = await start();
    // The seller asks the facilitator through a stable address: the facilitator restarts on its port.
    const client = svc({ facilitator: h.url, payTo });
    const app = express();
    const paid = client.meter({ price: PRICE, unit: 'request' });
    app.get('/weather', paid, (req, res) => {
      served.push(typeof req.query['city'] === 'string' ? req.query['city'] : '');
      res.json({ sunny: true });
    });
    seller = http.createServer(app);
    sellerUrl = await listen(seller);
    const res = await fetch(`${sellerUrl}/weather?city=terms`);
    expect(res.status).toBe(402);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    terms = decoded.ok ? (decoded.value as PaymentRequired) : (null as never);
    batchTerms = terms.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
  });

  afterAll(async () => {
    await new Promise<void>((r) => seller?.close(() => r()));
    await h?.close();
    await ledger?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  /** A batch-settlement PAYMENT-SIGNATURE for `ceiling`, named `id` (as the 402 declares the extension). */
  function batchHeader(b: Buyer, ceiling: bigint, id: string | null): string {
    const v = b.signer.sign(ceiling);
    const declared = terms.extensions[PAYMENT_IDENTIFIER]!;
    return encodeJsonHeader({
      x402Version: 2,
      accepted: batchTerms,
      payload: {
        type: 'voucher',
        voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
      },
      ...(id === null ? {} : { extensions: { [PAYMENT_IDENTIFIER]: { ...declared, info: { required: false, id } } } }),
    });
  }

  const send = (url: string, header: string) => fetch(url, { headers: { 'payment-signature': header } });

  async function channel(id: bigint) {
    const view = (await (await fetch(`${h.url}/channels/${id}`)).json()) as {
      lastAccepted: string;
      charged?: string;
      vouchers: number;
    };
    return { lastAccepted: BigInt(view.lastAccepted), charged: BigInt(view.charged ?? '0'), vouchers: view.vouchers };
  }

  it('the 402 declares payment-identifier, not required, with the schema of the extension', () => {
    expect(terms.accepts.map((a) => a.scheme)).toEqual(['channel', 'batch-settlement']);
    expect(terms.extensions[PAYMENT_IDENTIFIER]).toEqual({
      info: { required: false },
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          required: { type: 'boolean' },
          id: { type: 'string', minLength: 16, maxLength: 128 },
        },
        required: ['required'],
      },
    });
  });

  it('batch-settlement: the same payment sent twice under its id gets the same answer, charged once; another payment or request under the id is a 409', async () => {
    const b = await h.buyer({ batch: true, payee: payTo });
    served.length = 0;
    const id = generatePaymentId();
    const header = batchHeader(b, PRICE, id);
    const first = await send(`${sellerUrl}/weather?city=a`, header);
    expect(first.status).toBe(200);
    const receipt = first.headers.get('payment-response');
    expect(receipt).toBeTruthy();
    // The buyer lost that answer and sends the very same payment again.
    const again = await send(`${sellerUrl}/weather?city=a`, header);
    expect(again.status).toBe(200);
    expect(again.headers.get('payment-response')).toBe(receipt);
    expect(await again.json()).toEqual({ sunny: true });
    // The meter keeps no body: the handler serves the request again, and the buyer is not charged again.
    expect(served).toEqual(['a', 'a']);
    expect(await channel(b.channelId)).toEqual({ lastAccepted: PRICE, charged: PRICE, vouchers: 1 });

    // The id on another payment (the next voucher), or on the same payment for another request: refused.
    const other = await send(`${sellerUrl}/weather?city=a`, batchHeader(b, 2n * PRICE, id));
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error: 'invalid_payment_identifier_conflict', source: 'facilitator' });
    const elsewhere = await send(`${sellerUrl}/weather?city=b`, header);
    expect(elsewhere.status).toBe(409);
    expect(served).toEqual(['a', 'a']);
    expect(await channel(b.channelId)).toEqual({ lastAccepted: PRICE, charged: PRICE, vouchers: 1 });

    // The next payment under a new id is charged as usual.
    const next = await send(`${sellerUrl}/weather?city=c`, batchHeader(b, 2n * PRICE, generatePaymentId()));
    expect(next.status).toBe(200);
    expect(await channel(b.channelId)).toMatchObject({ charged: 2n * PRICE, vouchers: 2 });
  });

  it('copies of a named payment sent at once: each is answered as the one charge', async () => {
    const b = await h.buyer({ batch: true, payee: payTo });
    served.length = 0;
    const header = batchHeader(b, PRICE, generatePaymentId());
    const answers = await Promise.all(Array.from({ length: 4 }, () => send(`${sellerUrl}/weather?city=race`, header)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((r) => r.headers.get('payment-response'))).size).toBe(1);
    expect(await channel(b.channelId)).toEqual({ lastAccepted: PRICE, charged: PRICE, vouchers: 1 });
  });

  it('without an id, the same payment sent again is not served again (the corrective 402)', async () => {
    const b = await h.buyer({ batch: true, payee: payTo });
    served.length = 0;
    const header = batchHeader(b, PRICE, null);
    expect((await send(`${sellerUrl}/weather?city=x`, header)).status).toBe(200);
    const again = await send(`${sellerUrl}/weather?city=x`, header);
    expect(again.status).toBe(402);
    expect(served).toEqual(['x']);
  });

  it('a malformed id is refused 400 invalid_payment_identifier, by the meter and by the facilitator, and nothing is charged', async () => {
    const b = await h.buyer({ batch: true, payee: payTo });
    served.length = 0;
    const res = await send(`${sellerUrl}/weather?city=m`, batchHeader(b, PRICE, 'short!'));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_payment_identifier', source: 'gateway' });
    const v = b.signer.sign(PRICE);
    const direct = await fetch(`${h.url}/settle`, {
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
          extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id: 'x'.repeat(129) } } },
          resource: { url: `${sellerUrl}/weather` },
        },
        paymentRequirements: batchTerms,
        method: 'GET',
      }),
    });
    expect(direct.status).toBe(200);
    expect(await direct.json()).toMatchObject({ success: false, errorReason: 'invalid_payment_identifier' });
    expect(served).toEqual([]);
    expect(await channel(b.channelId)).toEqual({ lastAccepted: 0n, charged: 0n, vouchers: 0 });
  });

  it('channel scheme with payFetch: a request retried under its paymentId after a lost answer is served and charged once', async () => {
    const b = await h.buyer({ payee: payTo });
    served.length = 0;
    const paymentId = generatePaymentId();
    // The network loses the seller's first paid answer (it was served and charged).
    let lose = 1;
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const paid = new Headers(init?.headers).has('payment-signature');
      if (paid && lose > 0) {
        lose--;
        throw new TypeError('fetch failed: the connection was reset');
      }
      return res;
    };
    const url = `${sellerUrl}/weather?city=pf`;
    await expect(payFetch(url, {}, { signer: b.signer, paymentId, fetch: lossy })).rejects.toThrow(/reset/);
    expect(served).toEqual(['pf']);
    const res = await payFetch(url, {}, { signer: b.signer, paymentId, fetch: lossy });
    expect(res.status).toBe(200);
    expect(res.payment?.cumulative).toBe(PRICE.toString());
    expect(served).toEqual(['pf', 'pf']);
    expect(await channel(b.channelId)).toMatchObject({ lastAccepted: PRICE, vouchers: 1 });
    // The next request, under a new id, pays the next voucher.
    const next = await payFetch(url, {}, { signer: b.signer, paymentId: generatePaymentId() });
    expect(next.payment?.cumulative).toBe((2n * PRICE).toString());
  });

  it('at the facilitator, channel scheme: /verify and /settle of the same payment under its id answer the same receipt, accepted once', async () => {
    const b = await h.buyer({ payee: payTo });
    const requirements = h.requirements({ payTo, amount: PRICE.toString() });
    const body = (id: string, cumulative: bigint, resource = `${sellerUrl}/direct`) =>
      JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: requirements,
          payload: b.signer.sign(cumulative),
          resource: { url: resource },
          extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id } } },
        },
        paymentRequirements: requirements,
        method: 'GET',
      });
    const post = async (route: '/verify' | '/settle', json: string) => {
      const res = await fetch(`${h.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: json,
      });
      expect(res.status).toBe(200);
      return (await res.json()) as {
        isValid?: boolean;
        success?: boolean;
        receipt?: { id: string };
        invalidReason?: string;
        errorReason?: string;
      };
    };
    const id = generatePaymentId();
    const first = await post('/verify', body(id, PRICE));
    expect(first).toMatchObject({ isValid: true });
    const receiptId = first.receipt!.id;
    expect((await post('/verify', body(id, PRICE))).receipt?.id).toBe(receiptId);
    const settled = await post('/settle', body(id, PRICE));
    expect(settled.success).toBe(true);
    expect(settled.receipt?.id).toBe(receiptId);
    expect((await post('/settle', body(id, PRICE))).receipt?.id).toBe(receiptId);
    expect(await channel(b.channelId)).toMatchObject({ lastAccepted: PRICE, vouchers: 1 });
    expect((await post('/verify', body(id, 2n * PRICE))).invalidReason).toBe('invalid_payment_identifier_conflict');
    expect((await post('/settle', body(id, PRICE, `${sellerUrl}/other`))).errorReason).toBe(
      'invalid_payment_identifier_conflict',
    );
    expect(await channel(b.channelId)).toMatchObject({ lastAccepted: PRICE, vouchers: 1 });
  });

  it('survives a restart of the facilitator: the same payment under its id is still answered as charged, once', async () => {
    const b = await h.buyer({ batch: true, payee: payTo });
    served.length = 0;
    const id = generatePaymentId();
    const header = batchHeader(b, PRICE, id);
    const first = await send(`${sellerUrl}/weather?city=r`, header);
    expect(first.status).toBe(200);
    const port = new URL(h.url).port;
    await h.close();
    h = await start(port);
    const again = await send(`${sellerUrl}/weather?city=r`, header);
    expect(again.status).toBe(200);
    expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
    expect(await channel(b.channelId)).toEqual({ lastAccepted: PRICE, charged: PRICE, vouchers: 1 });
    const conflict = await send(`${sellerUrl}/weather?city=r`, batchHeader(b, 2n * PRICE, id));
    expect(conflict.status).toBe(409);
  });
});
