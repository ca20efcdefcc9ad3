// Dynamic charge on the meter's four bindings, against a real facilitator: a batch-settlement
// payment is verified before the handler and settled after it, for what the handler charged
// (payment.charge(amount)), the price when it charged nothing, and nothing when it failed (a throw
// or a 5xx). The answer is held until then and carries extra.chargedAmount; charge() above the
// price is refused with a TypeError; a channel payment is charged its price whatever charge() says.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SCHEME, decodeJsonHeader, encodeJsonHeader, randomKeypair } from '@svc/core';
import type { BatchRequirements, PaymentRequired } from '@svc/core';
import { nodeMeter, svc } from '@svc/meter';
import type { Payment, SvcClient } from '@svc/meter';
import { fastifyMeter } from '@svc/meter/fastify';
import { honoMeter } from '@svc/meter/hono';
import { payFetch } from '@svc/sdk';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Buyer, Harness } from '../../facilitator/test/helpers/harness.js';

const PRICE = 5000n;
const perRequest = { price: PRICE, unit: 'request' } as const;
type Names = 'node:http' | 'Express' | 'Fastify' | 'Hono';
const names: Names[] = ['node:http', 'Express', 'Fastify', 'Hono'];

/** What every seller's handler does, by path: /use?n= charges n, /over charges above the price, /fail throws, /busy answers 503. */
function handle(path: string, payment: Payment): { status: number; body: unknown } {
  const url = new URL(path, 'http://x');
  if (url.pathname === '/fail') throw new Error('the handler broke');
  if (url.pathname === '/busy') return { status: 503, body: { busy: true } };
  // The payment serializes as it did (price and charge are not enumerable: a bigint would not).
  if (url.pathname === '/json') return { status: 200, body: JSON.parse(JSON.stringify(payment)) as unknown };
  if (url.pathname === '/over') {
    try {
      payment.charge(PRICE + 1n);
    } catch (err) {
      return { status: 200, body: { refused: (err as Error).message, type: (err as Error).name } };
    }
  }
  const n = url.searchParams.get('n');
  if (n !== null) payment.charge(BigInt(n));
  return { status: 200, body: { used: n ?? 'all', scheme: payment.scheme, price: payment.price.toString() } };
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

const MIB = 1024 * 1024;

function nodeServer(client: SvcClient): http.Server {
  const meter = nodeMeter(client, perRequest);
  return http.createServer((req, res) =>
    meter(req, res, () => {
      if (req.url === '/big') {
        // 9 MiB in 1 MiB writes, charged 1200 before the first: past MAX_HELD_BYTES it streams.
        (req as { payment?: Payment }).payment!.charge(1200n);
        res.setHeader('content-type', 'text/plain');
        for (let i = 0; i < 9; i++) res.write(Buffer.alloc(MIB, 97 + i));
        res.end();
        return;
      }
      const { status, body } = handle(req.url ?? '/', (req as { payment?: Payment }).payment!);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    }),
  );
}

function expressServer(client: SvcClient): http.Server {
  const app = express();
  app.get('/{*path}', client.meter(perRequest), (req, res) => {
    const { status, body } = handle(req.originalUrl, (req as { payment?: Payment }).payment!);
    res.status(status).json(body);
  });
  return http.createServer(app);
}

function fastifyServer(client: SvcClient) {
  const app = Fastify();
  app.get('/*', { preHandler: fastifyMeter(client, perRequest) }, async (req, reply) => {
    const { status, body } = handle(req.url, req.payment!);
    return reply.code(status).send(body);
  });
  return app;
}

function honoApp(client: SvcClient): Hono {
  const app = new Hono();
  app.get('/*', honoMeter(client, perRequest), (c) => {
    if (new URL(c.req.url).pathname === '/big') {
      c.var.payment.charge(1200n);
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (i === 9) controller.close();
          else controller.enqueue(new Uint8Array(MIB).fill(97 + i++));
        },
      });
      return c.body(body, 200, { 'content-type': 'text/plain' });
    }
    const { status, body } = handle(c.req.url, c.var.payment);
    return c.json(body, status as 200);
  });
  return app;
}

