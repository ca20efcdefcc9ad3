// The x402 facilitator endpoints in the shapes x402 2.x clients parse, and claims that retry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SupportedResponseSchema, randomKeypair, signLedgerTx, toHex, verifyReceipt, voucherContext } from '@svc/core';
import { LocalLedger, LedgerUnavailable } from '@svc/ledger';
import type { Ledger } from '@svc/ledger';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';
import Fastify from 'fastify';
import { startHarness } from '../helpers/harness.js';
import { installResponseCheck } from '../helpers/openapi-check.js';
import type { Harness } from '../helpers/harness.js';

/** What a /settle (or /verify) body says besides the voucher; by default what h.verify sends. */
interface CallOptions {
  reqs?: ReturnType<Harness['requirements']>;
  resource?: string;
  method?: string;
  requestHash?: string;
}

describe('GET /supported, POST /settle', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  /** POST /settle (or /verify) with the body h.verify sends: a resource server sends /settle what it sent /verify. */
  const call = async (
    route: '/settle' | '/verify',
    payload: Parameters<Harness['verify']>[0],
    headers: Record<string, string> = {},
    o: CallOptions = {},
  ) => {
    const reqs = o.reqs ?? h.requirements();
    const res = await fetch(`${h.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: reqs,
          payload,
          resource: { url: o.resource ?? `${h.url}/test/resource` },
        },
        paymentRequirements: reqs,
        method: o.method ?? 'GET',
        ...(o.requestHash === undefined ? {} : { requestHash: o.requestHash }),
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };
  const settle = (
    payload: Parameters<Harness['verify']>[0],
    headers: Record<string, string> = {},
    o: CallOptions = {},
  ) => call('/settle', payload, headers, o);

  it('lists the channel scheme for x402 v2 and v1 with the asset, contract and receipt signer, then batch-settlement', async () => {
    const body = SupportedResponseSchema.parse(await (await fetch(`${h.url}/supported`)).json());
    const info = await h.ledger.info();
    expect(body.kinds.map((k) => [k.x402Version, k.scheme, k.network])).toEqual([
      [2, 'channel', 'stellar:local'],
      [1, 'channel', 'stellar:local'],
      [2, 'batch-settlement', 'stellar:local'],
    ]);
    expect(body.kinds[2]!.extra).toEqual({ ...body.kinds[0]!.extra, receiverAuthorizer: h.f.address });
    expect(body.kinds[0]!.extra).toEqual({
      asset: info.contracts.asset,
      assetCode: 'USDC',
      decimals: 7,
      channelContract: info.contracts.channel,
      areFeesSponsored: true,
      facilitator: h.url,
      receiptSigner: h.f.address,
    });
    expect(body.signers).toEqual({ 'stellar:*': [h.f.address] });
    expect(body.extensions).toEqual(['bazaar']);
  });

  it('confirms a voucher /verify accepted, with the same receipt and transaction ""', async () => {
    const b = await h.buyer();
    const v = b.signer.next(5000n);
    const verified = await h.verify(v);
    // The spec's answer, { isValid, receipt }: the signed receipt at the top, as under extra.
    const extra = verified.body['extra'] as { receipt: { receipt: Record<string, unknown> } };
    expect(verified.body['receipt']).toEqual(extra.receipt.receipt);
    expect(verifyReceipt(verified.body['receipt'], [h.f.address])).toEqual({ ok: true });
    const settled = await settle(v);
    expect(settled).toMatchObject({
      success: true,
      transaction: '',
      network: 'stellar:local',
      payer: b.keys.address,
      cumulative: '5000',
    });
    expect((settled['receipt'] as { id: string }).id).toBe(
      ((verified.body['extra'] as Record<string, unknown>)['receipt'] as { receipt: { id: string } }).receipt.id,
    );
    const view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as { vouchers: number };
    expect(view.vouchers).toBe(1);
  });

  it('confirms a voucher once: a replay is refused, the same request with its Idempotency-Key gets the first answer', async () => {
    const b = await h.buyer();
    // "Settle before serving": the seller calls only /settle.
    const v = b.signer.sign(5000n);
    const first = await settle(v, { 'idempotency-key': 'settle-1' });
    expect(first).toMatchObject({ success: true, cumulative: '5000' });
    for (let i = 0; i < 5; i++)
      expect(await settle(v)).toMatchObject({ success: false, errorReason: 'VOUCHER_NOT_INCREASING', transaction: '' });
    expect(await settle(v, { 'idempotency-key': 'settle-2' })).toMatchObject({
      success: false,
      errorReason: 'VOUCHER_NOT_INCREASING',
    });
    expect(await settle(v, { 'idempotency-key': 'settle-1' })).toEqual(first);
    // Verify, serve, settle: the settle confirms once, a second settle is a refusal.
    const w = b.signer.sign(10_000n);
    expect((await h.verify(w)).body['isValid']).toBe(true);
    const confirmed = await settle(w, { 'idempotency-key': 'settle-3' });
    expect(confirmed).toMatchObject({ success: true, cumulative: '10000' });
    expect(await settle(w)).toMatchObject({ success: false, errorReason: 'VOUCHER_NOT_INCREASING' });
    expect(await settle(w, { 'idempotency-key': 'settle-3' })).toEqual(confirmed);
    const view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as {
      vouchers: number;
      lastAccepted: string;
    };
    expect(view).toMatchObject({ vouchers: 2, lastAccepted: '10000' });
  });

  it('treats requirements without svc’s `unit` (an official x402 server’s) as per request', async () => {
    const b = await h.buyer();
    const { unit: _unit, ...reqs } = h.requirements();
    const res = await fetch(`${h.url}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: reqs, payload: b.signer.next(5000n) },
        paymentRequirements: reqs,
      }),
    });
    expect(await res.json()).toMatchObject({
      isValid: true,
      extra: { receipt: { receipt: { unit: 'request', amount: '5000' } } },
    });
  });

  it('confirms a voucher /verify accepted only for the same terms: resource, method, request and a price it covers', async () => {
    // Anyone may call /verify (a buyer too), and a svc meter never calls /settle: a voucher /verify
    // accepted must not become a payment for something else at a seller that only calls /settle.
    const b = await h.buyer();
    const cheap = b.signer.sign(1n);
    expect((await h.verify(cheap, h.requirements({ amount: '1' }))).body['isValid']).toBe(true);
    expect(await settle(cheap, {}, { reqs: h.requirements({ amount: '900000' }) })).toMatchObject({
      success: false,
      errorReason: 'VOUCHER_NOT_INCREASING',
    });
    const hash = (c: string) => c.repeat(64);
    const v = b.signer.sign(5001n);
    expect((await h.verify(v)).body['isValid']).toBe(true);
    for (const other of [
      { resource: `${h.url}/expensive` },
      { method: 'POST' },
      { requestHash: hash('a') },
      { reqs: h.requirements({ amount: '5001' }) },
    ])
      expect(await settle(v, {}, other)).toMatchObject({ success: false, errorReason: 'VOUCHER_NOT_INCREASING' });
    // The same terms (a lower price too: the voucher covers it) confirm it, once.
    expect(await settle(v, {}, { reqs: h.requirements({ amount: '4000' }) })).toMatchObject({
      success: true,
      cumulative: '5001',
      delta: '5000',
    });
    expect(await settle(v)).toMatchObject({ success: false, errorReason: 'VOUCHER_NOT_INCREASING' });
    // A request hash /verify saw must be the one /settle names.
    const w = b.signer.sign(10_001n);
    expect(await call('/verify', w, {}, { requestHash: hash('b') })).toMatchObject({ isValid: true });
    expect(await settle(w)).toMatchObject({ success: false, errorReason: 'VOUCHER_NOT_INCREASING' });
    expect(await settle(w, {}, { requestHash: hash('c') })).toMatchObject({ success: false });
    expect(await settle(w, {}, { requestHash: hash('b') })).toMatchObject({ success: true, cumulative: '10001' });
  });

  it('verifies and accepts a voucher /verify never saw', async () => {
    const b = await h.buyer();
    expect(await settle(b.signer.next(5000n))).toMatchObject({ success: true, cumulative: '5000' });
    expect(await settle(b.signer.sign(10_000n))).toMatchObject({ success: true, cumulative: '10000', delta: '5000' });
  });

  it('does not confirm an accepted amount for a payload that lacks the buyer’s signature', async () => {
    const b = await h.buyer();
    const other = await h.buyer();
    const v = b.signer.next(5000n);
    await h.verify(v);
    const forged = { ...v, signature: other.signer.sign(5000n).signature };
    expect(await settle(forged)).toMatchObject({
      success: false,
      errorReason: 'VOUCHER_BAD_SIGNATURE',
      transaction: '',
      network: 'stellar:local',
    });
    expect(await settle({ ...v, cumulative: '1.5' })).toMatchObject({
      success: false,
      errorReason: 'PAYMENT_MALFORMED',
    });
  });
});

