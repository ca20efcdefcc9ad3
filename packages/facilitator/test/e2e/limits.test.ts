// Per-IP limits over real HTTP: the general limit (exemptions, 0 = off, every route counted), the
// client address from TRUST_PROXY only, the facilitator's own in-process calls not counted twice;
// security headers and CORS on every answer; parser-level refusals with the error body.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { redisEnabled, redisTestUrl } from '../helpers/redis.js';

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

describe('the general per-IP limit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ IP_RATE_LIMIT_PER_MINUTE: '6' }); // the harness itself reads /ledger/info once
  });
  afterAll(() => h.close());

  it('answers the request past the limit with 429, Retry-After and the error body; every route counts, /health and /events do not', async () => {
    const statuses: number[] = [];
    for (const path of ['/supported', '/nope', '/ledger/info', '/stats', '/channels'])
      statuses.push((await get(`${h.url}${path}`)).status);
    expect(statuses).toEqual([200, 404, 200, 200, 200]);
    const limited = await get(`${h.url}/supported`);
    expect(limited.status).toBe(429);
    const wait = Number(limited.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(limited.body).toMatchObject({ error: 'RATE_LIMITED', source: 'facilitator' });
    expect(String(limited.body['message'])).toMatch(/retry in \d+ s/);
    // A forged X-Forwarded-For changes nothing without a trusted proxy.
    expect((await get(`${h.url}/supported`, { 'x-forwarded-for': '198.51.100.9' })).status).toBe(429);
    // Exempt.
    expect((await get(`${h.url}/health`)).status).toBe(200);
    const events = await fetch(`${h.url}/events`, { signal: AbortSignal.timeout(2000) });
    expect(events.status).toBe(200);
    await events.body?.cancel();
  });
});

describe('the general limit turned off', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ IP_RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => h.close());

  it('lets any number of requests through', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () => get(`${h.url}/supported`).then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
  });
});

describe('behind a trusted proxy', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      IP_RATE_LIMIT_PER_MINUTE: '3',
      IP_COSTLY_LIMIT_PER_MINUTE: '1',
      TRUST_PROXY: '127.0.0.1',
    }); // the harness's own request comes from 127.0.0.1
  });
  afterAll(() => h.close());

  it('keys the limits by the forwarded client address', async () => {
    const a = { 'x-forwarded-for': '203.0.113.1' };
    const b = { 'x-forwarded-for': '203.0.113.2' };
    for (let i = 0; i < 3; i++) expect((await get(`${h.url}/supported`, a)).status).toBe(200);
    expect((await get(`${h.url}/supported`, a)).status).toBe(429);
    expect((await get(`${h.url}/supported`, b)).status).toBe(200);
    // The costly limit too: one freeze attempt per minute per client (a bad body still counts).
    const freeze = (headers: Record<string, string>) =>
      fetch(`${h.url}/demo/owner/freeze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      }).then((r) => r.status);
    expect(await freeze(b)).toBe(400);
    expect(await freeze(b)).toBe(429);
    expect(await freeze({ 'x-forwarded-for': '203.0.113.3' })).toBe(400);
  });
});

describe('the facilitator’s own calls', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ IP_RATE_LIMIT_PER_MINUTE: '20' });
  });
  afterAll(() => h.close());

  it('MCP tools answer through the routes without counting those inner requests against the caller', async () => {
    const client = new Client({ name: 'limits-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`))); // 2–3 requests
    // 12 tool calls: 12 POSTs, each answered by an inner GET. Counting those too (1 + 3 + 24 > 20)
    // would refuse the later calls.
    for (let i = 0; i < 12; i++) {
      const result = await client.callTool({ name: 'svc_stats', arguments: {} });
      expect(result.isError ?? false).toBe(false);
    }
    await client.close();
    let passed = 0;
    while ((await get(`${h.url}/supported`)).status === 200) passed++;
    // 20 − (1 harness + 2–3 connect + 12 calls + 0–1 close) requests were left.
    expect(passed).toBeGreaterThanOrEqual(3);
    expect(passed).toBeLessThanOrEqual(5);
    // The internal header with a wrong token is an ordinary request.
    expect((await get(`${h.url}/supported`, { 'x-svc-internal': 'guess' })).status).toBe(429);
  });
});

