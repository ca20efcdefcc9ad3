// domain/revenue.ts on hand-built events: UTC bucketing, empty buckets, the window against the
// all-time totals, receivables aging, claims by someone else, caps, and RFC 4180 CSV.
import { describe, expect, it } from 'vitest';
import { NETWORKS, randomKeypair } from '@svc/core';
import {
  MAX_LISTED_RESOURCES,
  MAX_LISTED_SETTLEMENTS,
  RevenueTally,
  agingBucket,
  revenueWindow,
  settlementsCsv,
  toCsv,
} from '../src/domain/revenue.js';
import type { Settlement } from '../src/domain/revenue.js';
import type { StoredEvent } from '../src/store/port.js';

const SELLER = randomKeypair().address;
const OTHER_SELLER = randomKeypair().address;
const PAYER = randomKeypair().address;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse('2025-03-10T18:30:00.000Z');

let nextId = 1;
function event(type: string, ts: string, data: Record<string, unknown>): StoredEvent {
  return { id: nextId++, type, source: 'facilitator', ts, channelId: null, account: SELLER, accounts: [SELLER], data };
}

const cumulative = new Map<string, bigint>();
function accepted(
  ts: string,
  delta: bigint,
  o: { channelId?: string; payee?: string; payer?: string; resource?: string } = {},
): StoredEvent {
  const channelId = o.channelId ?? '1';
  const cum = (cumulative.get(channelId) ?? 0n) + delta;
  cumulative.set(channelId, cum);
  return event('voucher.accepted', ts, {
    channelId,
    payer: o.payer ?? PAYER,
    payee: o.payee ?? SELLER,
    cumulative: cum.toString(),
    delta: delta.toString(),
    unit: 'request',
    resource: o.resource ?? 'http://seller.test/book',
    latencyMs: 3,
    receiptId: `r${nextId}`,
  });
}

function claimed(
  ts: string,
  channelId: string,
  cum: bigint,
  amount: bigint,
  extra: Record<string, unknown> = { payer: PAYER, vouchersCovered: 1 },
): StoredEvent {
  return event('channel.claimed', ts, {
    channelId,
    payee: SELLER,
    amount: amount.toString(),
    cumulative: cum.toString(),
    tx: 'ab'.repeat(32),
    ...extra,
  });
}

function tally(events: StoredEvent[], bucket: 'hour' | 'day' = 'day', days = 2): RevenueTally {
  const t = new RevenueTally(SELLER, revenueWindow(NOW, bucket, days));
  t.add(events);
  return t;
}

describe('revenueWindow', () => {
  it('ends with the UTC bucket holding now and spans days × 24 h of whole buckets', () => {
    expect(revenueWindow(NOW, 'day', 2)).toEqual({
      bucket: 'day',
      days: 2,
      start: Date.parse('2025-03-09T00:00:00Z'),
      end: Date.parse('2025-03-11T00:00:00Z'),
    });
    expect(revenueWindow(NOW, 'hour', 1)).toEqual({
      bucket: 'hour',
      days: 1,
      start: Date.parse('2025-03-09T19:00:00Z'),
      end: Date.parse('2025-03-10T19:00:00Z'),
    });
    const midnight = Date.parse('2025-03-10T00:00:00Z');
    expect(revenueWindow(midnight, 'day', 1).start).toBe(midnight);
    expect(revenueWindow(midnight - 1, 'day', 1).start).toBe(midnight - DAY);
  });
});

