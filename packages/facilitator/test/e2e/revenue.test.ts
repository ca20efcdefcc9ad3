// Seller revenue end to end: a scripted day of traffic through the real facilitator (several
// buyers, two sellers, several resources, a threshold claim, manual claims, a close by the payee,
// vouchers left unclaimed), then GET /sellers/:payTo/revenue and /settlements.csv, checked against
// exact expectations and against each other: earned = settled + receivable to the base unit, the
// CSV sums to settled, the series and by-resource sum to the totals, aging covers the receivable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDisplayAmount, randomKeypair } from '@svc/core';
import type { Keypair, RevenueReport } from '@svc/core';
import { openChannel } from '../helpers/open-channel.js';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const D1 = '2025-03-09';
const D2 = '2025-03-10';
const clock = {
  t: Date.parse(`${D1}T20:00:00.000Z`),
  now() {
    return this.t;
  },
};
const at = (iso: string) => {
  clock.t = Date.parse(iso);
};
const sum = (xs: readonly string[]) => xs.reduce((s, x) => s + BigInt(x), 0n);

describe('seller revenue after a scripted day', () => {
  let h: Harness;
  const sellerA = randomKeypair();
  const sellerB = randomKeypair();
  const parties: Record<'b1' | 'b2' | 'b3' | 'b4' | 'aToB', Buyer> = {} as never;

  /** A channel from `payer` to `payee`, like h.buyer() but for a payer we hold (a seller who also buys). */
  async function channelOf(payer: Keypair, payee: string): Promise<Buyer> {
    const { voucherKey, signer, channelId } = await openChannel(h.ledger, { payer, payee, deposit: 5_000_000n });
    return { keys: payer, voucherKey, signer, channelId, payee };
  }

  /** POST /verify for `amount` more on the channel, paying for `resource` (a path on the facilitator's host). */
  async function pay(b: Buyer, amount: bigint, resource: string): Promise<void> {
    const reqs = h.requirements({ payTo: b.payee, amount: amount.toString() });
    const payload = b.signer.next(amount);
    const res = await fetch(`${h.url}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: reqs, payload, resource: { url: `${h.url}${resource}` } },
        paymentRequirements: reqs,
        method: 'GET',
      }),
    });
    expect(await res.json()).toMatchObject({ isValid: true });
    b.signer.confirm(BigInt(payload.cumulative));
  }

  async function claim(b: Buyer): Promise<{ amount: string; vouchersCovered: number; tx: string }> {
    const res = await fetch(`${h.url}/channels/${b.channelId}/claim`, { method: 'POST' });
    expect(res.status).toBe(200);
    return (await res.json()) as { amount: string; vouchersCovered: number; tx: string };
  }

  const revenue = async (payTo: string, query = 'bucket=day&days=2') => {
    const res = await fetch(`${h.url}/sellers/${payTo}/revenue?${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as RevenueReport;
  };

  const csv = async (payTo: string) => {
    const res = await fetch(`${h.url}/sellers/${payTo}/settlements.csv`);
    expect(res.status).toBe(200);
    return { res, text: await res.text() };
  };

  beforeAll(async () => {
    // The scheduler only runs when the test ticks it; claims can repeat at once.
    h = await startHarness(
      { CLAIM_THRESHOLD: '60000', CLAIM_INTERVAL_SECONDS: '86400', MANUAL_CLAIM_COOLDOWN_SECONDS: '0', DEMO: 'off' },
      { clock },
    );
    parties.b1 = await h.buyer({ payee: sellerA.address });
    parties.b2 = await h.buyer({ payee: sellerA.address });
    parties.b3 = await h.buyer({ payee: sellerB.address });
    parties.b4 = await h.buyer({ payee: sellerB.address });
    parties.aToB = await channelOf(sellerA, sellerB.address); // seller A buys from seller B
    const { b1, b2, b3, b4, aToB } = parties;

    at(`${D1}T20:05:00.000Z`);
    for (let i = 0; i < 3; i++) await pay(b1, 5000n, '/book');
    for (let i = 0; i < 2; i++) await pay(b2, 2000n, '/search');
    await pay(b3, 10_000n, '/chat');
    at(`${D1}T22:30:00.000Z`);
    for (let i = 0; i < 2; i++) await pay(b1, 5000n, '/book');
    await pay(b1, 7000n, '/api/quote');
    at(`${D1}T23:59:59.999Z`);
    await pay(b4, 3000n, '/chat');
    at(`${D2}T00:00:00.000Z`);
    await pay(b3, 50_000n, '/stream'); // b3 reaches the 60000 threshold
    await h.f.scheduler.tick();
    at(`${D2}T03:00:00.000Z`);
    expect(await claim(b1)).toMatchObject({ amount: '32000', vouchersCovered: 6 });
    at(`${D2}T04:00:00.000Z`);
    await pay(b2, 2000n, '/search');
    expect(await claim(b2)).toMatchObject({ amount: '6000', vouchersCovered: 3 });
    await h.ledger.closeChannel({ signer: sellerA, channelId: b2.channelId });
    await h.f.watcher.tick();
    at(`${D2}T09:00:00.000Z`);
    await pay(b1, 5000n, '/book');
    await pay(b1, 1000n, '/search');
    at(`${D2}T12:00:00.000Z`);
    await pay(b4, 4000n, '/chat');
    await h.f.scheduler.tick(); // nothing reaches the threshold: no claim
    at(`${D2}T18:10:00.000Z`);
    await pay(aToB, 3000n, '/chat');
    at(`${D2}T18:30:00.000Z`);
  });
  afterAll(() => h.close());

  it('totals: earned = settled + receivable + lost, per seller, to the base unit (b2 closed fully claimed: nothing lost)', async () => {
    const a = await revenue(sellerA.address);
    const b = await revenue(sellerB.address);
    // Seller A's own purchase from B (aToB) is not A's revenue.
    // A's two settlements covered 9 of its 11 payments (the other 2 are the receivable 6000).
    expect(a.totals).toEqual({
      earned: '44000',
      restored: '0',
      settled: '38000',
      receivable: '6000',
      lost: '0',
      payments: 11,
      settlements: 2,
      paymentsPerSettlement: 4.5,
      buyers: 2,
    });
    // B's one settlement covered 2 of its 5 payments: 2 per settlement, not 5.
    expect(b.totals).toEqual({
      earned: '70000',
      restored: '0',
      settled: '60000',
      receivable: '10000',
      lost: '0',
      payments: 5,
      settlements: 1,
      paymentsPerSettlement: 2,
      buyers: 3,
    });
    for (const r of [a, b])
      expect(BigInt(r.totals.earned)).toBe(
        BigInt(r.totals.settled) + BigInt(r.totals.receivable) + BigInt(r.totals.lost),
      );
    expect((await h.ledger.channel(parties.b2.channelId))?.open).toBe(false);
  });

  it('the time series sums to the totals, in UTC day and hour buckets with empty ones', async () => {
    for (const payTo of [sellerA.address, sellerB.address]) {
      for (const query of ['bucket=day&days=2', 'bucket=hour&days=2', 'bucket=day&days=365']) {
        const r = await revenue(payTo, query);
        expect(sum(r.series.map((s) => s.earned))).toBe(BigInt(r.totals.earned));
        expect(sum(r.series.map((s) => s.settled))).toBe(BigInt(r.totals.settled));
        expect(r.series.reduce((n, s) => n + s.payments, 0)).toBe(r.totals.payments);
        expect(r.series.reduce((n, s) => n + s.settlements, 0)).toBe(r.totals.settlements);
        expect({ earned: r.window.earned, settled: r.window.settled }).toEqual({
          earned: r.totals.earned,
          settled: r.totals.settled,
        });
      }
    }
    const day = await revenue(sellerB.address);
    expect(day.window).toMatchObject({
      bucket: 'day',
      days: 2,
      start: `${D1}T00:00:00.000Z`,
      end: '2025-03-11T00:00:00.000Z',
    });
    // 23:59:59.999 is the first day; 00:00:00.000 the second.
    expect(day.series).toEqual([
      { start: `${D1}T00:00:00.000Z`, earned: '13000', settled: '0', payments: 2, settlements: 0 },
      { start: `${D2}T00:00:00.000Z`, earned: '57000', settled: '60000', payments: 3, settlements: 1 },
    ]);
    const hourly = await revenue(sellerA.address, 'bucket=hour&days=2');
    expect(hourly.series).toHaveLength(48);
    expect(hourly.series[0]!.start).toBe('2025-03-08T19:00:00.000Z'); // 48 whole hours ending with the current one
    expect(hourly.series.find((s) => s.start === `${D1}T20:00:00.000Z`)).toMatchObject({
      earned: '19000',
      payments: 5,
    });
    expect(hourly.series.find((s) => s.start === `${D1}T21:00:00.000Z`)).toEqual({
      start: `${D1}T21:00:00.000Z`,
      earned: '0',
      settled: '0',
      payments: 0,
      settlements: 0,
    });
    // 24 hourly buckets still reach back to 19:00 on the first day; one daily bucket does not.
    expect((await revenue(sellerA.address, 'bucket=hour&days=1')).window).toMatchObject({
      start: `${D1}T19:00:00.000Z`,
      end: `${D2}T19:00:00.000Z`,
      earned: '44000',
    });
    const today = await revenue(sellerA.address, 'days=1');
    expect(today.window).toMatchObject({
      start: `${D2}T00:00:00.000Z`,
      earned: '8000',
      settled: '38000',
      payments: 3,
      settlements: 2,
    });
    expect(today.totals.earned).toBe('44000'); // totals stay all-time
  });

  it('revenue by resource sums to earned', async () => {
    const a = await revenue(sellerA.address);
    expect(a.byResource).toEqual([
      { resource: `${h.url}/book`, earned: '30000', payments: 6 },
      { resource: `${h.url}/api/quote`, earned: '7000', payments: 1 },
      { resource: `${h.url}/search`, earned: '7000', payments: 4 },
    ]);
    expect(a.otherResources).toEqual({ resources: 0, earned: '0', payments: 0 });
    for (const payTo of [sellerA.address, sellerB.address]) {
      const r = await revenue(payTo);
      expect(sum(r.byResource.map((x) => x.earned))).toBe(BigInt(r.totals.earned));
    }
  });

  it('receivables aging covers exactly the receivable, per channel, matching the channel records', async () => {
    const { b1, b4, aToB } = parties;
    const a = await revenue(sellerA.address);
    const b = await revenue(sellerB.address);
    expect(a.receivables.channels).toEqual([
      {
        channelId: b1.channelId.toString(),
        payer: b1.keys.address,
        status: 'open',
        amount: '6000',
        oldestUnclaimedAt: `${D2}T09:00:00.000Z`,
        ageSeconds: 34_200,
        bucket: '1h-24h',
      },
    ]);
    expect(b.receivables.channels).toEqual([
      {
        channelId: b4.channelId.toString(),
        payer: b4.keys.address,
        status: 'open',
        amount: '7000',
        oldestUnclaimedAt: `${D1}T23:59:59.999Z`,
        ageSeconds: 66_600,
        bucket: '1h-24h',
      },
      {
        channelId: aToB.channelId.toString(),
        payer: sellerA.address,
        status: 'open',
        amount: '3000',
        oldestUnclaimedAt: `${D2}T18:10:00.000Z`,
        ageSeconds: 1200,
        bucket: '<1h',
      },
    ]);
    expect(b.receivables.buckets).toEqual([
      { bucket: '<1h', amount: '3000', channels: 1 },
      { bucket: '1h-24h', amount: '7000', channels: 1 },
      { bucket: '1d-7d', amount: '0', channels: 0 },
      { bucket: '>7d', amount: '0', channels: 0 },
    ]);
    for (const r of [a, b]) {
      expect(r.receivables.total).toBe(r.totals.receivable);
      expect(sum(r.receivables.channels.map((c) => c.amount))).toBe(BigInt(r.totals.receivable));
      for (const c of r.receivables.channels) {
        const record = await h.f.store.getChannel(BigInt(c.channelId));
        expect(BigInt(c.amount)).toBe(record!.lastAccepted - record!.claimed);
      }
    }
  });

  it('lists the settlements of the window, newest first, with payer, coverage and tx', async () => {
    const a = await revenue(sellerA.address);
    expect(a.settlements.map(({ tx: _tx, ...s }) => s)).toEqual([
      {
        settledAt: `${D2}T04:00:00.000Z`,
        channelId: parties.b2.channelId.toString(),
        payer: parties.b2.keys.address,
        amount: '6000',
        paymentsCovered: 3,
        explorer: '',
      },
      {
        settledAt: `${D2}T03:00:00.000Z`,
        channelId: parties.b1.channelId.toString(),
        payer: parties.b1.keys.address,
        amount: '32000',
        paymentsCovered: 6,
        explorer: '',
      },
    ]);
    expect(a.settlements.every((s) => /^[0-9a-f]{64}$/.test(s.tx))).toBe(true);
    expect(a.settlementsTruncated).toBe(false);
    expect((await revenue(sellerB.address)).settlements).toMatchObject([
      { settledAt: `${D2}T00:00:00.000Z`, amount: '60000', paymentsCovered: 2 },
    ]);
  });

  it('settlements.csv: RFC 4180 with the columns of docs/protocol.md#channels-and-records, summing to settled', async () => {
    for (const payTo of [sellerA.address, sellerB.address]) {
      const { res, text } = await csv(payTo);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="settlements-${payTo}.csv"`);
      expect(text.endsWith('\r\n')).toBe(true);
      const [header, ...rows] = text
        .slice(0, -2)
        .split('\r\n')
        .map((line) => line.split(','));
      expect(header).toEqual(['settled_at', 'tx', 'channel_id', 'payer', 'amount', 'payments_covered', 'explorer']);
      for (const row of rows) expect(row).toHaveLength(7);
      const settled = rows.reduce((s, row) => s + parseDisplayAmount(row[4]!), 0n);
      expect(settled).toBe(BigInt((await revenue(payTo)).totals.settled));
    }
    const { text } = await csv(sellerA.address);
    const rows = text.split('\r\n').slice(1, -1);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(
      new RegExp(
        `^${D2}T03:00:00\\.000Z,[0-9a-f]{64},${parties.b1.channelId},${parties.b1.keys.address},0\\.0032000,6,$`,
      ),
    );
    expect(rows[1]).toMatch(
      new RegExp(
        `^${D2}T04:00:00\\.000Z,[0-9a-f]{64},${parties.b2.channelId},${parties.b2.keys.address},0\\.0006000,3,$`,
      ),
    );
  });

  it('ages receivables as time passes', async () => {
    const now = clock.t;
    try {
      at('2025-03-13T18:30:00.000Z');
      const a = await revenue(sellerA.address, 'days=7');
      expect(a.receivables.channels.map((c) => c.bucket)).toEqual(['1d-7d']);
      at('2025-03-20T18:30:00.000Z');
      const b = await revenue(sellerB.address, 'days=7');
      expect(b.receivables.buckets.map((x) => [x.bucket, x.amount])).toEqual([
        ['<1h', '0'],
        ['1h-24h', '0'],
        ['1d-7d', '0'],
        ['>7d', '10000'],
      ]);
      expect(b.totals.receivable).toBe('10000');
      expect(b.window.earned).toBe('0'); // the traffic is older than the window
    } finally {
      clock.t = now;
    }
  });

  it('answers zeros for a seller with no events, with the default window of 30 days', async () => {
    const r = await revenue(randomKeypair().address, '');
    expect(r.totals).toEqual({
      earned: '0',
      restored: '0',
      settled: '0',
      receivable: '0',
      lost: '0',
      payments: 0,
      settlements: 0,
      paymentsPerSettlement: null,
      buyers: 0,
    });
    expect(r.window).toMatchObject({
      bucket: 'day',
      days: 30,
      start: '2025-02-09T00:00:00.000Z',
      end: '2025-03-11T00:00:00.000Z',
    });
    expect(r.series).toHaveLength(30);
    expect(r.series.every((s) => s.earned === '0' && s.payments === 0)).toBe(true);
    expect(r.receivables).toEqual({ total: '0', buckets: expect.any(Array), channels: [] });
    expect(r.settlements).toEqual([]);
    expect((await revenue(randomKeypair().address, 'bucket=hour&days=365')).series).toHaveLength(8760);
    expect((await csv(randomKeypair().address)).text).toBe(
      'settled_at,tx,channel_id,payer,amount,payments_covered,explorer\r\n',
    );
  });

  it.each([
    ['bucket=week', 'Invalid query.bucket: bucket must be "hour" or "day".'],
    ['bucket=hour&bucket=day', 'Invalid query.bucket: bucket must be "hour" or "day".'],
    ['days=0', 'Invalid query.days: days must be a whole number from 1 to 365.'],
    ['days=366', 'Invalid query.days: days must be a whole number from 1 to 365.'],
    ['days=1.5', 'Invalid query.days: days must be a whole number from 1 to 365.'],
    ['days=abc', 'Invalid query.days: days must be a whole number from 1 to 365.'],
    ['days=', 'Invalid query.days: days must be a whole number from 1 to 365.'],
    ['days=1e2', 'Invalid query.days: days must be a whole number from 1 to 365.'],
    ['days=7&days=8', 'Invalid query.days: days must be a whole number from 1 to 365.'],
    ['day=7', 'Invalid query: unknown parameter day (the parameters are bucket and days).'],
  ])('400 for ?%s', async (query, message) => {
    const res = await fetch(`${h.url}/sellers/${sellerA.address}/revenue?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'BAD_REQUEST', source: 'facilitator', message });
  });

  it('400 for an invalid address, on both endpoints', async () => {
    for (const path of [
      '/sellers/nope/revenue',
      '/sellers/nope/settlements.csv',
      `/sellers/${sellerA.address.toLowerCase()}/revenue`,
    ]) {
      const res = await fetch(`${h.url}${path}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: 'BAD_REQUEST',
        message: 'Invalid path.payTo: a G… or C… address.',
      });
    }
  });
});
