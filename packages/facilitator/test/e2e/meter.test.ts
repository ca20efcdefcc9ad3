// @svc/meter as an external seller uses it: its own server and port, a real facilitator behind.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJsonHeader, randomKeypair, requestHash, secretFromSeed } from '@svc/core';
import { svc } from '@svc/meter';
import type { ChannelPayment, PaidRequest, Payment } from '@svc/meter';
import { fastifyMeter } from '@svc/meter/fastify';
import { honoMeter } from '@svc/meter/hono';
import { payFetch } from '@svc/sdk';
import { paymentHeader, startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

/** These sellers are paid with the channel scheme: its payment carries the receipt. */
function channelOf(payment: Payment | undefined): ChannelPayment | undefined {
  return payment?.scheme === 'channel' ? payment : undefined;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** A transparent proxy in front of the facilitator that records what the meter sends. */
async function recordingProxy(target: string) {
  const seen: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      void fetch(`${target}${req.url ?? ''}`, {
        method: req.method ?? 'GET',
        headers: {
          'content-type': 'application/json',
          ...(req.headers['idempotency-key'] ? { 'idempotency-key': String(req.headers['idempotency-key']) } : {}),
        },
        ...(req.method === 'POST' ? { body } : {}),
      }).then(async (r) => {
        res.writeHead(r.status, { 'content-type': 'application/json' });
        res.end(await r.text());
      });
    });
  });
  return { url: await listen(server), seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('@svc/meter on Express 5 and node:http', () => {
  let h: Harness;
  const payee = randomKeypair();
  const servers: http.Server[] = [];
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let expressUrl = '';
  let nodeUrl = '';

  beforeAll(async () => {
    h = await startHarness();
    proxy = await recordingProxy(h.url);
    const client = svc({ facilitator: proxy.url, payTo: payee.address });
    const app = express();
    app.get(
      '/weather',
      client.meter({ price: 5000n, unit: 'request', description: 'Weather, per request' }),
      (req, res) => {
        res.json({ sunny: true, receipt: channelOf((req as PaidRequest).payment)?.receipt.id });
      },
    );
    app.post('/chat', client.meter({ price: 200n, unit: 'token', sliceTokens: 50 }), (_req, res) =>
      res.json({ ok: true }),
    );
    const e = http.createServer(app);
    servers.push(e);
    expressUrl = await listen(e);
    const mw = client.meter({ price: 5000n, unit: 'request' });
    const n = http.createServer((req, res) =>
      mw(req, res, () =>
        res.end(JSON.stringify({ plain: true, cumulative: channelOf((req as PaidRequest).payment)?.cumulative })),
      ),
    );
    servers.push(n);
    nodeUrl = await listen(n);
  });
  afterAll(async () => {
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
    await proxy.close();
    await h.close();
  });

  it('answers a request without payment with the exact 402 body, and the same object in PAYMENT-REQUIRED', async () => {
    const res = await fetch(`${expressUrl}/weather?city=Oslo`);
    expect(res.status).toBe(402);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
    const body = await res.json();
    const info = await h.ledger.info();
    expect(body).toEqual({
      x402Version: 2,
      error: 'PAYMENT_REQUIRED',
      source: 'gateway',
      message: 'Payment required: send a signed voucher in the PAYMENT-SIGNATURE header.',
      resource: { url: `${expressUrl}/weather`, description: 'Weather, per request', mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'channel',
          network: 'stellar:local',
          asset: info.contracts.asset,
          payTo: payee.address,
          amount: '5000',
          unit: 'request',
          maxTimeoutSeconds: 60,
          extra: {
            channelContract: info.contracts.channel,
            minDeposit: '5000000',
            facilitator: h.url,
            areFeesSponsored: true,
          },
        },
        // The same terms under the standard's name, after the specification's option.
        {
          scheme: 'batch-settlement',
          network: 'stellar:local',
          asset: info.contracts.asset,
          payTo: payee.address,
          amount: '5000',
          maxTimeoutSeconds: 60,
          extra: {
            receiverAuthorizer: h.f.address,
            channelContract: info.contracts.channel,
            facilitator: h.url,
            minDeposit: '5000000',
            areFeesSponsored: true,
            unit: 'request',
            unitPrice: '5000',
          },
        },
      ],
      extensions: {
        bazaar: {
          info: {
            input: { type: 'http', method: 'GET', queryParams: { city: 'Oslo' } },
            output: { type: 'json', mimeType: 'application/json' },
          },
          schema: {},
        },
        // Declared with the batch-settlement option (packages/meter/src/terms.ts).
        'payment-identifier': {
          info: { required: false },
          schema: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            properties: { required: { type: 'boolean' }, id: { type: 'string', minLength: 16, maxLength: 128 } },
            required: ['required'],
          },
        },
      },
    });
    expect(decodeJsonHeader(res.headers.get('payment-required')!)).toEqual({ ok: true, value: body });
  });

  it('describes sliced units: slice size and price, minimum deposit of 100 slices, an event stream', async () => {
    const res = await fetch(`${expressUrl}/chat`, { method: 'POST' });
    const body = (await res.json()) as {
      accepts: Array<{ unit: string; amount: string; extra: Record<string, unknown> }>;
      resource: { mimeType: string };
    };
    expect(body.accepts[0]).toMatchObject({
      unit: 'token',
      amount: '200',
      extra: { sliceTokens: 50, sliceAmount: '10000', minDeposit: '1000000' },
    });
    expect(body.resource.mimeType).toBe('text/event-stream');
  });

  it('passes a paid request to the handler with req.payment and PAYMENT-RESPONSE (Express)', async () => {
    const b = await h.buyer({ payee: payee.address });
    const res = await payFetch(`${expressUrl}/weather`, {}, { signer: b.signer });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sunny: boolean; receipt: string };
    expect(body).toEqual({ sunny: true, receipt: res.payment!.receipt.id });
    expect(res.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
  });

  it('forwards the bazaar metadata, the seller’s resource and an Idempotency-Key with each verification', async () => {
    const b = await h.buyer({ payee: payee.address });
    proxy.seen.length = 0;
    await payFetch(`${expressUrl}/weather?city=Rome`, {}, { signer: b.signer });
    await payFetch(`${expressUrl}/weather?city=Rome`, {}, { signer: b.signer });
    const verifies = proxy.seen.filter((s) => s.path === '/verify');
    expect(verifies).toHaveLength(2);
    const keys = new Set(verifies.map((v) => v.headers['idempotency-key']));
    expect(keys.size).toBe(2);
    const sent = JSON.parse(verifies[0]!.body) as {
      paymentPayload: {
        resource: { url: string };
        extensions: { bazaar: { info: { input: { queryParams: unknown } } } };
      };
      requestHash: string;
      method: string;
    };
    expect(sent.paymentPayload.resource.url).toBe(`${expressUrl}/weather`);
    expect(sent.paymentPayload.extensions.bazaar.info.input.queryParams).toEqual({ city: 'Rome' });
    expect(sent.method).toBe('GET');
    expect(sent.requestHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('works the same on plain node:http', async () => {
    const b = await h.buyer({ payee: payee.address });
    const unpaid = await fetch(`${nodeUrl}/anything`);
    expect(unpaid.status).toBe(402);
    const res = await payFetch(`${nodeUrl}/anything`, {}, { signer: b.signer });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ plain: true, cumulative: '5000' });
  });

  it('answers 503 FACILITATOR_UNAVAILABLE when the facilitator is down', async () => {
    const down = http.createServer();
    const downUrl = await listen(down);
    await new Promise<void>((r) => down.close(() => r()));
    const client = svc({ facilitator: downUrl, payTo: payee.address, timeoutMs: 1000 });
    const mw = client.meter({ price: 5000n, unit: 'request' });
    const s = http.createServer((req, res) => mw(req, res, () => res.end('paid')));
    servers.push(s);
    const res = await fetch(`${await listen(s)}/x`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect(await res.json()).toMatchObject({ error: 'FACILITATOR_UNAVAILABLE', source: 'gateway' });
  });

  it('passes the facilitator’s own 503 on with its Retry-After (a store or ledger fault there)', async () => {
    const busy = http.createServer((req, res) => {
      // /supported answers (from the real facilitator); /verify finds the database unavailable.
      if (req.url === '/supported')
        return void fetch(`${h.url}/supported`).then(async (r) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(await r.text()),
        );
      req.resume();
      req.on('end', () =>
        res
          .writeHead(503, { 'content-type': 'application/json', 'retry-after': '7' })
          .end(
            '{"error":"FACILITATOR_UNAVAILABLE","source":"facilitator","message":"The facilitator\'s database is unavailable right now."}',
          ),
      );
    });
    servers.push(busy);
    const client = svc({ facilitator: await listen(busy), payTo: payee.address, timeoutMs: 1000 });
    const mw = client.meter({ price: 5000n, unit: 'request' });
    const s = http.createServer((req, res) => mw(req, res, () => res.end('paid')));
    servers.push(s);
    const b = await h.buyer({ payee: payee.address });
    const res = await fetch(`${await listen(s)}/x`, {
      headers: { 'payment-signature': paymentHeader(b.signer.next(5000n), h.requirements({ payTo: payee.address })) },
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(await res.json()).toMatchObject({ error: 'FACILITATOR_UNAVAILABLE', source: 'facilitator' });
  });

  it("a seller's own mistakes are not the facilitator's availability: 502 SELLER_MISCONFIGURED, no Retry-After, said once in the seller's log", async () => {
    const warned: string[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((line: unknown) => void warned.push(String(line)));
    try {
      const b = await h.buyer({ payee: payee.address });
      const paid = async (client: ReturnType<typeof svc>) => {
        const mw = client.meter({ price: 5000n, unit: 'request' });
        const s = http.createServer((req, res) => mw(req, res, () => res.end('paid')));
        servers.push(s);
        const url = await listen(s);
        const first = await fetch(`${url}/x`, {
          headers: {
            'payment-signature': paymentHeader(b.signer.next(5000n), h.requirements({ payTo: payee.address })),
          },
        });
        await fetch(`${url}/x`, {
          headers: {
            'payment-signature': paymentHeader(b.signer.next(5000n), h.requirements({ payTo: payee.address })),
          },
        });
        return first;
      };
      // A token minted by another facilitator (its MAC is not this one's): /verify answers 401.
      const foreign = `svcs1.${payee.address}.${Math.floor(Date.now() / 1000) + 86_400}.${'A'.repeat(43)}`;
      const res = await paid(svc({ facilitator: h.url, payTo: payee.address, sellerToken: foreign }));
      expect(res.status).toBe(502);
      expect(res.headers.get('retry-after')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'SELLER_MISCONFIGURED', source: 'gateway' });
      // A facilitator URL that is not a facilitator (a path under it that answers 404).
      const wrong = await paid(svc({ facilitator: `${h.url}/not-here`, payTo: payee.address }));
      expect(wrong.status).toBe(502);
      expect(await wrong.json()).toMatchObject({ error: 'SELLER_MISCONFIGURED' });
      const told = warned.filter((l) => l.includes('SELLER_MISCONFIGURED') || l.includes('cannot take payments'));
      expect(told.some((l) => /401/.test(l) && /svc-seller token/.test(l))).toBe(true);
      expect(told.some((l) => l.includes(`${h.url}/not-here`))).toBe(true);
      // …and the wrong URL was said at start, before any buyer came.
      expect(
        warned.some((l) => l.startsWith(`@svc/meter: at start, the facilitator at ${h.url}/not-here cannot be used`)),
      ).toBe(true);
      // Once per mistake, not once per request.
      expect(new Set(told).size).toBe(told.length);
      expect(told.join('\n')).not.toContain(foreign);
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses at start a seller token that is for another payTo, or expired', () => {
    const other = randomKeypair();
    const later = Math.floor(Date.now() / 1000) + 86_400;
    expect(() =>
      svc({
        facilitator: h.url,
        payTo: payee.address,
        sellerToken: `svcs1.${other.address}.${later}.${'A'.repeat(43)}`,
      }),
    ).toThrow(new RegExp(`sellerToken is ${other.address}’s, but payTo is ${payee.address}`));
    const past = Math.floor(Date.now() / 1000) - 60;
    expect(() =>
      svc({
        facilitator: h.url,
        payTo: payee.address,
        sellerToken: `svcs1.${payee.address}.${past}.${'A'.repeat(43)}`,
      }),
    ).toThrow(/sellerToken expired at .*svc-seller token/);
  });

  it('refuses bad options with a clear message', () => {
    expect(() => svc({ facilitator: 'not a url', payTo: payee.address })).toThrow(
      /facilitator must be an http\(s\) URL/,
    );
    expect(() => svc({ facilitator: h.url, payTo: 'GABC' })).toThrow(/payTo must be a Stellar address/);
    // A secret seed pasted as payTo is named, never printed.
    const secret = secretFromSeed(new Uint8Array(32).fill(9));
    expect(() => svc({ facilitator: h.url, payTo: secret })).toThrow(/it is a secret seed \(S…\), not shown/);
    expect(() => svc({ facilitator: h.url, payTo: secret })).not.toThrow(secret.slice(0, 20));
    // An unset environment variable passed as it is: said plainly, with where an address comes from.
    expect(() => svc({ facilitator: h.url, payTo: process.env['SVC_NO_SUCH_VARIABLE'] })).toThrow(
      /payTo is missing.*svc-seller init/,
    );
    const client = svc({ facilitator: h.url, payTo: payee.address });
    expect(() => client.meter({ price: 5000 as unknown as bigint, unit: 'request' })).toThrow(
      /price must be a positive bigint/,
    );
    expect(() => client.meter({ price: 5n, unit: 'minute' as 'second' })).toThrow(/unit must be one of/);
  });
});

describe('thin bindings: Fastify and Hono', () => {
  let h: Harness;
  const payee = randomKeypair();
  const closers: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    for (const c of closers) await c();
    await h.close();
  });

  it('Fastify preHandler', async () => {
    const client = svc({ facilitator: h.url, payTo: payee.address });
    const app = Fastify();
    app.get('/f', { preHandler: fastifyMeter(client, { price: 5000n, unit: 'request' }) }, (req) => ({
      cumulative: channelOf(req.payment)?.cumulative,
    }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    expect((await fetch(`${url}/f`)).status).toBe(402);
    const b = await h.buyer({ payee: payee.address });
    const res = await payFetch(`${url}/f`, {}, { signer: b.signer });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ cumulative: '5000' });
  });

  it('Hono middleware', async () => {
    const client = svc({ facilitator: h.url, payTo: payee.address });
    const app = new Hono();
    app.get('/h', honoMeter(client, { price: 5000n, unit: 'request' }), (c) =>
      c.json({ cumulative: channelOf(c.var.payment)?.cumulative }),
    );
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => server.once('listening', () => r()));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await fetch(`${url}/h`)).status).toBe(402);
    const b = await h.buyer({ payee: payee.address });
    const res = await payFetch(`${url}/h`, {}, { signer: b.signer });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ cumulative: '5000' });
    expect(res.headers.get('payment-response')).toBeTruthy();
  });

  it("a POST body counts in the receipt's requestHash the same on Hono as on node:http", async () => {
    const client = svc({ facilitator: h.url, payTo: payee.address });
    const hono = new Hono();
    hono.post('/ask', honoMeter(client, { price: 5000n, unit: 'request' }), async (c) =>
      c.json({ asked: (await c.req.json<{ q: string }>()).q }),
    );
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((r) => server.once('listening', () => r()));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const honoUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ask`;
    const nodeServer = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        (req as http.IncomingMessage & { rawBody?: Buffer }).rawBody = Buffer.concat(chunks);
        client.meter({ price: 5000n, unit: 'request' })(req, res, () =>
          res.end(JSON.stringify({ asked: (JSON.parse(Buffer.concat(chunks).toString()) as { q: string }).q })),
        );
      });
    });
    const nodeUrl = `${await listen(nodeServer)}/ask`;
    closers.push(() => new Promise<void>((r) => nodeServer.close(() => r())));
    const body = JSON.stringify({ q: 'what does a voucher cost?' });
    const b = await h.buyer({ payee: payee.address });
    for (const url of [honoUrl, nodeUrl]) {
      const res = await payFetch(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body },
        { signer: b.signer },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ asked: 'what does a voucher cost?' }); // the handler still reads the body
      const receipt = res.payment!.receipt;
      expect(receipt.requestHash).toBe(requestHash('POST', url, body));
    }
    expect(requestHash('POST', honoUrl, body)).not.toBe(requestHash('POST', honoUrl, null)); // the body makes a difference
  });
});
