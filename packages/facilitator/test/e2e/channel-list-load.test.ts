// Thousands of one-stroop channels (one faucet grant opens them in seconds) make
// GET /channels a multi-megabyte answer; clients looping on it, each within the per-address limit,
// must not starve the hot path. The looping clients run on a worker thread, as they would on other
// machines, so the only event loop under test is the facilitator's.
import http from 'node:http';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { REUSE_MS } from '../../src/http/channel-listing.js';
import type { ChannelRecord } from '../../src/store/port.js';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const SPAM = 4000;
const LOOPERS = 8;

/** 8 clients, each from its own forwarded address, asking for `path` again and again until told to stop. */
const LOOPERS_JS = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true });
let stop = false;
const stats = { answers: 0, limited: 0, bytes: [] };
parentPort.on('message', () => { stop = true; });
function once(i) {
  return new Promise((resolve) => {
    const req = http.get(workerData.url, { agent, headers: { 'x-forwarded-for': '198.51.100.' + (i + 1) } }, (res) => {
      let bytes = 0;
      res.on('data', (c) => { bytes += c.length; });
      res.on('end', () => {
        if (res.statusCode === 200) { stats.answers++; stats.bytes.push(bytes); } else stats.limited++;
        if (stats.answers === workerData.loopers) parentPort.postMessage({ started: true });
        setTimeout(resolve, res.statusCode === 200 ? 0 : 100);
      });
    });
    req.on('error', () => setTimeout(resolve, 100));
  });
}
Promise.all(Array.from({ length: workerData.loopers }, async (_v, i) => { while (!stop) await once(i); }))
  .then(() => { agent.destroy(); parentPort.postMessage({ done: stats }); });
