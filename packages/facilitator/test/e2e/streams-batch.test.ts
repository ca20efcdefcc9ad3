// Streams paid with x402's `batch-settlement` (docs/schemes/scheme_batch_settlement_stellar.md) as
// well as `channel`, over real HTTP: an external Express seller using only @svc/meter streams per
// second and per token to an @svc/sdk buyer whose channel is bound to the facilitator's receiver
// authorizer. Each slice's voucher is a ceiling — what was charged plus the slice — charged by the
// same batch machinery as a paid request, so the receipts, events, claim and revenue are the
// channel's own. And a wallet that paid with payFetch before streams on the same channel, catching
// up as payFetch does.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair, verifyReceipt } from '@svc/core';
import type { PaymentResponse } from '@svc/core';
import { svc } from '@svc/meter';
import { payFetch, streamPaid, Wallet } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const PER_SECOND = 1000n;
const SLICE_SECONDS = 2;
const PER_TOKEN = 200n;
const SLICE_TOKENS = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An external seller: its own Express server and port, @svc/meter only; it counts what it delivered. */
async function externalSeller(facilitator: string, payTo: string, sellerToken: string) {
  const client = svc({ facilitator, payTo, sellerToken });
  const app = express();
  const delivered: { units: number; charged: string | null; scheme: string }[] = [];
  const ticker = { price: PER_SECOND, unit: 'second' as const, sliceSeconds: SLICE_SECONDS };
  const chat = { price: PER_TOKEN, unit: 'token' as const, sliceTokens: SLICE_TOKENS };
  app.get('/ticks', client.meter(ticker), async (req, res) => {
    const s = await client.stream(req, res, ticker);
    const n = Number(req.query['n'] ?? 5);
    for (let i = 1; i <= n && (await s.next()); i++) {
      s.send('tick', { i });
      await sleep(20);
    }
    const summary = await s.end();
    const scheme = (req as unknown as { payment: PaymentResponse }).payment.scheme;
    delivered.push({ units: summary.units, charged: summary.charged, scheme });
  });
  app.post('/chat', client.meter(chat), async (req, res) => {
    const s = await client.stream(req, res, chat);
    for (let i = 0; i < 12 && (await s.next()); i++) s.send('token', { i, text: `w${i} ` });
    const summary = await s.end();
    const scheme = (req as unknown as { payment: PaymentResponse }).payment.scheme;
    delivered.push({ units: summary.units, charged: summary.charged, scheme });
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    delivered,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('streams paid with batch-settlement through an external seller', () => {
  let h: Harness;
  let seller: Awaited<ReturnType<typeof externalSeller>>;
  const payee = randomKeypair();

  beforeAll(async () => {
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600', MANUAL_CLAIM_COOLDOWN_SECONDS: '0' });
    seller = await externalSeller(h.url, payee.address, h.sellerToken(payee.address));
  });
  afterAll(async () => {
    await seller.close();
    await h.close();
  });

  async function view(id: bigint) {
    return (await (await fetch(`${h.url}/channels/${id}`)).json()) as Record<string, string>;
  }

  async function receiptsOf(b: Buyer) {
    const res = await fetch(`${h.url}/receipts?channelId=${b.channelId}&limit=200`);
    return ((await res.json()) as { receipts: { amount: string; cumulative: string; unit: string }[] }).receipts;
  }

  it('per second and per token: every slice charged by the batch machinery, what the seller delivered is what was charged, one claim takes it all', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 1_000_000n, batch: true });
    const ticks = await streamPaid({ url: `${seller.url}/ticks?n=5`, signer: b.signer });
    expect(ticks.scheme).toBe('batch-settlement');
    // ceil(5 / 2) slices × 2 s × 1000.
    expect(ticks.ended).toMatchObject({ reason: 'done', units: 5, charged: '6000', vouchers: 3 });
    expect(ticks.paid).toBe(6000n);
    expect(ticks.events.filter((e) => e.event === 'tick')).toHaveLength(5);
    expect(ticks.events[0]).toMatchObject({ event: 'session', data: { scheme: 'batch-settlement' } });

    const chat = await streamPaid({ url: `${seller.url}/chat`, method: 'POST', body: '{}', signer: b.signer });
    expect(chat.scheme).toBe('batch-settlement');
    // ceil(12 / 5) slices × 5 tokens × 200.
    expect(chat.ended).toMatchObject({ reason: 'done', units: 12, charged: '3000', vouchers: 3 });
    expect(chat.paid).toBe(3000n);
    expect(chat.events.filter((e) => e.event === 'token')).toHaveLength(12);

    // What the seller delivered, priced per started slice, is what it was charged.
    expect(seller.delivered).toEqual([
      { units: 5, charged: '6000', scheme: 'batch-settlement' },
      { units: 12, charged: '3000', scheme: 'batch-settlement' },
    ]);
    // The channel's books: every ceiling was charged whole, so charged = the highest voucher.
    expect(await view(b.channelId)).toMatchObject({ charged: '9000', lastAccepted: '9000', unclaimed: '9000' });
    const receipts = await receiptsOf(b);
    expect(receipts).toHaveLength(6);
    expect(receipts.reduce((sum, r) => sum + BigInt(r.amount), 0n)).toBe(9000n);
    const signers = [h.f.address];
    for (const r of receipts) expect(verifyReceipt(r as never, signers).ok).toBe(true);
    // Each slice's acceptance, and each session's start and end, say the scheme.
    const events = await h.f.store.events({
      channelId: b.channelId,
      types: ['voucher.accepted', 'stream.started', 'stream.ended'],
      limit: 50,
    });
    const accepted = events.filter((e) => e.type === 'voucher.accepted');
    expect(accepted).toHaveLength(6);
    for (const e of events) expect(e.data['scheme']).toBe('batch-settlement');
    expect(events.filter((e) => e.type === 'stream.ended').map((e) => e.data['charged'])).toEqual(['6000', '3000']);

    // One claim takes what was charged; the seller's revenue is that, settled.
    const claim = await fetch(`${h.url}/channels/${b.channelId}/claim`, { method: 'POST' });
    expect(claim.status).toBe(200);
    expect(await claim.json()).toMatchObject({ amount: '9000', cumulative: '9000', vouchersCovered: 6 });
    expect(await h.ledger.balance(payee.address)).toBe(9000n);
    const revenue = (await (await fetch(`${h.url}/sellers/${payee.address}/revenue`)).json()) as {
      totals: Record<string, string>;
    };
    expect(revenue.totals).toMatchObject({ earned: '9000', settled: '9000', receivable: '0' });
  });

  it('a channel bound to no receiver authorizer streams with `channel`, as before', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 1_000_000n });
    const run = await streamPaid({ url: `${seller.url}/ticks?n=3`, signer: b.signer });
    expect(run.scheme).toBe('channel');
    expect(run.ended).toMatchObject({ reason: 'done', units: 3, charged: '4000' });
    expect(run.events[0]).toMatchObject({ event: 'session', data: { scheme: 'channel' } });
    expect(seller.delivered.at(-1)).toEqual({ units: 3, charged: '4000', scheme: 'channel' });
  });

  it('a wallet asked for a batch-settlement channel opens one bound to the facilitator, and streams with it', async () => {
    const wallet = Wallet.open({ deposit: () => 100_000n });
    const run = await streamPaid({
      url: `${seller.url}/ticks?n=2`,
      signer: (terms, options) => wallet.signerFor(terms, 1n, options),
    });
    expect(run.scheme).toBe('batch-settlement');
    expect(run.ended).toMatchObject({ reason: 'done', units: 2, charged: '2000' });
    expect(wallet.channels.map((c) => c.receiverAuthorizer)).toEqual([h.f.address]);
  });
});