describe('bucketing', () => {
  it('puts 23:59:59.999 in one day and 00:00:00.000 in the next, and keeps empty buckets', () => {
    const r = tally([accepted('2025-03-09T23:59:59.999Z', 1000n), accepted('2025-03-10T00:00:00.000Z', 250n)]).report(
      NOW,
      null,
    );
    expect(r.series).toEqual([
      { start: '2025-03-09T00:00:00.000Z', earned: '1000', settled: '0', payments: 1, settlements: 0 },
      { start: '2025-03-10T00:00:00.000Z', earned: '250', settled: '0', payments: 1, settlements: 0 },
    ]);
    const hourly = tally(
      [accepted('2025-03-09T23:59:59.999Z', 1000n), accepted('2025-03-10T00:00:00.000Z', 250n)],
      'hour',
      2,
    ).report(NOW, null);
    expect(hourly.series).toHaveLength(48);
    const nonEmpty = hourly.series.filter((s) => s.payments > 0);
    expect(nonEmpty.map((s) => [s.start, s.earned])).toEqual([
      ['2025-03-09T23:00:00.000Z', '1000'],
      ['2025-03-10T00:00:00.000Z', '250'],
    ]);
    expect(
      hourly.series
        .filter((s) => s.payments === 0)
        .every((s) => s.earned === '0' && s.settled === '0' && s.settlements === 0),
    ).toBe(true);
  });

  it('counts a payment made without a resource (flat and v1 payloads store resource "") under ""', () => {
    const r = tally([accepted('2025-03-10T10:00:00.000Z', 300n, { resource: '' })]).report(NOW, null);
    expect(r.totals).toMatchObject({ earned: '300', payments: 1 });
    expect(r.byResource).toEqual([{ resource: '', earned: '300', payments: 1 }]);
  });

  it('counts what a claim settled beyond the vouchers on record as earned (restored), so the totals still add up', () => {
    // A store put back to an older copy: it holds the vouchers up to 20000, the ledger paid out 50000.
    const voucher = (ts: string, cum: bigint, delta: bigint) =>
      event('voucher.accepted', ts, {
        channelId: 'restored',
        payer: PAYER,
        payee: SELLER,
        cumulative: cum.toString(),
        delta: delta.toString(),
        unit: 'request',
        resource: 'http://seller.test/book',
        latencyMs: 1,
        receiptId: `r${nextId}`,
      });
    const r = tally([
      voucher('2025-03-10T10:00:00.000Z', 20_000n, 20_000n),
      claimed('2025-03-10T11:00:00.000Z', 'restored', 50_000n, 50_000n),
      voucher('2025-03-10T12:00:00.000Z', 55_000n, 5_000n),
    ]).report(NOW, null);
    expect(r.totals).toMatchObject({
      earned: '55000',
      restored: '30000',
      settled: '50000',
      receivable: '5000',
      lost: '0',
      payments: 2,
    });
    expect(r.window).toMatchObject({ earned: '55000', settled: '50000' });
    expect(r.receivables.total).toBe('5000');
  });

  it('counts events outside the window in the totals only', () => {
    const r = tally([
      accepted('2025-03-01T10:00:00.000Z', 700n),
      accepted('2025-03-10T10:00:00.000Z', 300n),
      claimed('2025-03-02T00:00:00.000Z', '1', 700n, 700n),
    ]).report(NOW, null);
    // The claim covered the first payment only: 1 per settlement, not 2 payments ÷ 1 claim.
    expect(r.totals).toMatchObject({
      earned: '1000',
      settled: '700',
      receivable: '300',
      payments: 2,
      settlements: 1,
      paymentsPerSettlement: 1,
      buyers: 1,
    });
    expect(r.window).toMatchObject({ earned: '300', settled: '0', payments: 1, settlements: 0 });
    expect(r.byResource).toEqual([{ resource: 'http://seller.test/book', earned: '300', payments: 1 }]);
    expect(r.settlements).toEqual([]);
  });

  it('takes the window as [start, end): an event at its very start is in, one at its end is not', () => {
    const r = tally([accepted('2025-03-09T00:00:00.000Z', 5n), accepted('2025-03-11T00:00:00.000Z', 7n)]).report(
      NOW,
      null,
    );
    expect(r.window).toMatchObject({
      start: '2025-03-09T00:00:00.000Z',
      end: '2025-03-11T00:00:00.000Z',
      earned: '5',
      payments: 1,
    });
    expect(r.series.map((s) => s.earned)).toEqual(['5', '0']);
    expect(r.totals.earned).toBe('12');
  });

  it('sums amounts beyond 2^53 exactly', () => {
    const big = 2n ** 70n + 1n;
    const r = tally([
      accepted('2025-03-10T01:00:00.000Z', big, { channelId: '9' }),
      accepted('2025-03-10T02:00:00.000Z', 1n, { channelId: '9' }),
    ]).report(NOW, null);
    expect(r.totals.earned).toBe((big + 1n).toString());
  });
});

