// The meter's per-request calls to the facilitator: on Node over node:http with keep-alive sockets
// (transport-node.ts), with the seller's own fetch when it gives one (svc({ fetch })). Either way
// an answer of any status resolves with its JSON and headers, a network failure or a deadline
// rejects, and /verify retries a lost answer once under the same Idempotency-Key.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { FacilitatorClient, svc } from '@svc/meter';
import { fetchPost } from '../src/transport.js';
import { nativePost, transport } from '../src/transport-node.js';
import type { PostJson } from '../src/transport.js';

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A server answering with `handler`; counts the connections it accepted. */
async function serve(handler: Handler): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => handler(req, body, res));
  });
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe.each<[string, () => PostJson]>([
  ['node:http', () => nativePost()],
  ['fetch', () => fetchPost(globalThis.fetch)],
])('PostJson over %s', (_, make) => {
  it('sends the body and headers, and reads the status, the JSON and a header of any answer', async () => {
    const seen: { method?: string; type?: string; body?: string }[] = [];
    const { url } = await serve((req, body, res) => {
      seen.push({ method: req.method, type: req.headers['content-type'], body });
      json(res, 429, { error: 'RATE_LIMITED' }, { 'retry-after': '7' });
    });
    const reply = await make()(`${url}/verify`, { 'content-type': 'application/json' }, '{"a":1}', 5000);
    expect(seen).toEqual([{ method: 'POST', type: 'application/json', body: '{"a":1}' }]);
    expect(reply.status).toBe(429);
    expect(reply.json).toEqual({ error: 'RATE_LIMITED' });
    expect(reply.header('Retry-After')).toBe('7');
    expect(reply.header('x-none')).toBeNull();
  });

  it('reads a body that is not JSON, or none, as null', async () => {
    const { url } = await serve((req, _body, res) => res.end(req.url === '/text' ? 'not json' : ''));
    const post = make();
    expect((await post(`${url}/text`, {}, '{}', 5000)).json).toBeNull();
    expect((await post(`${url}/empty`, {}, '{}', 5000)).json).toBeNull();
  });

  it('rejects when nothing answers, and once the deadline passes', async () => {
    const { url } = await serve(() => undefined); // never answers
    const post = make();
    await expect(post(`${url}/verify`, {}, '{}', 100)).rejects.toThrow();
    const closed = await serve(() => undefined);
    const port = new URL(closed.url).port;
    servers.pop()!.close();
    await expect(post(`http://127.0.0.1:${port}/verify`, {}, '{}', 2000)).rejects.toThrow();
  });
});

describe('the node:http transport', () => {
  it('is the one the meter takes on Node', () => {
    expect(transport).toBe('node:http');
  });

  it('keeps its connection alive from one call to the next', async () => {
    const server = await serve((_req, _body, res) => json(res, 200, { ok: true }));
    const post = nativePost();
    for (let i = 0; i < 5; i++) expect((await post(`${server.url}/verify`, {}, '{}', 5000)).status).toBe(200);
    expect(server.connections()).toBe(1);
  });
});

describe('FacilitatorClient.verify', () => {
  it('retries an answer lost on the network once, under the same Idempotency-Key', async () => {
    const keys: string[] = [];
    const { url } = await serve((req, _body, res) => {
      keys.push(String(req.headers['idempotency-key']));
      if (keys.length === 1) return void res.socket?.destroy();
      json(res, 200, { isValid: false, invalidReason: 'VOUCHER_BAD_SIGNATURE', invalidMessage: 'no' });
    });
    const client = new FacilitatorClient(url, globalThis.fetch, 5000, null, nativePost());
    const body = { x402Version: 2, paymentPayload: {}, paymentRequirements: {} } as unknown as Parameters<
      FacilitatorClient['verify']
    >[0];
    const reply = await client.verify(body);
    expect(reply).toEqual({
      kind: 'verdict',
      verdict: { isValid: false, invalidReason: 'VOUCHER_BAD_SIGNATURE', invalidMessage: 'no' },
    });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f]{44}$/);
    expect(keys[1]).toBe(keys[0]);
    expect((await client.verify(body)).kind).toBe('verdict');
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('goes through the seller’s own fetch when svc() is given one', async () => {
    const calls: string[] = [];
    const fetchImpl = ((input: string) => {
      calls.push(input);
      return Promise.resolve(Response.json({ isValid: false, invalidReason: 'WRONG_PAYEE', invalidMessage: 'no' }));
    }) as typeof fetch;
    const client = svc({ facilitator: 'http://facilitator.test', payTo: randomKeypair().address, fetch: fetchImpl });
    const reply = await client.facilitator.verify({} as Parameters<FacilitatorClient['verify']>[0]);
    expect(reply.kind).toBe('verdict');
    // svc() asks /supported once at start (the check that tells the seller of a wrong URL), through the same fetch.
    expect(calls).toEqual(['http://facilitator.test/supported', 'http://facilitator.test/verify']);
  });
});
