// Dynamic charge over real HTTP: an Express seller on @svc/meter prices a request at 5000 (the
// ceiling) and charges what it used — 1200 — with req.payment.charge(); one request fails and is
// charged nothing. The buyer pays with batch-settlement vouchers (each ceiling the charged total
// plus the price). The seller earns 3600: the receipts, the events, the revenue report
// (earned = settled + receivable + lost) and the claim on the ledger all show charged amounts,
// never the ceilings.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SCHEME, decodeJsonHeader, encodeJsonHeader, randomKeypair } from '@svc/core';
import type { BatchRequirements, PaymentRequired } from '@svc/core';
import { svc } from '@svc/meter';
import type { PaidRequest } from '@svc/meter';
import { SseParser } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const PRICE = 5000n;

describe('dynamic charge: a seller charges what the request used', () => {
  let h: Harness;
  let server: http.Server;
  let url = '';
  const payee = randomKeypair().address;

  beforeAll(async () => {
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600', MANUAL_CLAIM_COOLDOWN_SECONDS: '0' });
    const client = svc({ facilitator: h.url, payTo: payee });
    const app = express();
    app.get('/summarize', client.meter({ price: PRICE, unit: 'request', description: 'At most 5000' }), (req, res) => {
      if (req.query['fail'] === '1') throw new Error('the model broke');
      (req as PaidRequest).payment!.charge(1200n);
      res.json({ summary: 'short' });
    });
    server = http.createServer(app);
    url = await new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
  });
  afterAll(async () => {
    await new Promise<void>((r) => server?.close(() => r()));
    await h?.close();
  });

  /** Pays `ceiling` on the terms of `${base}${query}`; sends it with `sent` (default: the same query). */
  async function pay(b: Buyer, query: string, ceiling: bigint, base = `${url}/summarize`, sent = query) {
    const unpaid = await fetch(`${base}${query}`);
    const decoded = decodeJsonHeader(unpaid.headers.get('payment-required')!);
    const terms = (decoded.ok ? decoded.value : null) as PaymentRequired;
    const accepted = terms.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
    const v = b.signer.sign(ceiling);
    const header = encodeJsonHeader({
      x402Version: 2,
      accepted,
      payload: {
        type: 'voucher',
        voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
      },
    });
    const res = await fetch(`${base}${sent}`, { headers: { 'payment-signature': header } });
    const text = await res.text();
    // Express answers a handler's throw with its own HTML page.
    const body = (res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text) as unknown;
    const answer = decodeJsonHeader(res.headers.get('payment-response') ?? '');
    const extra = (answer.ok ? answer.value : null) as {
      extra: { chargedAmount: string; channelState: { chargedCumulativeAmount: string } };
    } | null;
    return {
      status: res.status,
      price: accepted.amount,
      charged: extra?.extra.chargedAmount,
      total: extra?.extra.channelState.chargedCumulativeAmount,
      body,
    };
  }

  it('charges 1200 of a 5000 price three times and fails once: the seller earns 3600, and every report says so', async () => {
    const b = await h.buyer({ batch: true, payee });
    // The next voucher's ceiling is always the charged total plus the price.
    expect(await pay(b, '', PRICE)).toMatchObject({ status: 200, price: '5000', charged: '1200', total: '1200' });
    expect(await pay(b, '', 1200n + PRICE)).toMatchObject({ status: 200, charged: '1200', total: '2400' });
    expect(await pay(b, '?fail=1', 2400n + PRICE)).toMatchObject({ status: 500, charged: '0', total: '2400' });
    expect(await pay(b, '', 2400n + PRICE)).toMatchObject({ status: 200, charged: '1200', total: '3600' });

    const channel = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as Record<string, string>;
    expect(channel).toMatchObject({ charged: '3600', lastAccepted: '7400', unclaimed: '3600' });

    // Receipts: each the charge, cumulative the charged total (not the voucher's ceiling).
    const { receipts } = (await (await fetch(`${h.url}/receipts?channelId=${b.channelId}`)).json()) as {
      receipts: { amount: string; cumulative: string }[];
    };
    expect(receipts.map((r) => [r.amount, r.cumulative]).sort()).toEqual([
      ['1200', '1200'],
      ['1200', '2400'],
      ['1200', '3600'],
    ]);

    // Events: voucher.accepted with the charge as its delta.
    const deltas = await acceptedDeltas(`${h.url}/events?channelId=${b.channelId}`, 3);
    expect(deltas).toEqual(['1200', '1200', '1200']);

    const revenue = async () =>
      ((await (await fetch(`${h.url}/sellers/${payee}/revenue`)).json()) as { totals: Record<string, string> }).totals;
    const before = await revenue();
    expect(before).toMatchObject({ earned: '3600', settled: '0', receivable: '3600', lost: '0' });
    expect(BigInt(before.earned!)).toBe(BigInt(before.settled!) + BigInt(before.receivable!) + BigInt(before.lost!));

    // The claim takes what was charged, below the last voucher's ceiling (7400).
    const claim = await fetch(`${h.url}/channels/${b.channelId}/claim`, { method: 'POST' });
    expect(claim.status).toBe(200);
    expect(await claim.json()).toMatchObject({ amount: '3600', cumulative: '3600' });
    expect(await h.ledger.balance(payee)).toBe(3600n);
    const after = await revenue();
    expect(after).toMatchObject({ earned: '3600', settled: '3600', receivable: '0', lost: '0' });
    expect(BigInt(after.earned!)).toBe(BigInt(after.settled!) + BigInt(after.receivable!) + BigInt(after.lost!));
  });

  it('the demo seller’s /demo/summary is priced at its most tokens and charges the tokens it produced', async () => {
    const b = await h.buyer({ batch: true });
    const demo = `${h.url}/demo/summary`;
    // A malformed query is refused before the meter asks for a payment: the voucher sent with it is
    // not taken, and the next request pays from nothing charged.
    const bad = await fetch(`${demo}?tokens=0`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('payment-required')).toBeNull();
    const refused = await pay(b, '?tokens=10', 20_000n, demo, '?tokens=0');
    expect(refused).toMatchObject({ status: 400, charged: undefined });
    expect(refused.body).toMatchObject({ error: 'BAD_REQUEST', message: expect.stringContaining('query.tokens') });
    // 100 tokens × 200 per token is the price; 10 asked, 10 produced: 2000 charged.
    const ten = await pay(b, '?tokens=10', 20_000n, demo);
    expect(ten).toMatchObject({ status: 200, price: '20000', charged: '2000', total: '2000' });
    expect(ten.body).toMatchObject({ tokens: 10, perToken: '200', charged: '2000' });
    // 100 asked: the text runs out first, and only what it produced is charged.
    const all = await pay(b, '', 2000n + 20_000n, demo);
    const produced = (all.body as { tokens: number }).tokens;
    expect(produced).toBeGreaterThan(10);
    expect(produced).toBeLessThan(100);
    expect(all).toMatchObject({ status: 200, charged: String(200 * produced), total: String(2000 + 200 * produced) });
  });
});

/** The `delta` of the first `n` voucher.accepted events of a GET /events stream. */
async function acceptedDeltas(feed: string, n: number): Promise<string[]> {
  const res = await fetch(feed);
  const reader = res.body!.getReader();
  const parser = new SseParser();
  const deltas: string[] = [];
  try {
    while (deltas.length < n) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const e of parser.push(value))
        if (e.event === 'voucher.accepted') deltas.push((JSON.parse(e.data) as { data: { delta: string } }).data.delta);
    }
  } finally {
    await reader.cancel();
  }
  return deltas;
}
