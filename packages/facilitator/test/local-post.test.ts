// localPost: the demo seller's meter calls POST /verify and POST /receipts/:id/attest in process,
// over the route table instead of HTTP. Each answer must be the one HTTP gives the same request:
// status, error body, Retry-After, seller authentication, the attest token's rules.
import type { PaymentRequirements } from '@svc/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostJson } from '@svc/meter';
import { localPost } from '../src/http/in-process/post.js';
import { startHarness } from './helpers/harness.js';
import type { Buyer, Harness } from './helpers/harness.js';

describe('localPost answers as HTTP does', () => {
  let h: Harness;
  let post: PostJson;
  let b: Buyer;
  let reqs: PaymentRequirements;
  let token: string;
  const JSON_TYPE = { 'content-type': 'application/json' };

  /** The same request over HTTP and in process: [http, local]. */
  async function both(path: string, headers: Record<string, string>, body: string) {
    const res = await fetch(`${h.url}${path}`, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body });
    const http = {
      status: res.status,
      json: (await res.json()) as unknown,
      retryAfter: res.headers.get('retry-after'),
    };
    const got = await post(`${h.url}${path}`, { ...JSON_TYPE, ...headers }, body, 5_000);
    return [http, { status: got.status, json: got.json, retryAfter: got.header('Retry-After') }] as const;
  }

  function verifyBody(cumulative: bigint, requirements = reqs): string {
    const payload = b.signer.sign(cumulative);
    return JSON.stringify({
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: requirements, payload, resource: { url: `${h.url}/thing` } },
      paymentRequirements: requirements,
      method: 'GET',
    });
  }

  beforeAll(async () => {
    h = await startHarness();
    post = localPost(h.f.routes, h.f.app.log);
    b = await h.buyer();
    reqs = h.requirements();
    token = h.sellerToken(reqs.payTo);
  });
  afterAll(() => h.close());

  it('accepts a voucher with the payee’s token and gives its attest token, as over HTTP', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const local = await post(`${h.url}/verify`, { ...JSON_TYPE, ...auth }, verifyBody(5000n), 5_000);
    const res = await fetch(`${h.url}/verify`, {
      method: 'POST',
      headers: { ...JSON_TYPE, ...auth },
      body: verifyBody(10_000n),
    });
    const http = (await res.json()) as { isValid: boolean; extra: { attestToken: string; receipt: object } };
    expect(res.status).toBe(200);
    expect(local.status).toBe(200);
    const answer = local.json as typeof http;
    expect(answer.isValid).toBe(true);
    expect(answer.extra.attestToken).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(answer.extra.receipt).sort()).toEqual(Object.keys(http.extra.receipt).sort());
  });

  it('refuses the same voucher again and another payTo’s token, with HTTP’s answers', async () => {
    const [httpReplay, localReplay] = await both('/verify', {}, verifyBody(10_000n));
    expect(localReplay).toEqual(httpReplay);
    expect((localReplay.json as { invalidReason: string }).invalidReason).toBe('VOUCHER_NOT_INCREASING');
    const other = h.sellerToken(h.requirements({ payTo: (await h.buyer()).keys.address }).payTo);
    const [http403, local403] = await both('/verify', { authorization: `Bearer ${other}` }, verifyBody(15_000n));
    expect(local403).toEqual(http403);
    expect(local403.status).toBe(403);
    const [http401, local401] = await both('/verify', { authorization: 'Bearer forged' }, verifyBody(15_000n));
    expect(local401).toEqual(http401);
    expect(local401.status).toBe(401);
  });

  it('answers malformed bodies, headers and paths with HTTP’s 400 and 404 bodies', async () => {
    for (const [headers, body] of [
      [{}, '{"x402Version":2}'],
      [{}, '{not json'],
      [{}, '{"__proto__":{"x":1},"x402Version":2}'],
      [{}, '['.repeat(200) + ']'.repeat(200)],
      [{ 'idempotency-key': 'has spaces' }, verifyBody(15_000n)],
    ] as const) {
      const [http, local] = await both('/verify', headers, body);
      expect(local, body.slice(0, 40)).toEqual(http);
      expect(local.status).toBe(400);
    }
    const [http404, local404] = await both('/nowhere', {}, '{}');
    expect(local404).toEqual(http404);
    expect(local404.status).toBe(404);
  });

  it('attests once, with the attest token only, as over HTTP', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const first = await post(`${h.url}/verify`, { ...JSON_TYPE, ...auth }, verifyBody(20_000n), 5_000);
    const second = await post(`${h.url}/verify`, { ...JSON_TYPE, ...auth }, verifyBody(25_000n), 5_000);
    type Verdict = { extra: { attestToken: string; receipt: { receipt: { id: string } } } };
    const [a, c] = [first.json as Verdict, second.json as Verdict];
    const hash = JSON.stringify({ responseHash: 'ab'.repeat(32) });
    const path = (v: Verdict) => `/receipts/${v.extra.receipt.receipt.id}/attest`;
    // No token, and another receipt's token: 401 and 403 both ways.
    const [http401, local401] = await both(path(a), {}, hash);
    expect(local401).toEqual(http401);
    expect(local401.status).toBe(401);
    const [http403, local403] = await both(path(a), { authorization: `Bearer ${c.extra.attestToken}` }, hash);
    expect(local403).toEqual(http403);
    expect(local403.status).toBe(403);
    // Attested in process; then once more (in process and over HTTP): 409 both ways.
    const ok = await post(
      `${h.url}${path(a)}`,
      { ...JSON_TYPE, authorization: `Bearer ${a.extra.attestToken}` },
      hash,
      5_000,
    );
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ receiptId: a.extra.receipt.receipt.id, responseHash: 'ab'.repeat(32) });
    const [http409, local409] = await both(path(a), { authorization: `Bearer ${a.extra.attestToken}` }, hash);
    expect(local409).toEqual(http409);
    expect(local409.status).toBe(409);
    const view = (await (await fetch(`${h.url}/receipts/${a.extra.receipt.receipt.id}`)).json()) as {
      attestation: { responseHash: string } | null;
    };
    expect(view.attestation?.responseHash).toBe('ab'.repeat(32));
  });
});