describe('whose revenue', () => {
  it('skips what the account paid as a payer, and closes only its own channels', () => {
    const events = [
      event('channel.opened', '2025-03-09T01:00:00.000Z', { channelId: '7', payer: SELLER, payee: OTHER_SELLER }),
      accepted('2025-03-09T02:00:00.000Z', 500n, { channelId: '7', payer: SELLER, payee: OTHER_SELLER }),
      accepted('2025-03-09T02:00:00.000Z', 40n, { channelId: '8' }),
      event('channel.closed', '2025-03-09T03:00:00.000Z', { channelId: '7', refunded: '0', tx: 'cd'.repeat(32) }),
    ];
    const r = tally(events).report(NOW, null);
    expect(r.totals).toMatchObject({ earned: '40', payments: 1, buyers: 1 });
    expect(r.receivables.channels.map((c) => [c.channelId, c.status])).toEqual([['8', 'open']]);
  });
});

describe('receivables aging', () => {
  it('ages a channel from its oldest voucher not covered by a claim, also one accepted while the claim was in flight', () => {
    const r = tally([
      accepted('2025-03-10T01:00:00.000Z', 100n, { channelId: '3' }),
      accepted('2025-03-10T02:00:00.000Z', 100n, { channelId: '3' }), // cumulative 200
      accepted('2025-03-10T03:00:00.000Z', 100n, { channelId: '3' }), // 300: accepted before the claim of 200 was recorded
      claimed('2025-03-10T04:00:00.000Z', '3', 200n, 200n),
      accepted('2025-03-10T05:00:00.000Z', 50n, { channelId: '3' }),
    ]).report(NOW, null);
    expect(r.receivables.channels).toEqual([
      {
        channelId: '3',
        payer: PAYER,
        status: 'open',
        amount: '150',
        oldestUnclaimedAt: '2025-03-10T03:00:00.000Z',
        ageSeconds: 15.5 * 3600,
        bucket: '1h-24h',
      },
    ]);
    expect(r.receivables.total).toBe(r.totals.receivable);
  });

  it('leaves fully claimed channels out, counts a closed one’s unclaimed amount as lost, and sorts oldest first', () => {
    const r = tally([
      event('channel.opened', '2025-03-01T00:00:00.000Z', { channelId: '5', payer: PAYER, payee: SELLER }),
      accepted('2025-03-01T00:00:00.000Z', 10n, { channelId: '5' }),
      event('channel.closed', '2025-03-02T00:00:00.000Z', { channelId: '5', refunded: '0', tx: 'ef'.repeat(32) }),
      accepted('2025-03-10T18:00:00.000Z', 20n, { channelId: '6' }),
      accepted('2025-03-10T10:00:00.000Z', 30n, { channelId: '4' }),
      claimed('2025-03-10T11:00:00.000Z', '4', cumulative.get('4')!, 30n),
    ]).report(NOW, null);
    expect(r.receivables.channels.map((c) => [c.channelId, c.status, c.amount, c.bucket])).toEqual([
      ['6', 'open', '20', '<1h'],
    ]);
    expect(r.receivables.buckets).toEqual([
      { bucket: '<1h', amount: '20', channels: 1 },
      { bucket: '1h-24h', amount: '0', channels: 0 },
      { bucket: '1d-7d', amount: '0', channels: 0 },
      { bucket: '>7d', amount: '0', channels: 0 },
    ]);
    expect(r.losses).toEqual({
      total: '10',
      channels: [{ channelId: '5', payer: PAYER, amount: '10', closedAt: '2025-03-02T00:00:00.000Z' }],
      truncated: false,
    });
    expect(r.totals).toMatchObject({ earned: '60', settled: '30', receivable: '20', lost: '10' });
  });

  it('labels ages with inclusive lower bounds', () => {
    expect([0, HOUR - 1, HOUR, DAY - 1, DAY, 7 * DAY - 1, 7 * DAY].map(agingBucket)).toEqual([
      '<1h',
      '<1h',
      '1h-24h',
      '1h-24h',
      '1d-7d',
      '1d-7d',
      '>7d',
    ]);
  });
});

