// Streaming sessions open to every seller: an external Express seller using only @svc/meter
// streams per second and per token to an @svc/sdk buyer; and every way a session stops.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeJsonHeader, randomKeypair, requestHash } from '@svc/core';
import type { Keypair } from '@svc/core';
import type { PaymentRequirements } from '@svc/core';
import { svc } from '@svc/meter';
import { streamPaid, SseParser } from '@svc/sdk';
import type { StreamEvent } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';
import { channelSigner } from '../helpers/open-channel.js';

const PER_SECOND = 1000n;
const SLICE_SECONDS = 2;
const PER_TOKEN = 200n;
const SLICE_TOKENS = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An external seller: its own Express server and port, @svc/meter only. */
async function externalSeller(facilitator: string, payTo: string, sellerToken: string) {
  const client = svc({ facilitator, payTo, sellerToken });
  const app = express();
  const ticker = { price: PER_SECOND, unit: 'second' as const, sliceSeconds: SLICE_SECONDS };
  const chat = { price: PER_TOKEN, unit: 'token' as const, sliceTokens: SLICE_TOKENS };
  app.get('/ticks', client.meter(ticker), async (req, res) => {
    const s = await client.stream(req, res, { ...ticker, voucherTimeoutMs: Number(req.query['vt'] ?? 10_000) });
    const n = Number(req.query['n'] ?? 5);
    for (let i = 1; i <= n && (await s.next()); i++) {
      s.send('tick', { i });
      await sleep(Number(req.query['gap'] ?? 60));
    }
    await s.end();
  });
  app.post('/chat', client.meter(chat), async (req, res) => {
    const s = await client.stream(req, res, chat);
    for (let i = 0; i < 12 && (await s.next()); i++) s.send('token', { i, text: `w${i} ` });
    await s.end();
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Reads an SSE response to its end, without paying anything after the first slice. */
async function readAll(res: Response): Promise<StreamEvent[]> {
  const parser = new SseParser();
  const out: StreamEvent[] = [];
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    for (const e of parser.push(value))
      out.push({ event: e.event, data: JSON.parse(e.data) as unknown, at: Date.now() });
  }
}

function sliceTerms(
  h: Harness,
  payTo: string,
  unit: 'second' | 'token' = 'second',
  price = PER_SECOND,
  slice = SLICE_SECONDS,
): PaymentRequirements {
  const sliceAmount = (price * BigInt(slice)).toString();
  return h.requirements({
    payTo,
    amount: price.toString(),
    unit,
    extra: { sliceAmount, ...(unit === 'second' ? { sliceSeconds: slice } : { sliceTokens: slice }) },
  });
}

describe('streams through an external seller', () => {
  let h: Harness;
  let seller: Awaited<ReturnType<typeof externalSeller>>;
  const payee = randomKeypair();

  beforeAll(async () => {
    h = await startHarness();
    seller = await externalSeller(h.url, payee.address, h.sellerToken(payee.address));
  });
  afterAll(async () => {
    await seller.close();
    await h.close();
  });

  it('streams per second: events arrive one by one, and the charge is units × price rounded up to whole slices', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 1_000_000n });
    const paidWhen: Array<{ paid: bigint; received: number }> = [];
    let received = 0;
    const run = await streamPaid({
      url: `${seller.url}/ticks?n=5&gap=80`,
      signer: b.signer,
      onEvent: (e) => {
        if (e.event === 'tick') received++;
        if (e.event === 'payment-required') paidWhen.push({ paid: b.signer.cumulative, received });
      },
    });
    expect(run.ended).toMatchObject({ reason: 'done', units: 5, charged: '6000', vouchers: 3 });
    expect(run.paid).toBe(6000n); // ceil(5 / 2) slices × 2 s × 1000
    expect(run.vouchers).toBe(3);
    const ticks = run.events.filter((e) => e.event === 'tick');
    expect(ticks.map((e) => (e.data as { i: number }).i)).toEqual([1, 2, 3, 4, 5]);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]!.at - ticks[i - 1]!.at).toBeGreaterThanOrEqual(40); // not buffered
    expect(run.events[0]!.event).toBe('session');
    expect(run.events.at(-1)!.event).toBe('done');
    // Never more than one slice paid beyond what was received.
    for (const p of paidWhen)
      expect(p.paid - BigInt(p.received) * PER_SECOND).toBeLessThanOrEqual(PER_SECOND * BigInt(SLICE_SECONDS));
    const events = await h.f.store.events({
      channelId: b.channelId,
      types: ['stream.started', 'stream.ended'],
      limit: 10,
    });
    expect(events.map((e) => e.type)).toEqual(['stream.started', 'stream.ended']);
    expect(events[1]!.data).toMatchObject({ reason: 'done', units: 5, charged: '6000', vouchers: 3, unit: 'second' });
  });

  it('streams per token (POST): 12 tokens in slices of 5 cost 3 slices', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 1_000_000n });
    const run = await streamPaid({
      url: `${seller.url}/chat`,
      method: 'POST',
      body: '{"prompt":"hi"}',
      signer: b.signer,
    });
    expect(run.events.filter((e) => e.event === 'token')).toHaveLength(12);
    expect(run.ended).toMatchObject({ reason: 'done', units: 12, charged: '3000', vouchers: 3 });
    expect(run.paid).toBe(3000n);
  });

  it('a deposit that runs out mid-stream ends it with CHANNEL_EXHAUSTED, without a wait', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 4000n }); // two slices
    const run = await streamPaid({ url: `${seller.url}/ticks?n=10&gap=10&vt=10000`, signer: b.signer });
    expect(run.ended).toMatchObject({ reason: 'CHANNEL_EXHAUSTED', units: 4, charged: '4000' });
    expect(run.events.filter((e) => e.event === 'payment-required')).toHaveLength(1); // none for the slice the deposit cannot cover
    const lastTick = run.events.filter((e) => e.event === 'tick').at(-1)!;
    expect(run.events.at(-1)!.at - lastTick.at).toBeLessThan(1500); // no 10 s voucher wait
  });

  it('a buyer that stops paying ends it with TIMEOUT', async () => {
    const b = await h.buyer({ payee: payee.address });
    const terms = sliceTerms(h, payee.address);
    const res = await fetch(`${seller.url}/ticks?n=10&gap=10&vt=1000`, {
      headers: {
        'payment-signature': encodeJsonHeader({ x402Version: 2, accepted: terms, payload: b.signer.next(2000n) }),
      },
    });
    expect(res.status).toBe(200);
    const events = await readAll(res);
    expect(events.filter((e) => e.event === 'tick')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({
      event: 'done',
      data: { reason: 'TIMEOUT', units: 2, charged: '2000', vouchers: 1 },
    });
  });

  it('the fifth open session on one channel gets 429 with Retry-After, and is not charged', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 1_000_000n });
    const terms = sliceTerms(h, payee.address);
    const open: Response[] = [];
    for (let k = 1; k <= 4; k++) {
      const res = await fetch(`${seller.url}/ticks?n=2&gap=4000&vt=30000`, {
        headers: {
          'payment-signature': encodeJsonHeader({
            x402Version: 2,
            accepted: terms,
            payload: b.signer.sign(2000n * BigInt(k)),
          }),
        },
      });
      expect(res.status).toBe(200);
      open.push(res);
    }
    const fifth = await fetch(`${seller.url}/ticks?n=2`, {
      headers: {
        'payment-signature': encodeJsonHeader({ x402Version: 2, accepted: terms, payload: b.signer.sign(10_000n) }),
      },
    });
    expect(fifth.status).toBe(429);
    expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await fifth.json()).toMatchObject({ error: 'RATE_LIMITED' });
    expect((await h.f.store.getChannel(b.channelId))?.lastAccepted).toBe(8000n);
    for (const r of open) await r.body?.cancel();
  });
});

