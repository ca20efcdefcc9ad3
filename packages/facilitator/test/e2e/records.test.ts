// Accounts, receipts (with attestation), stats and reports.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair, sha256, signReport, toHex, utf8, verifyReceipt } from '@svc/core';
import type { Keypair, ReportBody } from '@svc/core';
import { svc } from '@svc/meter';
import { payFetch } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

describe('receipts', () => {
  let h: Harness;
  const clock = {
    offset: 0,
    now() {
      return Date.now() + this.offset;
    },
  };
  beforeAll(async () => {
    h = await startHarness({}, { clock });
  });
  afterAll(() => h.close());

  it('lists receipts newest first with a cursor and filters; a stored receipt verifies offline', async () => {
    const b = await h.buyer();
    for (let i = 1; i <= 5; i++) await h.verify(b.signer.sign(5000n * BigInt(i)));
    const page1 = (await (await fetch(`${h.url}/receipts?channelId=${b.channelId}&limit=2`)).json()) as {
      receipts: Array<{ id: string; cumulative: string }>;
      nextCursor: string;
    };
    expect(page1.receipts.map((r) => r.cumulative)).toEqual(['25000', '20000']);
    const page2 = (await (
      await fetch(`${h.url}/receipts?channelId=${b.channelId}&limit=2&cursor=${page1.nextCursor}`)
    ).json()) as { receipts: Array<{ cumulative: string }>; nextCursor: string | null };
    expect(page2.receipts.map((r) => r.cumulative)).toEqual(['15000', '10000']);
    const fetched = (await (await fetch(`${h.url}/receipts/${page1.receipts[0]!.id}`)).json()) as {
      receipt: unknown;
      attestation: unknown;
    };
    expect(verifyReceipt(fetched.receipt, [h.f.address])).toEqual({ ok: true });
    expect(fetched.attestation).toBeNull();
    expect(await (await fetch(`${h.url}/receipts/${page1.receipts[0]!.id}/verify`)).json()).toEqual({
      valid: true,
      reason: null,
      signer: h.f.address,
      signedByThisFacilitator: true,
    });
    const byPayee = (await (await fetch(`${h.url}/receipts?payee=${b.payee}&limit=200`)).json()) as {
      receipts: unknown[];
    };
    expect(byPayee.receipts.length).toBeGreaterThanOrEqual(5);
    expect((await fetch(`${h.url}/receipts?limit=201`)).status).toBe(400);
    expect((await fetch(`${h.url}/receipts?cursor=garbage`)).status).toBe(400);
    expect((await fetch(`${h.url}/receipts/${'0'.repeat(64)}`)).status).toBe(404);
  });

  it('the payee’s middleware attests the response body it served; nobody else can, and only once, within 60 s', async () => {
    const payee = randomKeypair();
    const client = svc({ facilitator: h.url, payTo: payee.address, sellerToken: h.sellerToken(payee.address) });
    const app = express();
    app.get('/data', client.meter({ price: 5000n, unit: 'request' }), (_req, res) =>
      res.type('text/plain').send('the answer is 42'),
    );
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const b = await h.buyer({ payee: payee.address });
      const res = await payFetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/data`,
        {},
        { signer: b.signer },
      );
      expect(await res.text()).toBe('the answer is 42');
      const id = res.payment!.receipt.id;
      let attestation: { responseHash: string } | null = null;
      for (let i = 0; i < 50 && !attestation; i++) {
        attestation = (
          (await (await fetch(`${h.url}/receipts/${id}`)).json()) as { attestation: { responseHash: string } | null }
        ).attestation;
        if (!attestation) await new Promise((r) => setTimeout(r, 20));
      }
      expect(attestation?.responseHash).toBe(toHex(sha256(utf8('the answer is 42'))));
      const attest = (token: string | null) =>
        fetch(`${h.url}/receipts/${id}/attest`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify({ responseHash: '11'.repeat(32) }),
        });
      expect((await attest(null)).status).toBe(401);
      expect((await attest('22'.repeat(32))).status).toBe(403);
      expect((await attest(h.f.services.attestations.tokenFor(id))).status).toBe(409); // once
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    // A buyer calling /verify itself gets a receipt naming the seller, but no attest token.
    const b2 = await h.buyer();
    const direct = await h.verify(b2.signer.sign(5000n));
    expect(direct.body).toMatchObject({ isValid: true });
    expect(direct.body['extra']).not.toHaveProperty('attestToken');
    // Too late: more than 60 s after issue (the payee's side, with its token, got the attest token).
    const seller = h.requirements().payTo;
    const v = await h.verify(b2.signer.sign(10_000n), h.requirements(), {
      authorization: `Bearer ${h.sellerToken(seller)}`,
    });
    const late = ((v.body['extra'] as Record<string, unknown>)['receipt'] as { receipt: { id: string } }).receipt.id;
    expect((v.body['extra'] as Record<string, unknown>)['attestToken']).toBe(h.f.services.attestations.tokenFor(late));
    clock.offset = 61_000;
    try {
      const res = await fetch(`${h.url}/receipts/${late}/attest`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${String((v.body['extra'] as Record<string, unknown>)['attestToken'])}`,
        },
        body: JSON.stringify({ responseHash: '11'.repeat(32) }),
      });
      expect(res.status).toBe(409);
    } finally {
      clock.offset = 0;
    }
  });
});