describe('settlements', () => {
  it('a claim by someone else: payer from the channel, payments covered unknown, explorer link on testnet', () => {
    const t = tally([
      event('channel.opened', '2025-03-10T00:00:00.000Z', { channelId: '11', payer: PAYER, payee: SELLER }),
      accepted('2025-03-10T01:00:00.000Z', 5000n, { channelId: '11' }),
      claimed('2025-03-10T02:00:00.000Z', '11', 5000n, 5000n, { vouchersCovered: null }),
    ]);
    const explorer = NETWORKS['stellar:testnet'].explorer;
    expect(t.settlements(explorer)).toEqual([
      {
        settledAt: '2025-03-10T02:00:00.000Z',
        tx: 'ab'.repeat(32),
        channelId: '11',
        payer: PAYER,
        amount: 5000n,
        paymentsCovered: null,
        explorer: `${explorer}${'ab'.repeat(32)}`,
      },
    ]);
    expect(t.report(NOW, null).settlements[0]).toMatchObject({ amount: '5000', paymentsCovered: null, explorer: '' });
  });

  it(`lists at most ${MAX_LISTED_SETTLEMENTS} in JSON, newest first, and every one in the CSV`, () => {
    const events: StoredEvent[] = [];
    for (let i = 1; i <= MAX_LISTED_SETTLEMENTS + 1; i++) {
      const ts = new Date(Date.parse('2025-03-10T00:00:00.000Z') + i * 1000).toISOString();
      events.push(accepted(ts, 2n, { channelId: '12' }), claimed(ts, '12', cumulative.get('12')!, 2n));
    }
    const t = tally(events);
    const r = t.report(NOW, null);
    expect(r.settlements).toHaveLength(MAX_LISTED_SETTLEMENTS);
    expect(r.settlementsTruncated).toBe(true);
    expect(r.settlements[0]!.settledAt > r.settlements[1]!.settledAt).toBe(true);
    expect(r.window.settlements).toBe(MAX_LISTED_SETTLEMENTS + 1);
    expect(settlementsCsv(t.settlements(null)).split('\r\n')).toHaveLength(MAX_LISTED_SETTLEMENTS + 3); // header, rows, trailing ''
  });
});

describe('revenue by resource', () => {
  it(`lists the top ${MAX_LISTED_RESOURCES} by earned and sums the rest, so the whole sums to the window`, () => {
    const events = Array.from({ length: MAX_LISTED_RESOURCES + 2 }, (_v, i) =>
      accepted('2025-03-10T08:00:00.000Z', BigInt(i + 1), { channelId: '13', resource: `http://seller.test/r${i}` }),
    );
    const r = tally(events).report(NOW, null);
    expect(r.byResource).toHaveLength(MAX_LISTED_RESOURCES);
    expect(r.byResource[0]).toEqual({
      resource: `http://seller.test/r${MAX_LISTED_RESOURCES + 1}`,
      earned: String(MAX_LISTED_RESOURCES + 2),
      payments: 1,
    });
    expect(r.otherResources).toEqual({ resources: 2, earned: '3', payments: 2 }); // r0 (1) and r1 (2)
    const listed = r.byResource.reduce((s, x) => s + BigInt(x.earned), 0n);
    expect(listed + BigInt(r.otherResources.earned)).toBe(BigInt(r.window.earned));
  });
});

describe('CSV', () => {
  it('quotes fields with a comma, quote or line break (RFC 4180) and ends every record with CRLF', () => {
    expect(toCsv([['a', 'b,c', 'say "hi"', 'two\nlines', 'cr\rhere', ''], ['plain']])).toBe(
      'a,"b,c","say ""hi""","two\nlines","cr\rhere",\r\nplain\r\n',
    );
  });

  it('writes amounts in asset units with 7 decimals and leaves unknown values empty', () => {
    const s: Settlement = {
      settledAt: '2025-03-10T02:00:00.000Z',
      tx: 'ab'.repeat(32),
      channelId: '42',
      payer: null,
      amount: 15_000n,
      paymentsCovered: null,
      explorer: '',
    };
    expect(settlementsCsv([s, { ...s, payer: PAYER, amount: 123_456_789n, paymentsCovered: 4 }])).toBe(
      'settled_at,tx,channel_id,payer,amount,payments_covered,explorer\r\n' +
        `2025-03-10T02:00:00.000Z,${'ab'.repeat(32)},42,,0.0015000,,\r\n` +
        `2025-03-10T02:00:00.000Z,${'ab'.repeat(32)},42,${PAYER},12.3456789,4,\r\n`,
    );
  });
});
