// The meter's four bindings side by side, against a real facilitator: node:http, Express, Fastify
// and Hono hash a POST body into the receipt's requestHash alike, and attest a response streamed in
// several chunks with the sha256 of all of it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJsonHeader, encodeJsonHeader, randomKeypair, requestHash, sha256, toHex, utf8 } from '@svc/core';
import type { PaymentRequired } from '@svc/core';
import { nodeMeter, svc } from '@svc/meter';
import type { SvcClient } from '@svc/meter';
import { fastifyMeter } from '@svc/meter/fastify';
import { honoMeter } from '@svc/meter/hono';
import { payFetch } from '@svc/sdk';
import type { ChannelSigner } from '@svc/sdk';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Harness } from '../../facilitator/test/helpers/harness.js';

/** One public origin for all four: they listen on different ports but sign the same URL. */
const PUBLIC = 'https://seller.example';
const CHUNKS = ['the first chunk, ', 'a second one, ', 'and the last'];
const perRequest = { price: 5000n, unit: 'request' } as const;
type Names = 'node:http' | 'Express' | 'Fastify' | 'Hono';
type Raw = { rawBody?: Buffer };

/** Writes CHUNKS one by one, a moment apart, so that they leave as separate writes. */
async function* chunks(): AsyncGenerator<Buffer> {
  for (const c of CHUNKS) {
    yield Buffer.from(c);
    await sleep(5);
  }
}

async function writeChunks(res: http.ServerResponse): Promise<void> {
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  for await (const c of chunks()) res.write(c);
  res.end();
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function readAll(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

/** node:http: the seller reads the body and hands it over as req.rawBody. */
function nodeServer(client: SvcClient): http.Server {
  const meter = nodeMeter(client, perRequest);
  return http.createServer((req, res) => {
    void readAll(req).then((raw) => {
      (req as http.IncomingMessage & Raw).rawBody = raw;
      meter(req, res, () => {
        if (req.url !== '/ask') return void writeChunks(res);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ asked: (JSON.parse(raw.toString()) as { q: string }).q }));
      });
    });
  });
}

/** Express: express.json() keeps the raw body through its `verify` callback. */
function expressServer(client: SvcClient): http.Server {
  const app = express();
  app.use(express.json({ verify: (req, _res, buf) => void ((req as Raw).rawBody = buf) }));
  app.post('/ask', client.meter(perRequest), (req, res) => {
    res.json({ asked: (req.body as { q: string }).q });
  });
  app.get('/stream', client.meter(perRequest), (_req, res) => void writeChunks(res));
  return http.createServer(app);
}

/** Fastify: a JSON parser that keeps the raw body as request.rawBody; a stream sent with reply.send. */
function fastifyServer(client: SvcClient): FastifyInstance {
  const app = Fastify();
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    (req as Raw).rawBody = body as Buffer;
    try {
      done(null, JSON.parse(body.toString()));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.post('/ask', { preHandler: fastifyMeter(client, perRequest) }, (req) => ({
    asked: (req.body as { q: string }).q,
  }));
  app.get('/stream', { preHandler: fastifyMeter(client, perRequest) }, (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(Readable.from(chunks())),
  );
  return app;
}

/** Hono: the binding reads the body itself; the stream is a ReadableStream body. */
function honoApp(client: SvcClient): Hono {
  const app = new Hono();
  app.post('/ask', honoMeter(client, perRequest), async (c) =>
    c.json({ asked: (await c.req.json<{ q: string }>()).q }),
  );
  app.get('/stream', honoMeter(client, perRequest), (c) => {
    const it = chunks();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await it.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value));
      },
    });
    return c.body(body, 200, { 'content-type': 'text/plain; charset=utf-8' });
  });
  return app;
}