describe('accounts, stats and reports', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('GET /accounts/:address: balances and open channels; its ledger pages newest first', async () => {
    const b = await h.buyer({ deposit: 100_000n });
    await h.f.watcher.tick(); // channel.opened comes from the ledger watcher
    for (let i = 1; i <= 4; i++) await h.verify(b.signer.sign(5000n * BigInt(i)));
    const account = (await (await fetch(`${h.url}/accounts/${b.keys.address}`)).json()) as Record<string, unknown>;
    expect(account).toMatchObject({
      address: b.keys.address,
      kind: 'account',
      policy: null,
      frozen: false,
      spentToday: '0',
    });
    expect(account['balances']).toEqual([
      {
        asset: (await h.ledger.info()).contracts.asset,
        code: 'USDC',
        amount: (100_000_000_000n - 100_000n).toString(),
      },
    ]);
    expect(
      (account['channels'] as Array<{ id: string; lastAccepted: string }>).map((c) => [c.id, c.lastAccepted]),
    ).toEqual([[b.channelId.toString(), '20000']]);
    const page = (await (await fetch(`${h.url}/accounts/${b.keys.address}/ledger?limit=3`)).json()) as {
      events: Array<{ id: number; type: string }>;
      nextCursor: string;
    };
    expect(page.events.map((e) => e.type)).toEqual(['voucher.accepted', 'voucher.accepted', 'voucher.accepted']);
    expect(page.events[0]!.id).toBeGreaterThan(page.events[1]!.id);
    const rest = (await (
      await fetch(`${h.url}/accounts/${b.keys.address}/ledger?cursor=${page.nextCursor}`)
    ).json()) as { events: Array<{ type: string }>; nextCursor: string | null };
    expect(rest.events.map((e) => e.type)).toEqual(['voucher.accepted', 'channel.opened']);
    expect(rest.nextCursor).toBeNull();
    expect((await fetch(`${h.url}/accounts/${b.keys.address}/ledger?limit=0`)).status).toBe(400);
    expect((await fetch(`${h.url}/accounts/not-an-address`)).status).toBe(400);
  });

  it('GET /stats counts vouchers, rejections, claims, volume and open channels', async () => {
    const before = (await (await fetch(`${h.url}/stats`)).json()) as {
      vouchersAccepted: number;
      vouchersRejected: number;
      volume: string;
    };
    const b = await h.buyer();
    await h.verify(b.signer.next(5000n));
    await h.verify(b.signer.next(5000n)); // not increasing
    await h.f.watcher.tick();
    let after: Record<string, unknown> = {};
    for (let i = 0; i < 50; i++) {
      // The rejection is recorded off the request's path: wait for it.
      after = (await (await fetch(`${h.url}/stats`)).json()) as Record<string, unknown>;
      if (after['vouchersRejected'] === before.vouchersRejected + 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(after['vouchersAccepted']).toBe(before.vouchersAccepted + 1);
    expect(after['vouchersRejected']).toBe(before.vouchersRejected + 1);
    expect(BigInt(after['volume'] as string) - BigInt(before.volume)).toBe(5000n);
    expect(after['channelsOpen']).toBeGreaterThanOrEqual(1);
    expect(after['exactEquivalent']).toEqual({
      txCount: after['vouchersAccepted'],
      seconds: (after['vouchersAccepted'] as number) * 1,
    });
    expect(typeof after['medianVerifyLatencyMs']).toBe('number');
  });

  it('POST /v1/report: verified against the ledger, reporter must be the source, idempotent', async () => {
    const payer = randomKeypair();
    const payee = randomKeypair();
    await h.ledger.faucet(payer.address);
    const paid = await h.ledger.submit(payer, 'transfer', { to: payee.address, amount: '1234' });
    const passphrase = (await h.ledger.info()).passphrase;
    // Signed by the source, as the sdk's reportTransaction does.
    const report = (body: ReportBody, by: Keypair = payer) =>
      fetch(`${h.url}/v1/report`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signReport(by, passphrase, body)),
      });
    const first = await report({ account: payer.address, tx: paid.hash, kind: 'payment' });
    expect(first.status).toBe(200);
    const body = (await first.json()) as {
      event: { id: number; type: string; data: Record<string, unknown> };
      repeated: boolean;
    };
    expect(body).toMatchObject({
      repeated: false,
      event: {
        type: 'payment.exact',
        data: { payer: payer.address, payee: payee.address, amount: '1234', tx: paid.hash },
      },
    });
    const again = (await (
      await report({ account: payer.address, tx: paid.hash, kind: 'payment' })
    ).json()) as typeof body;
    expect(again).toEqual({ ...body, repeated: true });
    expect(
      (await h.f.store.events({ types: ['payment.exact'], limit: 10 })).filter((e) => e.data['tx'] === paid.hash),
    ).toHaveLength(1);
    expect((await report({ account: payee.address, tx: paid.hash, kind: 'payment' }, payee)).status).toBe(403);
    expect((await report({ account: payer.address, tx: 'ab'.repeat(32), kind: 'payment' })).status).toBe(422);
    expect((await report({ account: payer.address, tx: paid.hash })).status).toBe(200); // already published: the same event
    const failed = await h.ledger
      .submit(payer, 'transfer', { to: payee.address, amount: '999999999999999999' })
      .catch((e: unknown) => e as { tx?: string });
    const failedHash = (failed as { tx?: string }).tx!;
    const rejected = (await (await report({ account: payer.address, tx: failedHash })).json()) as typeof body;
    expect(rejected.event).toMatchObject({
      type: 'chain.rejected',
      data: { account: payer.address, code: 27, codeName: 'INVALID_ARGUMENT', tx: failedHash },
    });
    expect((await report({ account: payer.address, tx: 'xyz' })).status).toBe(400);
  });

  it('POST /v1/report: a stranger cannot report someone else’s transaction, with or without words of its own', async () => {
    const victim = randomKeypair();
    const stranger = randomKeypair();
    await h.ledger.faucet(victim.address);
    const failed = (await h.ledger
      .submit(victim, 'transfer', { to: stranger.address, amount: '999999999999999999' })
      .catch((e: unknown) => e)) as { tx: string };
    const passphrase = (await h.ledger.info()).passphrase;
    const post = (body: unknown) =>
      fetch(`${h.url}/v1/report`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const claim = {
      account: victim.address,
      tx: failed.tx,
      details: { reason: 'the victim was hacked, see evil.example' },
    };
    // Unsigned: malformed. Signed by the stranger: refused. Nothing is published either way.
    expect((await post(claim)).status).toBe(400);
    const forged = await post(signReport(stranger, passphrase, claim));
    expect(forged.status).toBe(403);
    expect(await forged.json()).toMatchObject({ error: 'FORBIDDEN', message: expect.stringMatching(/not signed by/) });
    expect(
      (await h.f.store.events({ types: ['chain.rejected'], limit: 200 })).filter((e) => e.data['tx'] === failed.tx),
    ).toEqual([]);
    // The victim's own report is the first, with its own words.
    const own = (await (
      await post(signReport(victim, passphrase, { account: victim.address, tx: failed.tx, details: { note: 'mine' } }))
    ).json()) as { repeated: boolean; event: { data: Record<string, unknown> } };
    expect(own).toMatchObject({ repeated: false, event: { data: { details: { note: 'mine' } } } });
    // A signature over other words does not carry them in.
    const tampered = {
      ...signReport(victim, passphrase, { account: victim.address, tx: failed.tx }),
      details: { note: 'not signed' },
    };
    expect((await post(tampered)).status).toBe(403);
  });
});