/** A proxy in front of the facilitator whose network is slow for the next `slow` answers to POST /settle. */
async function slowSettle(target: string, delayMs: number) {
  const state = { slow: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const late = req.method === 'POST' && req.url === '/settle' && state.slow > 0;
      if (late) state.slow--;
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'idempotency-key', 'authorization'])
        if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      void fetch(`${target}${req.url ?? ''}`, {
        method: req.method ?? 'GET',
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      }).then(async (r) => {
        const text = await r.text();
        // The facilitator has answered (and committed): the answer is what arrives late.
        if (late) await sleep(delayMs);
        if (res.destroyed) return;
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('a batch-settlement first slice whose /settle answer reaches the meter too late', () => {
  let h: Harness;
  let proxy: Awaited<ReturnType<typeof slowSettle>>;
  let server: http.Server;
  let url = '';
  const payee = randomKeypair();
  const METER_TIMEOUT_MS = 300;

  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off' });
    proxy = await slowSettle(h.url, 3 * METER_TIMEOUT_MS);
    const client = svc({
      facilitator: proxy.url,
      payTo: payee.address,
      sellerToken: h.sellerToken(payee.address),
      timeoutMs: METER_TIMEOUT_MS,
    });
    const ticker = { price: PER_SECOND, unit: 'second' as const, sliceSeconds: SLICE_SECONDS };
    const app = express();
    app.get('/ticks', client.meter(ticker), async (req, res) => {
      const s = await client.stream(req, res, ticker);
      for (let i = 1; i <= 3 && (await s.next()); i++) s.send('tick', { i });
      await s.end();
    });
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ticks`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server?.close(() => r()));
    await proxy?.close();
    await h?.close();
  });

  it('the buyer’s retry of the same payment opens the stream with the first charge, charged once (as `channel`)', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 1_000_000n, batch: true });
    // The first slice's charge, and the meter's own retry of it, reach the meter too late.
    proxy.state.slow = 2;
    const lost = await streamPaid({ url, signer: b.signer });
    expect(lost.ended).toMatchObject({ reason: 'FACILITATOR_UNAVAILABLE' });
    expect(proxy.state.slow).toBe(0);
    // The facilitator charged it; nothing was served.
    expect((await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as object).toMatchObject({
      charged: '2000',
    });
    // The buyer sends the same payment again: served with the first charge, not charged again.
    const run = await streamPaid({ url, signer: b.signer });
    expect(run.scheme).toBe('batch-settlement');
    expect(run.ended).toMatchObject({ reason: 'done', units: 3, charged: '4000', vouchers: 2 });
    expect((await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as object).toMatchObject({
      charged: '4000',
      lastAccepted: '4000',
    });
  });
});

describe('the session API of a batch-settlement stream', () => {
  let h: Harness;
  const payee = randomKeypair();
  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off' });
  });
  afterAll(() => h.close());

  const seller = () => ({
    'content-type': 'application/json',
    authorization: `Bearer ${h.sellerToken(payee.address)}`,
  });

  /** A first slice of 2000 paid with /settle (batch-settlement), and the session opened with it. */
  async function opened(b: Buyer) {
    const terms = h.requirements({
      payTo: payee.address,
      amount: '1000',
      unit: 'second',
      extra: { sliceAmount: '2000', sliceSeconds: 2 },
    });
    const batchTerms = {
      scheme: 'batch-settlement',
      network: terms.network,
      asset: terms.asset,
      payTo: payee.address,
      amount: '2000',
      maxTimeoutSeconds: terms.maxTimeoutSeconds,
      extra: {
        ...terms.extra,
        receiverAuthorizer: h.f.address,
        unit: 'second',
        unitPrice: '1000',
      },
    };
    const v = b.signer.sign(2000n);
    const res = await fetch(`${h.url}/settle`, {
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
          resource: { url: `${h.url}/r` },
        },
        paymentRequirements: batchTerms,
        method: 'GET',
      }),
    });
    const settled = (await res.json()) as { success: boolean; extra: { receipt: PaymentResponse } };
    expect(settled.success).toBe(true);
    expect(settled.extra.receipt.scheme).toBe('batch-settlement');
    return fetch(`${h.url}/streams`, {
      method: 'POST',
      headers: seller(),
      body: JSON.stringify({
        channelId: b.channelId.toString(),
        payTo: payee.address,
        resource: `${h.url}/r`,
        unit: 'second',
        sliceCost: '2000',
        initialCharge: '2000',
        receiptId: settled.extra.receipt.receipt.id,
        scheme: 'batch-settlement',
      }),
    });
  }

  const voucher = (b: Buyer, streamId: string, cumulative: bigint) => {
    const v = b.signer.sign(cumulative);
    return fetch(`${h.url}/channels/${b.channelId}/voucher`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ streamId, cumulative: v.cumulative, signature: v.signature }),
    });
  };

  const wait = async (streamId: string) =>
    (await (
      await fetch(`${h.url}/streams/${streamId}/wait`, {
        method: 'POST',
        headers: seller(),
        body: JSON.stringify({ timeoutMs: 1000 }),
      })
    ).json()) as Record<string, unknown>;

  it('charges a slice whose ceiling is what was charged plus the slice; refuses another ceiling, charging nothing', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 100_000n, batch: true });
    const open = await opened(b);
    expect(open.status).toBe(200);
    const { streamId, requiredCumulative } = (await open.json()) as { streamId: string; requiredCumulative: string };
    expect(requiredCumulative).toBe('4000');
    // Two slices in one voucher is not the ceiling of the next slice.
    const over = await voucher(b, streamId, 6000n);
    expect(over.status).toBe(402);
    expect(await over.json()).toMatchObject({
      error: 'VOUCHER_UNDERPAID',
      message: expect.stringMatching(/invalid_batch_settlement_stellar_cumulative_amount_mismatch/),
    });
    const paid = await voucher(b, streamId, 4000n);
    expect(paid.status).toBe(200);
    const body = (await paid.json()) as { requiredCumulative: string; receipt: PaymentResponse };
    expect(body.requiredCumulative).toBe('6000');
    expect(body.receipt).toMatchObject({ scheme: 'batch-settlement', delta: '2000', cumulative: '4000' });
    // A second voucher while the slice waits for the seller: 409, nothing charged.
    expect((await voucher(b, streamId, 6000n)).status).toBe(409);
    const taken = await wait(streamId);
    expect(taken).toMatchObject({ kind: 'paid', requiredCumulative: '6000', receipt: { scheme: 'batch-settlement' } });
    expect((await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as object).toMatchObject({
      charged: '4000',
    });
    const ended = await fetch(`${h.url}/streams/${streamId}`, {
      method: 'DELETE',
      headers: seller(),
      body: JSON.stringify({ reason: 'done', units: 4 }),
    });
    expect(await ended.json()).toMatchObject({ charged: '4000', vouchers: 2, reason: 'done' });
  });

  it('refuses (409) a batch-settlement session on a channel bound to no receiver authorizer', async () => {
    const unbound = await h.buyer({ payee: payee.address, deposit: 100_000n });
    const v = unbound.signer.sign(2000n);
    const accepted = await h.verify(
      v,
      h.requirements({
        payTo: payee.address,
        amount: '1000',
        unit: 'second',
        extra: { sliceAmount: '2000', sliceSeconds: 2 },
      }),
    );
    const receiptId = (accepted.body['extra'] as { receipt: { receipt: { id: string } } }).receipt.receipt.id;
    const res = await fetch(`${h.url}/streams`, {
      method: 'POST',
      headers: seller(),
      body: JSON.stringify({
        channelId: unbound.channelId.toString(),
        payTo: payee.address,
        resource: `${h.url}/r`,
        unit: 'second',
        sliceCost: '2000',
        initialCharge: '2000',
        receiptId,
        scheme: 'batch-settlement',
      }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      error: 'CONFLICT',
      message: expect.stringMatching(/receiver authorizer/),
    });
  });
});

describe('a wallet that paid with payFetch streams on the same channel', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ TICKER_SLICE_SECONDS: '2', CHAT_SLICE_TOKENS: '20' });
  });
  afterAll(() => h.close());

  it('streamPaid after payFetch on one wallet file: the stream is paid, not refused VOUCHER_NOT_INCREASING', async () => {
    // Two runs of a program on one wallet file: the file is written when a voucher is signed,
    // before its answer came, so the second run's books are behind the facilitator's.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wallet-'));
    const file = path.join(dir, 'wallet.json');
    const first = Wallet.open({ file, deposit: () => 2_000_000n });
    const book = await payFetch(`${h.url}/demo/book`, {}, { signer: (terms) => first.signerFor(terms) });
    expect(book.status).toBe(200);
    const second = Wallet.open({ file, deposit: () => 2_000_000n });
    const run = await streamPaid({
      url: `${h.url}/demo/ticker/stream?seconds=3`,
      signer: (terms) => second.signerFor(terms),
    });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(run.scheme).toBe('channel');
    expect(run.ended).toMatchObject({ reason: 'done', units: 3, charged: '4000' });
    expect(run.paid).toBe(4000n);
  });
});