describe('the meter’s bindings: node:http, Express, Fastify and Hono alike', () => {
  let h: Harness;
  let signer: ChannelSigner;
  const urls = {} as Record<Names, string>;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    h = await startHarness();
    const payee = randomKeypair();
    // The seller's token: only the payee's side gets an attest token with each receipt.
    const client = svc({
      facilitator: h.url,
      payTo: payee.address,
      publicUrl: PUBLIC,
      sellerToken: h.sellerToken(payee.address),
    });
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
    signer = (await h.buyer({ payee: payee.address })).signer;
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await h?.close();
  });

  const names: Names[] = ['node:http', 'Express', 'Fastify', 'Hono'];

  /** A paid POST /ask: the answer (the handler read the body too) and the receipt's requestHash. */
  async function ask(name: Names, q: string): Promise<{ status: number; answer: unknown; requestHash: unknown }> {
    const res = await payFetch(
      `${urls[name]}/ask`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q }) },
      { signer },
    );
    return { status: res.status, answer: await res.json(), requestHash: res.payment?.receipt.requestHash };
  }

  it('a paid POST with a JSON body is answered 200 with the same requestHash on all four, and another body changes it', async () => {
    const bodyOf = (q: string) => JSON.stringify({ q });
    const expected = (q: string) => requestHash('POST', `${PUBLIC}/ask`, bodyOf(q));
    expect(expected('price?')).not.toBe(requestHash('POST', `${PUBLIC}/ask`, null)); // the body makes a difference
    expect(expected('price?')).not.toBe(expected('weather?'));
    const seen: Record<string, unknown> = {};
    for (const name of names) {
      for (const q of ['price?', 'weather?']) seen[`${name} ${q}`] = await ask(name, q);
    }
    const want: Record<string, unknown> = {};
    for (const name of names) {
      for (const q of ['price?', 'weather?'])
        want[`${name} ${q}`] = { status: 200, answer: { asked: q }, requestHash: expected(q) };
    }
    expect(seen).toEqual(want);
  });

  it('warns once when a body arrived parsed, without its bytes: the requestHash then covers no body', async () => {
    const app = express();
    app.use(express.json()); // no `verify`: the raw bytes are gone
    const client = svc({ facilitator: h.url, payTo: signer.payee, publicUrl: PUBLIC });
    app.post('/plain', client.meter(perRequest), (req, res) => void res.json(req.body));
    const server = http.createServer(app);
    const url = await listen(server);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      for (const q of ['one', 'two']) {
        const res = await payFetch(
          `${url}/plain`,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q }) },
          { signer },
        );
        expect(res.status).toBe(200);
        expect(res.payment?.receipt.requestHash).toBe(requestHash('POST', `${PUBLIC}/plain`, null));
      }
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toMatch(/requestHash covers no body.*rawBody/s);
    } finally {
      warn.mockRestore();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it.each(names)('%s: a HEAD with a valid payment is answered 402 with the terms, and not charged', async (name) => {
    const unpaid = await fetch(`${urls[name]}/stream`);
    expect(unpaid.status).toBe(402);
    const decoded = decodeJsonHeader(unpaid.headers.get('payment-required')!);
    const terms = (decoded.ok ? decoded.value : null) as PaymentRequired;
    const before = (await (await fetch(`${h.url}/channels/${signer.channelId}`)).json()) as { lastAccepted: string };
    const payload = signer.sign(BigInt(before.lastAccepted) + 5000n); // a voucher that would be accepted
    const header = encodeJsonHeader({ x402Version: 2, accepted: terms.accepts[0], payload, resource: terms.resource });
    const head = await fetch(`${urls[name]}/stream`, { method: 'HEAD', headers: { 'payment-signature': header } });
    expect(head.status).toBe(402);
    expect(head.headers.get('payment-required')).toBeTruthy();
    expect(head.headers.get('payment-response')).toBeNull();
    const after = (await (await fetch(`${h.url}/channels/${signer.channelId}`)).json()) as { lastAccepted: string };
    expect(after.lastAccepted).toBe(before.lastAccepted);
  });

  it.each(names)(
    '%s: a response streamed in several chunks is attested with the sha256 of the whole body',
    async (name) => {
      const res = await payFetch(`${urls[name]}/stream`, {}, { signer });
      expect(res.status).toBe(200);
      expect(res.headers.get('transfer-encoding')).toBe('chunked'); // streamed, not sent in one piece
      expect(await res.text()).toBe(CHUNKS.join(''));
      const id = res.payment!.receipt.id;
      expect(await attestationOf(h.url, id)).toBe(toHex(sha256(utf8(CHUNKS.join('')))));
    },
  );
});

/** The responseHash the payee attested for a receipt, once it has (the meter attests after the body is sent). */
async function attestationOf(facilitator: string, receiptId: string): Promise<string | null> {
  for (let i = 0; i < 100; i++) {
    const got = (await (await fetch(`${facilitator}/receipts/${receiptId}`)).json()) as {
      attestation: { responseHash: string } | null;
    };
    if (got.attestation) return got.attestation.responseHash;
    await sleep(20);
  }
  return null;
}