describe('a claim the ledger cannot take is retried with backoff and reported', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backoff-'));
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backoff-ledger-'));
  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('fails twice, waits 5 s then 10 s, then claims once', async () => {
    const ledger = await LocalLedger.open({ dataDir: ledgerDir, ledgerSeconds: 1 });
    let outage = 2;
    let submits = 0;
    const flaky: Ledger = {
      info: () => ledger.info(),
      latestLedger: () => ledger.latestLedger(),
      getChannel: (id) => ledger.getChannel(id),
      getAccount: (a) => ledger.getAccount(a),
      getTx: (h) => ledger.getTx(h),
      events: (cursor, limit) => ledger.events(cursor, limit),
      close: () => ledger.close(),
      submit: (tx) => ledger.submit(tx),
      claimMany: (rows, signer) => ledger.claimMany(rows, signer),
      refund: (args, signer) => ledger.refund(args, signer),
      claim: (args, signer) => {
        submits++;
        if (outage > 0) {
          outage--;
          return Promise.reject(new LedgerUnavailable('the ledger is down'));
        }
        return ledger.claim(args, signer);
      },
    };
    const clock = {
      t: Date.now(),
      now() {
        return this.t;
      },
    };
    const f = await createFacilitator({
      config: loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO: 'off', CLAIM_THRESHOLD: '1000' }),
      ledger: flaky,
      clock,
    });
    const url = await f.listen();
    try {
      const info = await ledger.info();
      const payer = randomKeypair();
      const payee = randomKeypair();
      const vk = randomKeypair();
      await ledger.faucet(payer.address);
      const opened = await ledger.submit(
        signLedgerTx(payer, info.passphrase, {
          source: payer.address,
          seq: 1,
          op: 'channel.open',
          args: {
            payee: payee.address,
            deposit: '100000',
            voucherKey: vk.publicKeyHex,
            expiryLedger: info.latestLedger + 10_000,
          },
        }),
      );
      const channelId = BigInt(String(opened.result?.['channelId']));
      const reqs = {
        scheme: 'channel',
        network: info.network,
        asset: info.contracts.asset,
        payTo: payee.address,
        amount: '5000',
        unit: 'request',
        maxTimeoutSeconds: 60,
        extra: { channelContract: info.contracts.channel, minDeposit: '1', facilitator: url, areFeesSponsored: true },
      };
      const signature = toHex(voucherContext(info.passphrase, info.contracts.channel).sign(vk, channelId, 5000n));
      const res = await fetch(`${url}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: {
            x402Version: 2,
            accepted: reqs,
            payload: { channelId: channelId.toString(), cumulative: '5000', signature },
          },
          paymentRequirements: reqs,
        }),
      });
      expect(((await res.json()) as { isValid: boolean }).isValid).toBe(true);

      await f.scheduler.tick();
      expect(submits).toBe(1);
      await f.scheduler.tick(); // still backing off
      expect(submits).toBe(1);
      clock.t += 5_001;
      await f.scheduler.tick();
      expect(submits).toBe(2);
      clock.t += 5_001; // the second backoff is 10 s
      await f.scheduler.tick();
      expect(submits).toBe(2);
      clock.t += 5_000;
      await f.scheduler.tick();
      expect(submits).toBe(3);
      expect((await ledger.getChannel(channelId))?.claimed).toBe(5000n);
      const reports = await f.store.events({ types: ['chain.rejected'], limit: 10 });
      // Two failed attempts in one outage: reported once.
      expect(reports.map((e) => e.data['codeName'])).toEqual(['LEDGER_UNAVAILABLE']);
      await f.scheduler.tick();
      expect(submits).toBe(3); // nothing left to claim: not submitted again
    } finally {
      await f.close();
    }
  });
});

describe('the OpenAPI check the harness runs on every answer', () => {
  it('checks real answers, and reports one that drifts from the document', async () => {
    const h = await startHarness({ DEMO: 'off' });
    try {
      const b = await h.buyer({ payee: randomKeypair().address });
      await h.verify(b.signer.sign(5000n), h.requirements({ payTo: b.payee }));
      await fetch(`${h.url}/channels/${b.channelId}`);
      expect(h.responses.checked).toBeGreaterThanOrEqual(2);
      expect(h.responses.violations).toEqual([]);
      // A server that answers a documented route with something else: the check says so.
      const drifting = Fastify();
      const check = installResponseCheck(drifting);
      drifting.get('/channels/:id', () => ({ surprise: true }));
      drifting.get('/stats', (_request, reply) => reply.code(418).send({ teapot: true }));
      await drifting.listen({ port: 0, host: '127.0.0.1' });
      try {
        await check.load(h.url);
        const base = `http://127.0.0.1:${(drifting.server.address() as { port: number }).port}`;
        await fetch(`${base}/channels/1`);
        await fetch(`${base}/stats`);
        expect(check.violations).toEqual([
          expect.stringMatching(/^GET \/channels\/\{id\} → 200: .*required property/),
          expect.stringMatching(/^GET \/stats → 418: .*Error|^GET \/stats → 418/),
        ]);
      } finally {
        await drifting.close();
      }
    } finally {
      await h.close();
    }
  });
});