interface Answer {
  status: number;
  body: unknown;
  charged: string | null;
  chargedTotal: string | null;
  receipt: { amount: string; cumulative: string } | null;
}

describe('dynamic charge: the seller charges what the request used', () => {
  let h: Harness;
  let client: SvcClient;
  const payee = randomKeypair();
  const urls = {} as Record<Names, string>;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    h = await startHarness();
    client = svc({ facilitator: h.url, payTo: payee.address });
    for (const [name, server] of [
      ['node:http', nodeServer(client)],
      ['Express', expressServer(client)],
    ] as const) {
      urls[name] = await listen(server);
      closers.push(() => new Promise<void>((r) => server.close(() => r())));
    }
    const fastify = fastifyServer(client);
    urls.Fastify = await fastify.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => fastify.close());
    const hono = serve({ fetch: honoApp(client).fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => hono.once('listening', () => r()));
    urls.Hono = `http://127.0.0.1:${(hono.address() as AddressInfo).port}`;
    closers.push(() => new Promise<void>((r) => hono.close(() => r())));
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await h?.close();
  });

  async function batchTerms(url: string): Promise<BatchRequirements> {
    const res = await fetch(url);
    expect(res.status).toBe(402);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    const terms = (decoded.ok ? decoded.value : null) as PaymentRequired;
    return terms.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
  }

  /** GET `path`, paid with a batch-settlement voucher for `ceiling`. */
  async function pay(base: string, path: string, b: Buyer, ceiling: bigint): Promise<Answer> {
    const terms = await batchTerms(`${base}${path}`);
    const v = b.signer.sign(ceiling);
    const header = encodeJsonHeader({
      x402Version: 2,
      accepted: terms,
      payload: {
        type: 'voucher',
        voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
      },
    });
    const res = await fetch(`${base}${path}`, { headers: { 'payment-signature': header } });
    const text = await res.text();
    const raw = res.headers.get('payment-response');
    const decoded = raw === null ? null : decodeJsonHeader(raw);
    const answer = (decoded?.ok ? decoded.value : null) as {
      extra: {
        chargedAmount: string;
        channelState: { chargedCumulativeAmount: string };
        receipt?: { receipt: { amount: string; cumulative: string } };
      };
    } | null;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return {
      status: res.status,
      body,
      charged: answer?.extra.chargedAmount ?? null,
      chargedTotal: answer?.extra.channelState.chargedCumulativeAmount ?? null,
      receipt: answer?.extra.receipt
        ? { amount: answer.extra.receipt.receipt.amount, cumulative: answer.extra.receipt.receipt.cumulative }
        : null,
    };
  }

  async function chargedOn(b: Buyer): Promise<string> {
    return ((await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as { charged: string }).charged;
  }

  it.each(names)(
    '%s: charges what the handler charged, the price by default, nothing for a failure or a 5xx',
    async (name) => {
      const base = urls[name];
      const b = await h.buyer({ batch: true, payee: payee.address });
      const used = await pay(base, '/use?n=1200', b, PRICE);
      expect(used).toMatchObject({
        status: 200,
        body: { used: '1200', scheme: 'batch-settlement', price: '5000' },
        charged: '1200',
        chargedTotal: '1200',
        receipt: { amount: '1200', cumulative: '1200' },
      });
      // A throw: a 500, charged nothing, and the channel released at once for the next request.
      const failed = await pay(base, '/fail', b, 1200n + PRICE);
      expect(failed).toMatchObject({ status: 500, charged: '0', chargedTotal: '1200', receipt: null });
      // The next ceiling is the charged total plus the price.
      const all = await pay(base, '/all', b, 1200n + PRICE);
      expect(all).toMatchObject({ status: 200, charged: '5000', chargedTotal: '6200' });
      // Above the price: a TypeError that says what to do; the request is charged its price.
      const over = await pay(base, '/over', b, 6200n + PRICE);
      expect(over).toMatchObject({ status: 200, charged: '5000', chargedTotal: '11200' });
      expect(over.body).toMatchObject({ type: 'TypeError' });
      expect((over.body as { refused: string }).refused).toMatch(/above this request's price 5000n.*charge at most/);
      // A 5xx answer: passed on, charged nothing.
      const busy = await pay(base, '/busy', b, 11200n + PRICE);
      expect(busy).toMatchObject({ status: 503, body: { busy: true }, charged: '0', chargedTotal: '11200' });
      expect(await chargedOn(b)).toBe('11200');
      const json = await pay(base, '/json', b, 11200n + PRICE);
      expect(json).toMatchObject({ status: 200, charged: '5000' });
      expect(json.body).toEqual({
        scheme: 'batch-settlement',
        payer: b.keys.address,
        channelId: b.channelId.toString(),
        ceiling: '16200',
        channelState: expect.objectContaining({ chargedCumulativeAmount: '11200' }) as unknown,
      });
    },
  );

  it.each(['node:http', 'Hono'] as const)(
    '%s: an answer past MAX_HELD_BYTES (8 MiB) is settled as it passes it, and streams through whole',
    async (name) => {
      const b = await h.buyer({ batch: true, payee: payee.address, deposit: 100_000n });
      const big = await pay(urls[name], '/big', b, PRICE);
      expect(big).toMatchObject({ status: 200, charged: '1200', chargedTotal: '1200' });
      const text = big.body as string;
      expect(text.length).toBe(9 * MIB);
      expect([...new Set(text)].join('')).toBe('abcdefghi');
      expect(text.startsWith('a'.repeat(MIB) + 'b')).toBe(true);
    },
  );

  it('a settle that got no answer is not charged twice: the buyer’s retry of the same payment is served under the first charge', async () => {
    // A network that loses the facilitator's answers to POST /settle (after the facilitator acted).
    const lost = { settles: 2 };
    const proxy = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'idempotency-key', 'authorization'])
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
        void fetch(`${h.url}${req.url ?? ''}`, {
          method: req.method ?? 'GET',
          headers,
          ...(req.method === 'POST' ? { body: Buffer.concat(parts) } : {}),
        }).then(async (r) => {
          const text = await r.text();
          if (req.url === '/settle' && lost.settles > 0) {
            lost.settles--;
            res.socket?.destroy();
            return;
          }
          res.writeHead(r.status, { 'content-type': 'application/json' });
          res.end(text);
        });
      });
    });
    const proxyUrl = await listen(proxy);
    const seller = nodeServer(svc({ facilitator: proxyUrl, payTo: payee.address }));
    const url = await listen(seller);
    try {
      const b = await h.buyer({ batch: true, payee: payee.address });
      const first = await pay(url, '/use?n=1200', b, PRICE);
      // Charged, but the meter cannot know: it serves nothing.
      expect(first).toMatchObject({ status: 503, charged: null, body: { error: 'FACILITATOR_UNAVAILABLE' } });
      expect(await chargedOn(b)).toBe('1200');
      // The buyer sends the same payment again: served, under the first charge.
      const again = await pay(url, '/use?n=1200', b, PRICE);
      expect(again).toMatchObject({ status: 200, body: { used: '1200' }, charged: '1200', chargedTotal: '1200' });
      expect(await chargedOn(b)).toBe('1200');
      // And the books go on from there.
      expect(await pay(url, '/use?n=300', b, 1200n + PRICE)).toMatchObject({ status: 200, chargedTotal: '1500' });
    } finally {
      await new Promise<void>((r) => seller.close(() => r()));
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it('a charge the facilitator refuses: the held answer is not sent, and the channel is released', async () => {
    // A seller bug in transit: the first /settle asks far above the voucher's ceiling.
    const bent = { settles: 1 };
    const proxy = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        let body = Buffer.concat(parts).toString();
        if (req.url === '/settle' && bent.settles > 0) {
          bent.settles--;
          const json = JSON.parse(body) as { paymentRequirements: { amount: string } };
          json.paymentRequirements.amount = '999999';
          body = JSON.stringify(json);
        }
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'idempotency-key', 'authorization'])
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
        void fetch(`${h.url}${req.url ?? ''}`, {
          method: req.method ?? 'GET',
          headers,
          ...(req.method === 'POST' ? { body } : {}),
        }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' });
          res.end(await r.text());
        });
      });
    });
    const proxyUrl = await listen(proxy);
    const seller = nodeServer(svc({ facilitator: proxyUrl, payTo: payee.address }));
    const url = await listen(seller);
    try {
      const b = await h.buyer({ batch: true, payee: payee.address });
      const refused = await pay(url, '/use?n=1200', b, PRICE);
      expect(refused.status).toBe(402);
      expect(refused.body).toMatchObject({
        error: 'invalid_batch_settlement_stellar_charge_exceeds_signed_cumulative',
      });
      expect(JSON.stringify(refused.body)).not.toContain('used');
      expect(await chargedOn(b)).toBe('0');
      // Released: another request on the same channel is served at once (not channel_busy).
      expect(await pay(url, '/all', b, PRICE)).toMatchObject({ status: 200, charged: '5000', chargedTotal: '5000' });
    } finally {
      await new Promise<void>((r) => seller.close(() => r()));
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it('a buyer that hangs up before the answer is complete is charged nothing, and the channel is released', async () => {
    let released: () => void = () => undefined;
    const settledZero = new Promise<void>((resolve) => (released = resolve));
    const proxy = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const body = Buffer.concat(parts).toString();
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'idempotency-key', 'authorization'])
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
        void fetch(`${h.url}${req.url ?? ''}`, {
          method: req.method ?? 'GET',
          headers,
          ...(req.method === 'POST' ? { body } : {}),
        }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' });
          res.end(await r.text());
          const amount =
            req.url === '/settle' ? (JSON.parse(body) as { paymentRequirements: { amount: string } }) : null;
          if (amount?.paymentRequirements.amount === '0') released();
        });
      });
    });
    const proxyUrl = await listen(proxy);
    const meter = nodeMeter(svc({ facilitator: proxyUrl, payTo: payee.address }), perRequest);
    let reached: () => void = () => undefined;
    const handlerRan = new Promise<void>((resolve) => (reached = resolve));
    const seller = http.createServer((req, res) =>
      meter(req, res, () => {
        if (req.url === '/slow') {
          // Answers only once the buyer has gone.
          res.once('close', () => res.end('too late'));
          reached();
          return;
        }
        res.end(JSON.stringify({ ok: true }));
      }),
    );
    const url = await listen(seller);
    try {
      const b = await h.buyer({ batch: true, payee: payee.address });
      const terms = await batchTerms(`${url}/slow`);
      const v = b.signer.sign(PRICE);
      const header = encodeJsonHeader({
        x402Version: 2,
        accepted: terms,
        payload: {
          type: 'voucher',
          voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
        },
      });
      const abort = new AbortController();
      const gone = fetch(`${url}/slow`, { headers: { 'payment-signature': header }, signal: abort.signal }).catch(
        (err: unknown) => err,
      );
      await handlerRan;
      abort.abort();
      expect(await gone).toBeInstanceOf(Error);
      await settledZero;
      expect(await chargedOn(b)).toBe('0');
      expect(await pay(url, '/other', b, PRICE)).toMatchObject({ status: 200, charged: '5000', chargedTotal: '5000' });
    } finally {
      await new Promise<void>((r) => seller.close(() => r()));
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it.each(names)(
    '%s: a channel payment is charged its price whatever charge() asks (its voucher is exact)',
    async (name) => {
      const b = await h.buyer({ payee: payee.address });
      const res = await payFetch(`${urls[name]}/use?n=1200`, {}, { signer: b.signer });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ used: '1200', scheme: 'channel', price: '5000' });
      expect(res.payment?.delta).toBe('5000');
      const json = await payFetch(`${urls[name]}/json`, {}, { signer: b.signer });
      expect(json.status).toBe(200);
      expect(await json.json()).toMatchObject({ scheme: 'channel', cumulative: '10000', delta: '5000' });
    },
  );
});