describe('the session API', () => {
  let h: Harness;
  const payee = randomKeypair();
  const clock = {
    offset: 0,
    now() {
      return Date.now() + this.offset;
    },
  };

  beforeAll(async () => {
    h = await startHarness({ STREAM_IDLE_SECONDS: '1' }, { clock });
  });
  afterAll(() => h.close());

  /** As the payee's middleware: with its seller token. */
  const post = (path: string, body: unknown, method = 'POST', token = h.sellerToken(payee.address)) =>
    fetch(`${h.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });

  async function firstSlice(b: Buyer, cumulative = 2000n) {
    const res = await h.verify(b.signer.sign(cumulative), sliceTerms(h, b.payee));
    expect(res.body['isValid']).toBe(true);
    return ((res.body['extra'] as Record<string, unknown>)['receipt'] as { receipt: { id: string } }).receipt.id;
  }

  async function open(b: Buyer, receiptId: string, sliceCost = '2000') {
    return post('/streams', {
      channelId: b.channelId.toString(),
      payTo: b.payee,
      resource: `${h.url}/r`,
      unit: 'second',
      sliceCost,
      initialCharge: '2000',
      receiptId,
    });
  }

  it('refuses a slice that costs nothing (400), before the receipt is bound', async () => {
    const b = await h.buyer({ payee: payee.address });
    const receiptId = await firstSlice(b);
    const free = await open(b, receiptId, '0');
    expect(free.status).toBe(400);
    expect(await free.json()).toMatchObject({ error: 'BAD_REQUEST', message: expect.stringMatching(/sliceCost/) });
    expect((await open(b, receiptId)).status).toBe(200);
  });

  it('refuses to open without a valid, unbound receipt of the first slice (409)', async () => {
    const b = await h.buyer({ payee: payee.address });
    const other = await h.buyer({ payee: payee.address });
    expect((await open(b, 'ab'.repeat(32))).status).toBe(409);
    const receiptId = await firstSlice(b);
    expect((await open(other, receiptId)).status).toBe(409); // another channel's receipt
    const ok = await open(b, receiptId);
    expect(ok.status).toBe(200);
    const again = await open(b, receiptId);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'CONFLICT' });
    const stale = await firstSlice(other);
    clock.offset = 61_000;
    try {
      expect((await open(other, stale)).status).toBe(409);
    } finally {
      clock.offset = 0;
    }
  });

  it('keeps a voucher that arrives before the wait; clamps the wait to 1 s; a timeout ends the session', async () => {
    const b = await h.buyer({ payee: payee.address });
    const opened = (await (await open(b, await firstSlice(b))).json()) as {
      streamId: string;
      requiredCumulative: string;
      voucherUrl: string;
    };
    expect(opened.requiredCumulative).toBe('4000');
    const v = b.signer.sign(4000n);
    const accepted = await post(`/channels/${b.channelId}/voucher`, {
      streamId: opened.streamId,
      cumulative: v.cumulative,
      signature: v.signature,
    });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({
      accepted: true,
      streamId: opened.streamId,
      requiredCumulative: '6000',
    });
    let t = Date.now();
    const paid = (await (await post(`/streams/${opened.streamId}/wait`, { timeoutMs: 100 })).json()) as {
      kind: string;
      requiredCumulative: string;
    };
    expect(paid).toMatchObject({ kind: 'paid', requiredCumulative: '6000' });
    expect(Date.now() - t).toBeLessThan(500);
    t = Date.now();
    expect(await (await post(`/streams/${opened.streamId}/wait`, { timeoutMs: 100 })).json()).toEqual({
      kind: 'timeout',
    });
    expect(Date.now() - t).toBeGreaterThanOrEqual(950); // clamped up to 1 s
    const late = b.signer.sign(6000n);
    const refused = await post(`/channels/${b.channelId}/voucher`, {
      streamId: opened.streamId,
      cumulative: late.cumulative,
      signature: late.signature,
    });
    expect(refused.status).toBe(409);
    const ended = await post(`/streams/${opened.streamId}`, { reason: 'done', units: 3 }, 'DELETE');
    expect(await ended.json()).toMatchObject({ charged: '4000', vouchers: 2, reason: 'TIMEOUT', units: 3 });
    const once = await h.f.store.events({ types: ['stream.ended'], limit: 100 });
    expect(once.filter((e) => e.data['streamId'] === opened.streamId)).toHaveLength(1);
  });

  /** A session opened for a first slice of 2000 (its next requiredCumulative is 4000), and its calls. */
  async function session(b: Buyer) {
    const { streamId } = (await (await open(b, await firstSlice(b))).json()) as { streamId: string };
    return {
      streamId,
      slice: (cumulative: bigint) => {
        const v = b.signer.sign(cumulative);
        return post(`/channels/${b.channelId}/voucher`, { streamId, cumulative: v.cumulative, signature: v.signature });
      },
      wait: async () => (await post(`/streams/${streamId}/wait`, { timeoutMs: 100 })).json() as Promise<unknown>,
    };
  }

  it('refuses a second slice voucher while one is paid and waiting (409), charging nothing: every slice paid satisfies one wait', async () => {
    const b = await h.buyer({ payee: payee.address });
    const s = await session(b);
    expect((await s.slice(4000n)).status).toBe(200);
    // Before the seller's wait: the slice of 4000 is paid and waiting.
    const early = await s.slice(6000n);
    expect(early.status).toBe(409);
    expect(await early.json()).toMatchObject({
      error: 'CONFLICT',
      source: 'facilitator',
      message: expect.stringMatching(/already paid and waiting.*next payment-required/),
    });
    expect((await h.f.store.getChannel(b.channelId))?.lastAccepted).toBe(4000n);
    expect(await h.f.store.getStream(s.streamId)).toMatchObject({ charged: 4000n, vouchers: 2 });
    expect(await s.wait()).toMatchObject({ kind: 'paid', requiredCumulative: '6000' });
    // Once the wait took it, the same voucher pays the next slice, and the next wait hears it.
    expect((await s.slice(6000n)).status).toBe(200);
    expect(await s.wait()).toMatchObject({ kind: 'paid', requiredCumulative: '8000' });
    const ended = await post(`/streams/${s.streamId}`, { reason: 'done', units: 6 }, 'DELETE');
    expect(await ended.json()).toMatchObject({ charged: '6000', vouchers: 3 }); // three slices, three delivered
  });

  it('of two slice vouchers posted at once, accepts one and charges one slice, which one wait delivers', async () => {
    const b = await h.buyer({ payee: payee.address });
    const s = await session(b);
    const answers = await Promise.all([s.slice(4000n), s.slice(6000n)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await h.f.store.getChannel(b.channelId))?.lastAccepted).toBe(4000n);
    expect(await h.f.store.getStream(s.streamId)).toMatchObject({ charged: 4000n, vouchers: 2 });
    expect(await s.wait()).toMatchObject({ kind: 'paid', requiredCumulative: '6000' });
  });

  it('refuses a voucher that pays more than one slice (409), charging nothing: each voucher buys the one slice a wait delivers', async () => {
    const b = await h.buyer({ payee: payee.address });
    const s = await session(b);
    const ahead = await s.slice(8000n); // two slices at once
    expect(ahead.status).toBe(409);
    expect(await ahead.json()).toMatchObject({
      error: 'CONFLICT',
      message: expect.stringMatching(/adds 6000, more than one slice \(2000\).*requiredCumulative/),
    });
    expect((await h.f.store.getChannel(b.channelId))?.lastAccepted).toBe(2000n);
    expect(await h.f.store.getStream(s.streamId)).toMatchObject({
      charged: 2000n,
      vouchers: 1,
      pendingReceiptId: null,
    });
    expect((await s.slice(4000n)).status).toBe(200);
    expect(await s.wait()).toMatchObject({ kind: 'paid', requiredCumulative: '6000' });
    const ended = await post(`/streams/${s.streamId}`, { reason: 'done', units: 4 }, 'DELETE');
    expect(await ended.json()).toMatchObject({ charged: '4000', vouchers: 2 });
  });

  it('says so where integrators read about stream vouchers: the OpenAPI document and llms.txt', async () => {
    const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { description?: string; responses: Record<string, { description: string }> }>
      >;
    };
    const voucher = doc.paths['/channels/{id}/voucher']!['post']!;
    expect(voucher.description).toMatch(/one voucher pays one slice.*more than one slice.*409 CONFLICT/);
    expect(voucher.responses['409']!.description).toMatch(/already paid and waiting.*more than one slice/);
    expect(await (await fetch(`${h.url}/llms.txt`)).text()).toMatch(/One voucher per payment-required/);
  });

  it('answers exhausted at once when the deposit cannot cover the next slice', async () => {
    const b = await h.buyer({ payee: payee.address, deposit: 2000n });
    const opened = (await (await open(b, await firstSlice(b))).json()) as { streamId: string };
    const t = Date.now();
    expect(await (await post(`/streams/${opened.streamId}/wait`, { timeoutMs: 30_000 })).json()).toEqual({
      kind: 'exhausted',
    });
    expect(Date.now() - t).toBeLessThan(500);
  });

  it('ends an idle session with ABORTED', async () => {
    const b = await h.buyer({ payee: payee.address });
    const opened = (await (await open(b, await firstSlice(b))).json()) as { streamId: string };
    await sleep(1800);
    const s = await h.f.store.getStream(opened.streamId);
    expect(s).toMatchObject({ status: 'ended', reason: 'ABORTED', charged: 2000n });
    expect(await (await post(`/streams/${opened.streamId}/wait`, {})).json()).toEqual({ kind: 'aborted' });
  });

  it('a stranger holding the public receipt and stream ids can neither open, wait on nor end a session', async () => {
    const b = await h.buyer({ payee: payee.address });
    const receiptId = await firstSlice(b);
    // Receipt ids are public: the stranger read this one from the event feed.
    const seen = await h.f.store.events({ types: ['voucher.accepted'], channelId: b.channelId, limit: 10 });
    expect(seen.map((e) => e.data['receiptId'])).toContain(receiptId);
    const body = {
      channelId: b.channelId.toString(),
      payTo: b.payee,
      resource: `${h.url}/r`,
      unit: 'second',
      sliceCost: '2000',
      initialCharge: '2000',
      receiptId,
    };
    const anonymous = await fetch(`${h.url}/streams`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: 'UNAUTHORIZED', source: 'facilitator' });
    const strangerToken = h.sellerToken(randomKeypair().address);
    expect((await post('/streams', body, 'POST', strangerToken)).status).toBe(403);
    expect((await post('/streams', body, 'POST', 'svcs1.not-a-token')).status).toBe(401);
    // The payee's own middleware still opens it: nothing was taken.
    const opened = await post('/streams', body);
    expect(opened.status).toBe(200);
    const { streamId } = (await opened.json()) as { streamId: string };
    // The stream id is public too (stream.started): still nobody else's to wait on or end.
    const started = await h.f.store.events({ types: ['stream.started'], channelId: b.channelId, limit: 10 });
    expect(started.map((e) => e.data['streamId'])).toContain(streamId);
    expect(
      (
        await fetch(`${h.url}/streams/${streamId}/wait`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(401);
    expect((await post(`/streams/${streamId}/wait`, { timeoutMs: 1000 }, 'POST', strangerToken)).status).toBe(403);
    expect((await post(`/streams/${streamId}`, { reason: 'done', units: 0 }, 'DELETE', strangerToken)).status).toBe(
      403,
    );
    expect(await h.f.store.getStream(streamId)).toMatchObject({ status: 'open' });
    expect(await (await post(`/streams/${streamId}`, { reason: 'done', units: 0 }, 'DELETE')).json()).toMatchObject({
      reason: 'done',
    });
  });

  it('answers an unknown session with 404 STREAM_NOT_FOUND and a bad id with 400', async () => {
    const r = await post(`/streams/${'0'.repeat(32)}/wait`, {});
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: 'STREAM_NOT_FOUND' });
    expect((await post('/streams/xyz/wait', {})).status).toBe(400);
  });
});

describe('the demo seller streams with the public meter API', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ TICKER_SLICE_SECONDS: '2', CHAT_SLICE_TOKENS: '20' });
  });
  afterAll(() => h.close());

  it('POST /demo/chat streams the built-in text token by token, 200 per token in slices of 20', async () => {
    const b = await h.buyer({ deposit: 1_000_000n });
    const run = await streamPaid({
      url: `${h.url}/demo/chat`,
      method: 'POST',
      body: '{"prompt":"what is a channel?"}',
      signer: b.signer,
    });
    const tokens = run.events.filter((e) => e.event === 'token');
    expect(tokens.length).toBeGreaterThan(40);
    const units = tokens.length;
    const slices = BigInt(Math.ceil(units / 20));
    expect(run.ended).toMatchObject({ reason: 'done', units, charged: (slices * 20n * 200n).toString() });
    expect(run.paid).toBe(slices * 20n * 200n);
    expect(tokens.map((t) => (t.data as { text: string }).text).join('')).toMatch(/^A payment channel is a deposit/);
    // The first slice's receipt covers the prompt that was posted (the demo's meter gets its bytes).
    const listed = (await (await fetch(`${h.url}/receipts?channelId=${b.channelId}&limit=200`)).json()) as {
      receipts: { requestHash: string | null }[];
    };
    expect(listed.receipts.at(-1)!.requestHash).toBe(
      requestHash('POST', `${h.url}/demo/chat`, '{"prompt":"what is a channel?"}'),
    );
  });

  it('GET /demo/ticker/stream ticks once a second, 1000 per second in slices of 2 s', async () => {
    const b = await h.buyer({ deposit: 1_000_000n });
    const run = await streamPaid({ url: `${h.url}/demo/ticker/stream?seconds=3`, signer: b.signer });
    const ticks = run.events.filter((e) => e.event === 'tick');
    expect(ticks).toHaveLength(3);
    expect(ticks[2]!.at - ticks[0]!.at).toBeGreaterThanOrEqual(1800);
    expect(run.ended).toMatchObject({ reason: 'done', units: 3, charged: '4000' });
  });
});

describe('stream caps are fair between parties', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      STREAM_MAX_PER_PAYER: '3',
      STREAM_MAX_PER_PAYEE: '5',
      STREAM_MAX_TOTAL: '8',
      DEMO: 'off',
    });
  });
  afterAll(() => h.close());

  /** A first slice paid on a fresh channel of `payer`'s to `payee`, and the session opened for it by the payee's side. */
  async function session(payer: Keypair, payee: string): Promise<Response> {
    const b = await channelOf(h, payer, payee);
    const auth = { authorization: `Bearer ${h.sellerToken(payee)}` };
    const first = await h.verify(b.signer.sign(1n), sliceTerms(h, payee, 'second', 1n, 1), auth);
    if (first.status !== 200 || first.body['isValid'] !== true)
      return new Response(JSON.stringify(first.body), { status: first.status, headers: first.headers });
    const receiptId = ((first.body['extra'] as Record<string, unknown>)['receipt'] as { receipt: { id: string } })
      .receipt.id;
    const body = {
      channelId: b.channelId.toString(),
      payTo: payee,
      resource: `${h.url}/r`,
      unit: 'second',
      sliceCost: '1',
      initialCharge: '1',
      receiptId,
    };
    return fetch(`${h.url}/streams`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify(body),
    });
  }

  it('one account paying itself holds at most its payer’s share, its sybils at most its payee’s, and another buyer still streams', async () => {
    const attacker = randomKeypair();
    for (let i = 0; i < 3; i++) expect((await session(attacker, attacker.address)).status).toBe(200);
    const fourth = await session(attacker, attacker.address);
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(await fourth.json()).toMatchObject({ error: 'RATE_LIMITED', message: expect.stringMatching(/per payer/) });
    // A second account of the attacker's, paying the same payee: the payee's share (5) ends it.
    const sybil = randomKeypair();
    for (let i = 0; i < 2; i++) expect((await session(sybil, attacker.address)).status).toBe(200);
    const sixth = await session(sybil, attacker.address);
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toMatchObject({ message: expect.stringMatching(/per seller/) });
    // Everyone else: 5 of 8 are taken, an honest buyer of another seller opens its session.
    expect((await session(randomKeypair(), randomKeypair().address)).status).toBe(200);
  });
});

/** A channel from a payer we hold the key of (it may be its own payee), with its voucher signer. */
async function channelOf(h: Harness, payer: Keypair, payee: string): Promise<Buyer> {
  const info = await h.ledger.info();
  const voucherKey = randomKeypair();
  await h.ledger.faucet(payer.address).catch(() => undefined); // once per address and hour is enough
  const { channelId } = await h.ledger.openChannel({ payer, payee, deposit: 1000n, voucherKey });
  const signer = channelSigner(info, { channelId, deposit: 1000n, voucherKey, payee });
  return { keys: payer, voucherKey, signer, channelId, payee };
}
