// Seller tokens: the credential of a payee's side. Minted over HTTP for a
// request signed by the payTo account's key; refused when forged, stale, expired or another
// seller's; made and fetched by `svc seller`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import { accountFromPublicKey, concatBytes, fromHex, randomKeypair, signSellerTokenRequest, toHex } from '@svc/core';
import { requestSellerToken, svc } from '@svc/meter';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { spawnSvc } from '../helpers/process.js';

const DAY = 86_400_000;
const clock = {
  offset: 0,
  now() {
    return Date.now() + this.offset;
  },
};

describe('POST /sellers/:payTo/token', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off' }, { clock });
  });
  afterAll(() => h.close());

  const request = (payTo: string, body: unknown) =>
    fetch(`${h.url}/sellers/${payTo}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  function signed(keys = randomKeypair(), o: { ts?: number; expires?: number; facilitator?: string } = {}) {
    const now = Date.now();
    const req = {
      network: 'stellar:local',
      facilitator: o.facilitator ?? h.f.address,
      payTo: keys.address,
      ts: new Date(o.ts ?? now).toISOString(),
      expiresAt: new Date(o.expires ?? now + 30 * DAY).toISOString(),
    };
    return { keys, body: { ts: req.ts, expiresAt: req.expiresAt, signature: signSellerTokenRequest(keys, req) } };
  }

  it('mints a token for a request signed by payTo’s key, and the token proves that seller until it expires', async () => {
    const { keys, body } = signed();
    const res = await request(keys.address, body);
    expect(res.status).toBe(200);
    const minted = (await res.json()) as { token: string; payTo: string; expiresAt: string };
    expect(minted).toMatchObject({
      payTo: keys.address,
      token: expect.stringMatching(/^svcs1\.G[A-Z2-7]{55}\.[0-9]+\.[A-Za-z0-9_-]{43}$/),
    });
    expect(h.f.services.sellerTokens.check(minted.token)).toMatchObject({ payTo: keys.address });
    // The same through the meter's helper.
    const viaMeter = await requestSellerToken({ facilitator: h.url, secret: keys.secret(), days: 2 });
    expect(Date.parse(viaMeter.expiresAt) - Date.now()).toBeGreaterThan(DAY);
    // Expired: refused, and a request that sends it is told so (401).
    clock.offset = 31 * DAY;
    try {
      expect(h.f.services.sellerTokens.check(minted.token)).toBeNull();
      const b = await h.buyer({ payee: keys.address });
      expect(
        (
          await h.verify(b.signer.sign(5000n), h.requirements({ payTo: keys.address }), {
            authorization: `Bearer ${minted.token}`,
          })
        ).status,
      ).toBe(401);
    } finally {
      clock.offset = 0;
    }
  });

  it('refuses another key’s signature, another facilitator’s request, a stale or future ts, a contract address and a bad body', async () => {
    const { keys, body } = signed();
    const other = randomKeypair();
    expect((await request(other.address, body)).status).toBe(403);
    const elsewhere = signed(keys, { facilitator: randomKeypair().address });
    expect((await request(keys.address, elsewhere.body)).status).toBe(403);
    const stale = signed(keys, { ts: Date.now() - 10 * 60_000 });
    expect(await (await request(keys.address, stale.body)).json()).toMatchObject({
      error: 'BAD_REQUEST',
      message: expect.stringMatching(/within 5 minutes/),
    });
    const past = signed(keys, { expires: Date.now() - 1000 });
    expect((await request(keys.address, past.body)).status).toBe(400);
    const contract = h.f.ledgerInfo.contracts.channel;
    expect((await request(contract, body)).status).toBe(400);
    expect((await request(keys.address, { ...body, signature: 'zz' })).status).toBe(400);
  });

  it('refuses a signature forged for the identity key’s account (a small-order key: R = [s]B, S = s verifies any message)', async () => {
    const identity = fromHex('01' + '00'.repeat(31), 32);
    const payTo = accountFromPublicKey(identity);
    const s = 123456789n;
    const S = new Uint8Array(32);
    for (let i = 0, x = s; i < 32; i++, x >>= 8n) S[i] = Number(x & 0xffn);
    const signature = toHex(concatBytes(ed25519.Point.BASE.multiply(s).toBytes(), S));
    const now = Date.now();
    const res = await request(payTo, {
      ts: new Date(now).toISOString(),
      expiresAt: new Date(now + DAY).toISOString(),
      signature,
    });
    expect(res.status).toBe(403);
    expect(await res.json()).not.toHaveProperty('token');
  });

  it('reads the Bearer scheme in any case, and answers a token sent but too long 401, not as if none were sent', async () => {
    const seller = randomKeypair();
    const token = h.sellerToken(seller.address);
    const b = await h.buyer({ payee: seller.address });
    const reqs = h.requirements({ payTo: seller.address });
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await h.verify(b.signer.next(5000n), reqs, { authorization: `${scheme} ${token}` });
      expect(res.body, scheme).toMatchObject({ isValid: true, extra: { attestToken: expect.any(String) } });
      b.signer.confirm(BigInt((res.body['receipt'] as { cumulative: string }).cumulative));
    }
    for (const authorization of [`Bearer ${token}${'x'.repeat(600)}`, 'Bearer ', 'Bearer']) {
      const res = await h.verify(b.signer.next(5000n), reqs, { authorization });
      expect(res.status, authorization.slice(0, 20)).toBe(401);
      expect(res.body).toMatchObject({ error: 'UNAUTHORIZED' });
    }
  });

  it('accepts a token in one spelling only: a leading zero in its expiry or whitespace around it is 401, saying what is wrong', async () => {
    const seller = randomKeypair();
    const token = h.sellerToken(seller.address);
    const b = await h.buyer({ payee: seller.address });
    const reqs = h.requirements({ payTo: seller.address });
    // The same MAC over the same body, the expiry spelled another way.
    const padded = token.replace(/^(svcs1\.G[A-Z2-7]{55}\.)/, '$10');
    expect(padded).not.toBe(token);
    const refused = [
      { authorization: `Bearer ${padded}`, message: /not valid here/ },
      { authorization: `Bearer  ${token}`, message: /one space after Bearer/ },
      { authorization: `Bearer\t${token}`, message: /one space after Bearer/ },
    ];
    for (const { authorization, message } of refused) {
      const res = await h.verify(b.signer.next(5000n), reqs, { authorization });
      expect(res.status, JSON.stringify(authorization)).toBe(401);
      expect(res.body).toMatchObject({ error: 'UNAUTHORIZED', message: expect.stringMatching(message) });
    }
    const res = await h.verify(b.signer.next(5000n), reqs, { authorization: `Bearer ${token}` });
    expect(res.body).toMatchObject({ isValid: true, extra: { attestToken: expect.any(String) } });
  });

  it('caps a token’s life at 366 days', async () => {
    const { keys, body } = signed(randomKeypair(), { expires: Date.now() + 5 * 365 * DAY });
    const minted = (await (await request(keys.address, body)).json()) as { expiresAt: string };
    expect(Date.parse(minted.expiresAt)).toBeLessThanOrEqual(Date.now() + 366 * DAY);
  });

  it('the meter refuses a malformed token at once, and streaming without one says how to get it', async () => {
    const payTo = randomKeypair().address;
    expect(() => svc({ facilitator: h.url, payTo, sellerToken: 'nope' })).toThrow(/sellerToken must be a seller token/);
    const client = svc({ facilitator: h.url, payTo });
    await expect(client.stream({} as never, {} as never, { price: 1n, unit: 'second' })).rejects.toThrow(
      /streaming needs the seller’s token.*svc-seller token/,
    );
  });
});

describe('svc seller', () => {
  let h: Harness;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-seller-cli-'));
  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off' });
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; out: string; stdout: string }>((resolve) => {
      const child = spawnSvc(args, env);
      let out = '';
      let stdout = '';
      child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), (stdout += d.toString())));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) => resolve({ code, out, stdout }));
    });

  it('creates a key once, prints its address, and fetches a token the facilitator accepts', async () => {
    const env = { SVC_SELLER: path.join(dir, 'seller.json'), SVC_FACILITATOR: h.url };
    const missing = await run(['seller', 'token'], env);
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/no seller key in .*seller\.json: run `svc-seller init` first/);
    const made = await run(['seller', 'init'], env);
    expect(made.code).toBe(0);
    const address = /seller (G[A-Z2-7]{55})/.exec(made.out)![1]!;
    expect((fs.statSync(env.SVC_SELLER).mode & 0o777).toString(8)).toBe('600');
    expect((await run(['seller', 'init'], env)).out).toContain(`seller ${address}`); // kept, not replaced
    const got = await run(['seller', 'token', '--days', '7'], env);
    expect(got.code).toBe(0);
    // Standard output is the token alone, so that SVC_SELLER_TOKEN=$(svc-seller token) takes it; what
    // it is for goes to standard error.
    expect(got.stdout).toMatch(/^svcs1\.\S+\n$/);
    expect(got.out).toMatch(/seller token for G[A-Z2-7]{55} at /);
    const token = got.stdout.trim();
    expect(h.f.services.sellerTokens.check(token)).toMatchObject({ payTo: address });
    expect(got.out).not.toContain(JSON.parse(fs.readFileSync(env.SVC_SELLER, 'utf8')).secret as string);
  });
});