describe('headers and parser-level refusals', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CORS_ORIGINS: 'https://shop.example' });
  });
  afterAll(() => h.close());

  it('sets the security headers on answers, errors and streams', async () => {
    const check = (headers: Headers, what: string) => {
      expect(headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(headers.get('x-frame-options'), what).toBe('DENY');
      expect(headers.get('referrer-policy'), what).toBe('no-referrer');
      expect(headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'");
      expect(headers.get('strict-transport-security'), what).toMatch(/max-age=\d+/);
      expect(headers.get('cross-origin-resource-policy'), what).toBe('cross-origin');
    };
    check((await get(`${h.url}/supported`)).headers, 'a JSON answer');
    check((await get(`${h.url}/nope`)).headers, 'a 404');
    check((await get(`${h.url}/channels/abc`)).headers, 'a 400');
    const events = await fetch(`${h.url}/events`, { signal: AbortSignal.timeout(2000) });
    check(events.headers, 'the event stream');
    await events.body?.cancel();
    const unpaid = await get(`${h.url}/demo/book`);
    expect(unpaid.status).toBe(402);
    check(unpaid.headers, 'a 402');
  });

  it('answers only the configured origins, and exposes the payment headers to them', async () => {
    const preflight = await fetch(`${h.url}/verify`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const answer = await fetch(`${h.url}/demo/book`, { headers: { origin: 'https://shop.example' } });
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const exposed = (answer.headers.get('access-control-expose-headers') ?? '').toLowerCase();
    for (const name of ['payment-required', 'payment-response', 'retry-after']) expect(exposed).toContain(name);
    const stranger = await fetch(`${h.url}/supported`, { headers: { origin: 'https://evil.example' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a method a route does not take with 405, Allow and the error body; an unknown path stays 404', async () => {
    const cases: [string, string, string][] = [
      ['PUT', '/verify', 'POST'],
      ['GET', '/verify', 'POST'],
      ['DELETE', '/settle', 'POST'],
      ['POST', '/channels/1', 'GET, HEAD'],
      ['PATCH', '/streams/ab/wait', 'POST'],
      ['POST', `/accounts/${h.f.address}/ledger`, 'GET, HEAD'],
      ['PUT', '/streams/ab', 'DELETE'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await fetch(`${h.url}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
      expect(await res.json()).toMatchObject({
        error: 'BAD_REQUEST',
        source: 'facilitator',
        message: expect.stringContaining(`${method} ${path.split('?')[0]}`),
      });
    }
    const unknown = await fetch(`${h.url}/nope`, { method: 'PUT' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('allow')).toBeNull();
  });

  it('answers a plain OPTIONS (no preflight headers) with the methods allowed, not a text/plain 400', async () => {
    for (const headers of [{}, { origin: 'https://shop.example' }] as Record<string, string>[]) {
      const res = await fetch(`${h.url}/verify`, { method: 'OPTIONS', headers });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(await res.text()).toBe('');
    }
  });

  it('refuses headers over the parser’s limit with 431 and a malformed request with 400, both with the error body', async () => {
    const { port } = new URL(h.url);
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request));
        let out = '';
        socket.on('data', (chunk: Buffer) => (out += chunk.toString()));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
      });
    const big = await raw(`GET /supported HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: 'BAD_REQUEST',
      source: 'facilitator',
    });
    const bad = await raw('NOT A REQUEST\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'BAD_REQUEST' });
    expect((await get(`${h.url}/health`)).status).toBe(200);
  });

  it('bounds bodies: over 64 KiB is 413, JSON nested past 64 levels 400 with the error body; an MCP batch past 16 messages 400 with a JSON-RPC error', async () => {
    const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${h.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const large = await post('/verify', JSON.stringify({ x402Version: 2, pad: 'x'.repeat(64 * 1024) }));
    expect(large).toMatchObject({ status: 413, body: { error: 'BAD_REQUEST', source: 'facilitator' } });
    const deep = await post('/verify', `{"x402Version":2,"paymentPayload":${'['.repeat(65)}${']'.repeat(65)}}`);
    expect(deep).toMatchObject({
      status: 400,
      body: { error: 'BAD_REQUEST', message: expect.stringContaining('nested deeper than 64') },
    });
    const shallow = await post(
      '/verify',
      `{"x402Version":2,"paymentPayload":{"a":${'['.repeat(60)}${']'.repeat(60)}}}`,
    );
    expect(shallow.body['message']).not.toContain('nested');
    const message = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
    const accept = { accept: 'application/json, text/event-stream' };
    const batch = await post('/mcp', JSON.stringify(Array.from({ length: 17 }, (_v, i) => message(i))), accept);
    // /mcp answers JSON-RPC errors (MCP specification): Invalid Request, id null.
    expect(batch).toMatchObject({
      status: 400,
      body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/1 to 16 messages/) } },
    });
    const one = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...accept },
      body: JSON.stringify(message(1)),
    });
    expect(one.status).toBe(200);
  });
});

describe('two instances sharing Redis', async () => {
  const enabled = await redisEnabled();
  const env = {
    RATE_LIMIT_STORE: 'redis',
    REDIS_URL: redisTestUrl(),
    RATE_LIMIT_PREFIX: `t${randomBytes(4).toString('hex')}`,
    IP_RATE_LIMIT_PER_MINUTE: '6',
  };
  const both: Harness[] = [];
  beforeAll(async () => {
    if (enabled) both.push(await startHarness(env), await startHarness(env));
  });
  afterAll(() => Promise.all(both.map((h) => h.close())));

  it.runIf(enabled)('count one client’s requests to either against one budget', async () => {
    // Each harness read /ledger/info once: 4 of the 6 are left, across both instances.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await get(`${both[i % 2]!.url}/supported`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });
});
