// Two facilitator instances on one PostgreSQL database and one standalone ledger,
// behaving like one: a voucher is accepted once whichever instance sees it, an SSE client on one
// instance sees what the other accepted (same ids, same order), and a stream wait on one instance
// wakes when its voucher lands on the other.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { randomKeypair } from '@svc/core';
import { LocalLedgerClient } from '@svc/sdk';
import { openChannel } from '../helpers/open-channel.js';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import { startChild } from '../helpers/process.js';
import { until } from '../helpers/until.js';
import type { Child } from '../helpers/process.js';
import type { PgDatabase } from '../helpers/pg.js';

const enabled = await pgEnabled();

describe.runIf(enabled)('two instances on one PostgreSQL and one ledger', () => {
  let db: PgDatabase;
  let ledger: LedgerServer;
  let ledgerDir: string;
  let a: Harness;
  let b: Harness;
  const payTo = randomKeypair().address;
  const terms = (overrides: Parameters<Harness['requirements']>[0] = {}) => a.requirements({ payTo, ...overrides });

  beforeAll(async () => {
    db = await createPgDatabase();
    ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-ledger-'));
    ledger = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    // One key for the cluster: receipts verify against one signer, attest tokens work on any instance.
    const env = {
      DATABASE_URL: db.url,
      LEDGER_URL: ledger.url,
      RATE_LIMIT_STORE: 'postgres',
      IP_RATE_LIMIT_PER_MINUTE: '0',
      SSE_MAX_PER_IP: '3',
      FACILITATOR_SECRET: randomBytes(32).toString('hex'),
    };
    a = await startHarness(env);
    b = await startHarness(env);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await ledger?.close();
    await db?.drop();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('accepts exactly one of 50 concurrent copies of one voucher spread over both instances', async () => {
    const buyer = await a.buyer({ payee: payTo });
    const first = await a.verify(buyer.signer.sign(5000n), terms());
    expect(first.body).toMatchObject({ isValid: true });
    expect((await b.verify(buyer.signer.sign(5000n), terms())).body['invalidReason']).toBe('VOUCHER_NOT_INCREASING'); // B knows the channel too
    const copy = buyer.signer.sign(10_000n);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_v, i) => (i % 2 === 0 ? a : b).verify(copy, terms())),
    );
    expect(answers.map((r) => r.status).filter((s) => s >= 500)).toEqual([]);
    const accepted = answers.filter((r) => r.body['isValid'] === true);
    expect(accepted).toHaveLength(1);
    expect(new Set(answers.filter((r) => r.body['isValid'] === false).map((r) => r.body['invalidReason']))).toEqual(
      new Set(['VOUCHER_NOT_INCREASING']),
    );
    const views = await Promise.all(
      [a, b].map(
        async (h) => (await fetch(`${h.url}/channels/${buyer.channelId}`)).json() as Promise<Record<string, unknown>>,
      ),
    );
    expect(views.map((v) => v['lastAccepted'])).toEqual(['10000', '10000']);
  });

  it('an event stream on one instance carries what the other accepted, with the same ids in the same order', async () => {
    const buyer = await a.buyer({ payee: payTo });
    const controller = new AbortController();
    const res = await fetch(`${a.url}/events?channelId=${buyer.channelId}`, { signal: controller.signal });
    const seen: { id: number; type: string }[] = [];
    const reader = res.body!.getReader();
    const reading = (async () => {
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += Buffer.from(value).toString();
        for (let i = text.indexOf('\n\n'); i >= 0; i = text.indexOf('\n\n')) {
          const frame = text.slice(0, i);
          text = text.slice(i + 2);
          const id = /^id: (\d+)$/m.exec(frame)?.[1];
          const type = /^event: (.+)$/m.exec(frame)?.[1];
          if (id && type) seen.push({ id: Number(id), type });
        }
      }
    })().catch(() => undefined);
    for (let i = 1; i <= 5; i++)
      expect((await b.verify(buyer.signer.sign(5000n * BigInt(i)), terms())).body['isValid']).toBe(true);
    const deadline = Date.now() + 5000;
    while (seen.filter((e) => e.type === 'voucher.accepted').length < 5 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await reading;
    const stored = await b.f.store.events({ channelId: buyer.channelId, order: 'asc', limit: 100 });
    expect(seen.map((e) => e.id)).toEqual(stored.map((e) => e.id));
    expect(seen.filter((e) => e.type === 'voucher.accepted')).toHaveLength(5);
  });

  it('counts open event streams across instances: the cap per address holds for the cluster', async () => {
    const open = async (h: Harness) => {
      const controller = new AbortController();
      const res = await fetch(`${h.url}/events?account=${payTo}`, { signal: controller.signal });
      return { res, close: () => controller.abort() };
    };
    const onA = [await open(a), await open(a)];
    expect(onA.map((s) => s.res.status)).toEqual([200, 200]);
    await new Promise((r) => setTimeout(r, 1500)); // one refresh of the shared counts
    const third = await open(b);
    expect(third.res.status).toBe(200);
    const fourth = await open(b);
    expect(fourth.res.status).toBe(429);
    expect(fourth.res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(await fourth.res.json()).toMatchObject({ error: 'RATE_LIMITED' });
    for (const s of [...onA, third]) s.close();
    await new Promise((r) => setTimeout(r, 1500));
    const again = await open(b);
    expect(again.res.status).toBe(200);
    again.close();
  });

  it('a claim made through the instance that is not the leader is counted once, though the leader’s watcher sees it too', async () => {
    const [leader, other] = a.f.leadership.isLeader ? [a, b] : [b, a];
    expect(other.f.leadership.isLeader).toBe(false);
    const buyer = await a.buyer({ payee: payTo });
    for (let i = 1; i <= 4; i++)
      expect((await other.verify(buyer.signer.sign(5000n * BigInt(i)), terms())).body['isValid']).toBe(true);
    const claim = await post(other, `/channels/${buyer.channelId}/claim`, {});
    expect(claim.status).toBe(200);
    // The leader's watcher reads the ledger's channel.claimed event for the same transaction.
    const deadline = Date.now() + 5000;
    while ((await leader.f.store.getChannel(buyer.channelId))?.claimed !== 20_000n && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    await leader.f.watcher.tick();
    const claimed = await leader.f.store.events({
      channelId: buyer.channelId,
      types: ['channel.claimed'],
      limit: 10,
    });
    expect(claimed).toHaveLength(1);
    const channel = (await (await fetch(`${leader.url}/channels/${buyer.channelId}`)).json()) as Record<
      string,
      unknown
    >;
    expect(channel).toMatchObject({ claimed: '20000', lastAccepted: '20000' });
    // The manual-claim cooldown of the channel holds on the other instance too.
    expect((await leader.verify(buyer.signer.sign(25_000n), terms())).body['isValid']).toBe(true);
    const again = await fetch(`${leader.url}/channels/${buyer.channelId}/claim`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(20);
  });

  it('a stream opened through one instance keeps streaming when its vouchers are posted to the other', async () => {
    const buyer = await a.buyer({ payee: payTo, deposit: 1_000_000n });
    const perSecond = terms({ amount: '1000', unit: 'second', extra: { sliceSeconds: 10, sliceAmount: '10000' } });
    const first = await a.verify(buyer.signer.sign(10_000n), perSecond);
    const receiptId = ((first.body['extra'] as Record<string, unknown>)['receipt'] as { receipt: { id: string } })
      .receipt.id;
    const opened = await post(
      a,
      '/streams',
      {
        channelId: buyer.channelId.toString(),
        payTo,
        resource: `${a.url}/ticker`,
        unit: 'second',
        sliceCost: '10000',
        initialCharge: '10000',
        receiptId,
      },
      payTo,
    );
    expect(opened.status).toBe(200);
    const streamId = String(opened.body['streamId']);
    for (let slice = 2; slice <= 4; slice++) {
      const started = Date.now();
      const waiting = post(a, `/streams/${streamId}/wait`, { timeoutMs: 10_000 }, payTo);
      await new Promise((r) => setTimeout(r, 200));
      const voucher = buyer.signer.sign(10_000n * BigInt(slice));
      const sent = await post(b, `/channels/${buyer.channelId}/voucher`, {
        streamId,
        cumulative: voucher.cumulative,
        signature: voucher.signature,
      });
      expect(sent.status).toBe(200);
      const woke = await waiting;
      expect(woke.body).toMatchObject({ kind: 'paid', requiredCumulative: String(10_000 * (slice + 1)) });
      expect(Date.now() - started).toBeLessThan(3000); // woken by the other instance, not by the 10 s timeout
    }
    // Ended through the other instance, with the token the first one minted.
    const ended = await fetch(`${b.url}/streams/${streamId}`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${a.sellerToken(payTo)}` },
      body: JSON.stringify({ reason: 'done', units: 40 }),
    });
    expect(await ended.json()).toMatchObject({ charged: '40000', vouchers: 4 });
  });
});

describe.runIf(enabled)('the instance running the claim scheduler is killed', () => {
  let db: PgDatabase;
  let ledger: LedgerServer;
  const dirs: string[] = [];
  const children: Child[] = [];

  afterAll(async () => {
    for (const c of children) await c.kill('SIGKILL').catch(() => undefined);
    await ledger?.close();
    await db?.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('kill -9 of the leader: the other instance claims everything acknowledged, well within one claim interval, once', async () => {
    db = await createPgDatabase();
    const dir = () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-'));
      dirs.push(d);
      return d;
    };
    ledger = await startLedgerServer({ port: 0, dataDir: dir(), ledgerSeconds: 1 });
    // A 30 s interval: the first pass of the leader's scheduler would come only after the kill.
    const env = {
      DATABASE_URL: db.url,
      LEDGER_URL: ledger.url,
      FACILITATOR_SECRET: randomBytes(32).toString('hex'),
      CLAIM_INTERVAL_SECONDS: '30',
      CLAIM_THRESHOLD: '1',
      DEMO: 'off',
      IP_RATE_LIMIT_PER_MINUTE: '0',
    };
    const leader = await startChild({ ...env, DATA_DIR: dir() });
    children.push(leader);
    await until(async () => (await json(`${leader.url}/health`))['leader'] === true, 10_000);
    const follower = await startChild({ ...env, DATA_DIR: dir() });
    children.push(follower);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await json(`${follower.url}/health`))['leader']).toBe(false);

    const client = new LocalLedgerClient(ledger.url);
    const info = await client.info();
    const payee = randomKeypair().address;
    const { channelId, signer } = await openChannel(client, { payee, deposit: 5_000_000n });
    const terms = {
      scheme: 'channel',
      network: info.network,
      asset: info.contracts.asset,
      payTo: payee,
      amount: '5000',
      unit: 'request',
      maxTimeoutSeconds: 60,
      extra: {
        channelContract: info.contracts.channel,
        minDeposit: '5000000',
        facilitator: 'http://127.0.0.1',
        areFeesSponsored: true,
      },
    };
    for (let i = 1; i <= 10; i++) {
      const target = i % 2 === 0 ? leader : follower;
      const res = await fetch(`${target.url}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: { x402Version: 2, accepted: terms, payload: signer.sign(5000n * BigInt(i)) },
          paymentRequirements: terms,
        }),
      });
      const answer = (await res.json()) as { isValid?: boolean };
      expect(answer.isValid, JSON.stringify(answer)).toBe(true);
    }
    expect((await client.channel(channelId))?.claimed).toBe('0');

    await leader.kill('SIGKILL');
    const killedAt = Date.now();
    await until(async () => (await client.channel(channelId))?.claimed === '50000', 10_000);
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThan(30_000);
    const health = await json(`${follower.url}/health`);
    expect(health, JSON.stringify(health)).toMatchObject({ leader: true });
    // Exactly one claim transaction, and the follower's books agree with the ledger.
    const claims = (await json(`${follower.url}/events?channelId=${channelId}`, true)).filter(
      (e) => e === 'channel.claimed',
    );
    expect(claims).toHaveLength(1);
    await until(async () => (await json(`${follower.url}/channels/${channelId}`))['claimed'] === '50000', 5_000);
    const revenue = (await json(`${follower.url}/sellers/${payee}/revenue`))['totals'] as Record<string, unknown>;
    expect(revenue).toMatchObject({ earned: '50000', settled: '50000', receivable: '0' });
    console.log(
      `leader killed: the follower claimed everything ${tookMs} ms later (claim interval 30 s, leader poll 1 s)`,
    );
  });
});

/** A JSON answer; with `eventTypes`, the event types of an SSE backlog (read for 500 ms). */
async function json(url: string): Promise<Record<string, unknown>>;
async function json(url: string, eventTypes: true): Promise<string[]>;
async function json(url: string, eventTypes = false): Promise<Record<string, unknown> | string[]> {
  if (!eventTypes) return (await (await fetch(url)).json()) as Record<string, unknown>;
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  const reader = res.body!.getReader();
  let text = '';
  const timer = setTimeout(() => controller.abort(), 500);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
  } catch {
    // aborted after 500 ms: the backlog has arrived
  } finally {
    clearTimeout(timer);
  }
  return [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!);
}

/** As the seller's middleware would (its token: every instance shares the facilitator's secret). */
async function post(
  h: Harness,
  url: string,
  body: unknown,
  payTo?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const auth: Record<string, string> = payTo ? { authorization: `Bearer ${h.sellerToken(payTo)}` } : {};
  const res = await fetch(`${h.url}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
