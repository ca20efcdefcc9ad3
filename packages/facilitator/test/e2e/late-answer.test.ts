// A late /verify answer must not make the buyer pay twice. The facilitator accepted
// the voucher, but its answer reached the meter after the meter's timeout (a slow network here; a
// store stall does the same): the seller answered 503 and served nothing, the buyer sent the same
// payment again, the meter asked under a new Idempotency-Key, the facilitator said
// VOUCHER_NOT_INCREASING, and payFetch caught up and paid once more — 12 vouchers accepted for 11
// answers. Now an accepted payment that its meter gave up on stays good for the request it paid
// for: the same payment for the same request is accepted again as the same payment, served, and
// charged once. Nothing else changes: the same payment for another request, or once served, is
// still refused.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { svc } from '@svc/meter';
import { payFetch } from '@svc/sdk';
import { SQLITE_FILE_NAME } from '../../src/store/open-store.js';
import { paymentHeader, startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const PRICE = 5000n;
const METER_TIMEOUT_MS = 300;

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** A proxy in front of the facilitator whose network is slow for the next `slow` answers to POST /verify. */
async function slowNetwork(target: string) {
  const state = { slow: 0, delayMs: 3 * METER_TIMEOUT_MS };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const late = req.method === 'POST' && req.url === '/verify' && state.slow > 0;
      if (late) state.slow--;
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'idempotency-key', 'authorization'])
        if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      void fetch(`${target}${req.url ?? ''}`, {
        method: req.method ?? 'GET',
        headers,
        ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
      }).then(async (r) => {
        const text = await r.text();
        // The facilitator has answered (and committed): the answer is what arrives late.
        if (late) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
        if (res.destroyed) return;
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      });
    });
  });
  const url = await listen(server);
  return { url, state, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('a /verify answer that reaches the meter after its timeout', () => {
  let h: Harness;
  let proxy: Awaited<ReturnType<typeof slowNetwork>>;
  let seller: http.Server;
  let sellerUrl = '';
  const payTo = randomKeypair().address;
  const served: string[] = [];

  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off' });
    proxy = await slowNetwork(h.url);
    const client = svc({ facilitator: proxy.url, payTo, timeoutMs: METER_TIMEOUT_MS });
    const app = express();
    const paid = client.meter({ price: PRICE, unit: 'request' });
    app.get('/weather', paid, (req, res) => {
      served.push(typeof req.query['city'] === 'string' ? req.query['city'] : '');
      res.json({ sunny: true });
    });
    app.post('/chat', paid, (_req, res) => {
      served.push('chat');
      res.json({ ok: true });
    });
    seller = http.createServer(app);
    sellerUrl = await listen(seller);
  });

  afterAll(async () => {
    await new Promise<void>((r) => seller?.close(() => r()));
    await proxy?.close();
    await h?.close();
  });

  async function channel(id: bigint) {
    const view = (await (await fetch(`${h.url}/channels/${id}`)).json()) as { lastAccepted: string; vouchers: number };
    return { lastAccepted: BigInt(view.lastAccepted), vouchers: view.vouchers };
  }

  it('serves the same payment for the same request when the buyer sends it again, and charges it once', async () => {
    const buyer = await h.buyer({ payee: payTo });
    served.length = 0;
    let answers = 0;
    for (let i = 1; i <= 12; i++) {
      // The third payment's answer, and the meter's own retry of it, reach the meter too late.
      if (i === 3) proxy.state.slow = 2;
      const url = `${sellerUrl}/weather?city=c${i}`;
      let res = await payFetch(url, {}, { signer: buyer.signer });
      for (let retry = 0; res.status === 503 && retry < 3; retry++) {
        expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/);
        res = await payFetch(url, {}, { signer: buyer.signer }); // the buyer tries the same request again
      }
      expect(res.status, `request ${i}`).toBe(200);
      expect(res.payment?.cumulative).toBe(formatted(PRICE * BigInt(i)));
      answers++;
    }
    expect(proxy.state.slow).toBe(0);
    expect(answers).toBe(12);
    expect(served).toHaveLength(12);
    expect(await channel(buyer.channelId)).toEqual({ lastAccepted: PRICE * 12n, vouchers: 12 });
  });

  it('a store stall that holds the answer past the meter’s timeout: the buyer’s retry is served and charged once', async () => {
    const buyer = await h.buyer({ payee: payTo });
    served.length = 0;
    const url = `${sellerUrl}/weather?city=stall`;
    expect((await payFetch(`${sellerUrl}/weather?city=before`, {}, { signer: buyer.signer })).status).toBe(200);
    // Another connection holds the store's write lock for three meter timeouts: the facilitator's
    // commit of the next payment waits for it (under its busy timeout), and so its answer.
    const db = new Database(path.join(h.dataDir, SQLITE_FILE_NAME));
    db.exec('BEGIN IMMEDIATE');
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        db.exec('COMMIT');
        db.close();
        resolve();
      }, 3 * METER_TIMEOUT_MS),
    );
    let res = await payFetch(url, {}, { signer: buyer.signer });
    expect(res.status).toBe(503);
    for (let retry = 0; res.status === 503 && retry < 5; retry++)
      res = await payFetch(url, {}, { signer: buyer.signer });
    await released;
    expect(res.status).toBe(200);
    expect(served).toEqual(['before', 'stall']);
    expect(res.payment?.cumulative).toBe(formatted(2n * PRICE));
    expect(await channel(buyer.channelId)).toEqual({ lastAccepted: 2n * PRICE, vouchers: 2 });
  });

  it('a payment whose answer came late is still refused for another request, and once served', async () => {
    const buyer = await h.buyer({ payee: payTo });
    served.length = 0;
    proxy.state.slow = 2;
    const first = await payFetch(`${sellerUrl}/weather?city=late`, {}, { signer: buyer.signer });
    expect(first.status).toBe(503);
    expect(served).toHaveLength(0);
    const terms = h.requirements({ payTo, amount: PRICE.toString() });
    const header = paymentHeader(buyer.signer.sign(PRICE), terms);
    const send = (url: string, init: RequestInit = {}) =>
      fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), 'payment-signature': header } });
    // The same payment for another request: refused, nothing served.
    const other = await send(`${sellerUrl}/weather?city=other`);
    expect(other.status).toBe(402);
    expect(((await other.json()) as { error: string }).error).toBe('VOUCHER_NOT_INCREASING');
    const post = await send(`${sellerUrl}/chat`, { method: 'POST', body: 'a different body' });
    expect(post.status).toBe(402);
    // The request it paid for: served, with the receipt of the first acceptance.
    const again = await send(`${sellerUrl}/weather?city=late`);
    expect(again.status).toBe(200);
    expect(served).toEqual(['late']);
    // Once served, the same payment is not served again.
    const replay = await send(`${sellerUrl}/weather?city=late`);
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as { error: string }).error).toBe('VOUCHER_NOT_INCREASING');
    expect(served).toEqual(['late']);
    expect(await channel(buyer.channelId)).toEqual({ lastAccepted: PRICE, vouchers: 1 });
  });
});

function formatted(n: bigint): string {
  return n.toString();
}