`;

interface LoopStats {
  answers: number;
  limited: number;
  bytes: number[];
}

/** The longest the event loop was held while `during` ran, in ms: the widest gap between ticks of a 1 ms timer. */
async function held(during: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let widest = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const now = performance.now();
    widest = Math.max(widest, now - last);
    last = now;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  await during();
  clearTimeout(timer);
  return Math.max(widest, performance.now() - last);
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

describe('GET /channels with thousands of channels', () => {
  let h: Harness;
  let b: Buyer;
  let spammer: string;
  const agent = new http.Agent({ keepAlive: true });
  let cumulative = 0n;

  /**
   * One POST /verify from forwarded addresses of its own (taken in turn: a fast run makes more
   * than the general limit of 3,000 a minute allows one address); its latency in ms.
   */
  let sent = 0;
  const verifyOnce = (): Promise<number> => {
    cumulative += 5000n;
    const from = `203.0.113.${100 + (sent++ % 100)}`;
    const reqs = h.requirements({ payTo: b.payee });
    const body = JSON.stringify({
      x402Version: 2,
      paymentPayload: {
        x402Version: 2,
        accepted: reqs,
        payload: b.signer.sign(cumulative),
        resource: { url: `${h.url}/r` },
      },
      paymentRequirements: reqs,
      method: 'GET',
    });
    const t = performance.now();
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${h.url}/verify`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-forwarded-for': from } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () =>
            text.includes('"isValid":true')
              ? resolve(performance.now() - t)
              : reject(new Error(`verify answered ${res.statusCode}: ${text}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
  const verifyFor = async (ms: number): Promise<number[]> => {
    const out: number[] = [];
    for (const end = performance.now() + ms; performance.now() < end || out.length < 10;) out.push(await verifyOnce());
    return out;
  };

  beforeAll(async () => {
    h = await startHarness({ TRUST_PROXY: '127.0.0.1', CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '1000000' });
    spammer = randomKeypair().address;
    const { asset, channel: channelContract } = h.f.ledgerInfo.contracts;
    const t0 = Date.now() - SPAM * 4;
    const records: ChannelRecord[] = Array.from({ length: SPAM }, (_v, i) => {
      const at = new Date(t0 + i * 4).toISOString(); // 4,000 channels in 16 s, like the faucet grant
      return {
        id: 1_000_000n + BigInt(i),
        network: h.f.ledgerInfo.network,
        channelContract,
        payer: spammer,
        payee: randomKeypair().address,
        asset,
        voucherKey: 'ab'.repeat(32),
        deposit: 1n,
        claimed: 0n,
        lastAccepted: 0n,
        lastSignature: null,
        charged: 0n,
        receiverAuthorizer: null,
        refundNonce: 0,
        reservation: null,
        expiryLedger: 1_000_000,
        status: 'open',
        vouchers: 0,
        vouchersClaimed: 0,
        openedAt: at,
        lastVoucherAt: null,
        closedAt: null,
        refunded: null,
        createdAt: at,
      };
    });
    for (let i = 0; i < SPAM; i += 500)
      await h.f.store.write(records.slice(i, i + 500).map((channel) => ({ op: 'channel.insert' as const, channel })));
    b = await h.buyer({ deposit: 100_000_000_000n });
    await verifyFor(500); // warm
  });
  afterAll(async () => {
    agent.destroy();
    await h.close();
  });

  it('answers every channel, newest first, in the same shape as before', async () => {
    const res = await fetch(`${h.url}/channels`, { headers: { 'x-forwarded-for': '203.0.113.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { channels: { id: string; expiresInLedgers?: number }[] };
    const expected = (await h.f.store.listChannels()).map((r) => h.f.services.channelView(r));
    expect(body.channels).toHaveLength(SPAM + 1);
    // A ledger closes every second here: expiresInLedgers may have moved on by one or two since.
    for (const [i, c] of body.channels.entries())
      expect(expected[i]!.expiresInLedgers - c.expiresInLedgers!).toBeOneOf([0, -1, -2]);
    const timeless = (list: object[]) => list.map((c) => ({ ...c, expiresInLedgers: 0 }));
    expect(timeless(body.channels)).toEqual(timeless(expected));
    expect(body.channels[0]!.id).toBe(b.channelId.toString());
    const open = (await (
      await fetch(`${h.url}/channels?status=open&payee=${b.payee}`, { headers: { 'x-forwarded-for': '203.0.113.8' } })
    ).json()) as { channels: { id: string }[] };
    expect(open.channels.map((c) => c.id)).toEqual([b.channelId.toString()]);
    // The spammer's account lists its open channels the same way, as the record's last member.
    const account = (await (
      await fetch(`${h.url}/accounts/${spammer}`, { headers: { 'x-forwarded-for': '203.0.113.8' } })
    ).json()) as Record<string, unknown> & { channels: object[] };
    expect(Object.keys(account)).toEqual([
      'address',
      'kind',
      'policy',
      'spentToday',
      'day',
      'frozen',
      'balances',
      'channels',
    ]);
    expect(timeless(account.channels)).toEqual(timeless(expected.filter((c) => c.payer === spammer)));
  });

  it('counts a list of over 250 channels as a costly request; a short one is not', async () => {
    const from = { 'x-forwarded-for': '203.0.113.9' };
    for (let i = 0; i < 30; i++)
      expect(
        (await fetch(`${h.url}/channels?status=open`, { headers: from }).then(async (r) => (await r.arrayBuffer(), r)))
          .status,
      ).toBe(200);
    const refused = await fetch(`${h.url}/channels?status=open`, { headers: from });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ error: 'RATE_LIMITED', source: 'facilitator' });
    expect((await fetch(`${h.url}/accounts/${spammer}`, { headers: from })).status).toBe(429);
    const short = await fetch(`${h.url}/channels?payee=${b.payee}`, { headers: from });
    expect(short.status).toBe(200);
    expect(((await short.json()) as { channels: unknown[] }).channels).toHaveLength(1);
  });

  it('never holds the event loop for the whole list: a cold build yields between pages', async () => {
    const list = (i: number) =>
      new Promise<number>((resolve, reject) => {
        http
          .get(
            `${h.url}/channels?status=open`,
            { agent, headers: { 'x-forwarded-for': `203.0.113.${20 + i}` } },
            (res) => {
              let bytes = 0;
              res.on('data', (c: Buffer) => (bytes += c.length));
              res.on('end', () =>
                res.statusCode === 200 ? resolve(bytes) : reject(new Error(`GET /channels answered ${res.statusCode}`)),
              );
            },
          )
          .on('error', reject);
      });
    const blocks: number[] = [];
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, REUSE_MS + 100)); // cold: the last build is no longer served
      blocks.push(await held(() => list(i)));
    }
    console.log('event loop held by a cold GET /channels (ms):', blocks.map((b) => b.toFixed(1)).join(', '));
    // Before the pages it held it 69–258 ms per answer (read, views, JSON at once); now ~5–30 ms.
    // The least of four discounts a machine busy with other work.
    expect(Math.min(...blocks)).toBeLessThan(50);
  });

  it('reads the open channels in pages for the claim scheduler too', async () => {
    const blocks: number[] = [];
    for (let i = 0; i < 4; i++) blocks.push(await held(() => h.f.scheduler.tick()));
    console.log('event loop held by a claim scheduler pass (ms):', blocks.map((b) => b.toFixed(1)).join(', '));
    // Reading every open channel at once held it 69–95 ms.
    expect(Math.min(...blocks)).toBeLessThan(50);
  });

  it('keeps /verify fast while 8 clients loop on it', async () => {
    const baseline = await verifyFor(2000);
    const worker = new Worker(LOOPERS_JS, { eval: true, workerData: { url: `${h.url}/channels`, loopers: LOOPERS } });
    const done = new Promise<LoopStats>((resolve, reject) => {
      worker.on('message', (m: { done?: LoopStats }) => m.done && resolve(m.done));
      worker.on('error', reject);
    });
    // Measured once every looper has had a whole answer, so the load is on.
    await new Promise<void>((resolve) => worker.on('message', (m: { started?: boolean }) => m.started && resolve()));
    const loaded = await verifyFor(5000);
    worker.postMessage('stop');
    const stats = await done;
    await worker.terminate();
    const figures = {
      baseline: { n: baseline.length, p50: pct(baseline, 0.5), p99: pct(baseline, 0.99) },
      loaded: { n: loaded.length, p50: pct(loaded, 0.5), p99: pct(loaded, 0.99) },
      lists: stats.answers,
      limited: stats.limited,
    };
    console.log('GET /channels ×8 loops:', JSON.stringify(figures));
    expect(stats.answers).toBeGreaterThanOrEqual(LOOPERS * 2);
    expect(Math.min(...stats.bytes)).toBeGreaterThan(SPAM * 500); // whole answers, megabytes each
    // Before: p50 3.2–3.7 s (every answer held the event loop ~100 ms). The bound leaves room for
    // a loaded 2-core machine.
    expect(figures.loaded.p50).toBeLessThan(Math.max(4 * figures.baseline.p50, figures.baseline.p50 + 40));
    expect(figures.loaded.p99).toBeLessThan(Math.max(4 * figures.baseline.p99, 250));
  }, 120_000);
});
