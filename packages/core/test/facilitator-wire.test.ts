// The facilitator's answers as @svc/core declares them (facilitator-wire.ts, revenue-wire.ts,
// float-wire.ts, demo-wire.ts). The console reads these answers typed with the schemas' output
// types but never parses them, so a schema must not transform what it reads: an answer parses to
// itself. Money is a decimal string of base units: a JSON number, a fraction or a sign is refused.
import { describe, expect, it } from 'vitest';
import {
  AccountLedgerPageSchema,
  AccountSchema,
  DemoInfoSchema,
  DiscoveryResponseSchema,
  FloatSchema,
  RevenueReportSchema,
  StatsSchema,
  contractFromRaw,
  randomKeypair,
} from '@svc/core';
import type {
  AccountView,
  DemoInfo,
  DiscoveryResponse,
  EventView,
  FloatView,
  RevenueReport,
  StatsView,
} from '@svc/core';

const SELLER = randomKeypair().address;
const BUYER = randomKeypair().address;
const ASSET = contractFromRaw(new Uint8Array(32).fill(1));
const POOL = contractFromRaw(new Uint8Array(32).fill(2));
const SMART = contractFromRaw(new Uint8Array(32).fill(3));
const T = '2026-01-02T03:04:05.000Z';
const HASH = 'ab'.repeat(32);
const sums = { earned: '15000', settled: '10000', payments: 3, settlements: 1 };

const STATS: StatsView = {
  vouchersAccepted: 3,
  vouchersRejected: 1,
  chainTxCount: 2,
  volume: '15000',
  channelsOpen: 1,
  medianVerifyLatencyMs: 0.42,
  vouchersPerClaim: null,
  exactEquivalent: { txCount: 3, seconds: 15 },
};

const EVENT: EventView = {
  id: 7,
  type: 'voucher.accepted',
  source: 'facilitator',
  ts: T,
  channelId: '42',
  account: BUYER,
  data: { delta: '5000', payee: SELLER },
};

const ACCOUNT: AccountView = {
  address: SMART,
  kind: 'smart',
  policy: { agentKey: BUYER, perTxCap: '10000000', dailyCap: '50000000', payees: [SELLER], expiresLedger: 99 },
  spentToday: '5000',
  day: '2026-01-02',
  frozen: false,
  balances: [{ asset: ASSET, code: 'USDC', amount: '99995000' }],
  channels: [],
};

const DISCOVERY: DiscoveryResponse = {
  x402Version: 2,
  items: [
    {
      resource: 'https://seller.example/book',
      type: 'http',
      x402Version: 2,
      accepts: [],
      lastUpdated: T,
      extensions: {
        bazaar: {
          info: { input: { type: 'http', method: 'GET' }, output: { type: 'json', mimeType: 'application/json' } },
          schema: {},
        },
      },
      description: 'A book',
      mimeType: 'application/json',
      payTo: SELLER,
      payments: 3,
      payers: 1,
      firstSeen: T,
    },
  ],
  pagination: { limit: 50, offset: 0, total: 1 },
};

const REVENUE: RevenueReport = {
  payTo: SELLER,
  asOf: T,
  totals: {
    earned: '15000',
    restored: '0',
    settled: '10000',
    receivable: '5000',
    lost: '0',
    payments: 3,
    settlements: 1,
    paymentsPerSettlement: 2,
    buyers: 1,
  },
  window: { bucket: 'day', days: 1, start: '2026-01-02T00:00:00.000Z', end: '2026-01-03T00:00:00.000Z', ...sums },
  byResource: [{ resource: 'https://seller.example/book', earned: '15000', payments: 3 }],
  otherResources: { resources: 0, earned: '0', payments: 0 },
  series: [{ start: '2026-01-02T00:00:00.000Z', ...sums }],
  receivables: {
    total: '5000',
    buckets: [{ bucket: '<1h', amount: '5000', channels: 1 }],
    channels: [
      {
        channelId: '42',
        payer: BUYER,
        status: 'open',
        amount: '5000',
        oldestUnclaimedAt: T,
        ageSeconds: 60,
        bucket: '<1h',
      },
    ],
  },
  losses: { total: '0', channels: [], truncated: false },
  settlements: [
    { settledAt: T, tx: HASH, channelId: '42', payer: BUYER, amount: '10000', paymentsCovered: 2, explorer: '' },
  ],
  settlementsTruncated: false,
  settlementPolicy: { threshold: '10000', intervalSeconds: 30, expiryMarginLedgers: 720, ledgerSeconds: 5 },
};

const FLOAT: FloatView = {
  pool: {
    address: POOL,
    asset: ASSET,
    size: '1000000000',
    idle: '900000000',
    lent: '100000000',
    totalShares: '1000000000',
    sharePrice: '10000000',
    utilizationBps: 1000,
    liquidationThresholdBps: 11000,
    lineCount: 1,
    investorCount: 1,
  },
  lines: [
    { account: SMART, debt: '101000000', value: '150000000', healthBps: 14851, liquidatable: false, openedAt: T },
  ],
  positions: [{ address: BUYER, shares: '1000000000', value: '1000000000' }],
  history: [{ at: T, sharePrice: '10000000', size: '1000000000', lent: '100000000', utilizationBps: 1000 }],
  sampleSeconds: 60,
};

const DEMO: DemoInfo = {
  seller: SELLER,
  resources: [
    {
      method: 'GET',
      path: '/demo/ticker/stream',
      unit: 'second',
      price: '100',
      slice: 10,
      sliceAmount: '1000',
      minDeposit: '10000',
      description: 'A ticker',
    },
  ],
  controlKeyRequired: false,
  world: { ready: true, account: SMART, owner: SELLER, agentKey: BUYER, investors: [BUYER] },
  agent: {
    available: true,
    running: false,
    run: {
      id: 'run-1',
      status: 'done',
      startedAt: T,
      finishedAt: T,
      account: SMART,
      channelId: '42',
      paid: '15000',
      steps: [{ name: 'book', status: 'done', detail: '3 × 5000', paid: '15000', startedAt: T, finishedAt: T }],
    },
  },
};

describe('the facilitator’s answers in @svc/core', () => {
  it.each([
    ['Stats', StatsSchema, STATS],
    ['AccountLedgerPage', AccountLedgerPageSchema, { events: [EVENT], nextCursor: 'abc' }],
    ['Account', AccountSchema, ACCOUNT],
    ['DiscoveryResources', DiscoveryResponseSchema, DISCOVERY],
    ['SellerRevenue', RevenueReportSchema, REVENUE],
    ['Float', FloatSchema, FLOAT],
    ['DemoInfo', DemoInfoSchema, DEMO],
  ] as const)(
    '%s: an answer parses to itself (what the console reads unparsed is the output type)',
    (_, schema, answer) => {
      expect(schema.parse(answer)).toEqual(answer);
    },
  );

  it.each([5000, '1.5', '-5000', '5e3', ''])('refuses %j as an amount', (amount) => {
    const totals = { ...REVENUE.totals, earned: amount };
    expect(RevenueReportSchema.safeParse({ ...REVENUE, totals }).success).toBe(false);
    const pool = { ...FLOAT.pool, sharePrice: amount };
    expect(FloatSchema.safeParse({ ...FLOAT, pool }).success).toBe(false);
  });

  it('refuses an aging bucket, a demo step or an event source it does not name', () => {
    const buckets = [{ bucket: '>30d', amount: '5000', channels: 1 }];
    expect(
      RevenueReportSchema.safeParse({ ...REVENUE, receivables: { ...REVENUE.receivables, buckets } }).success,
    ).toBe(false);
    const steps = [{ ...DEMO.agent.run!.steps[0], name: 'dance' }];
    const run = { ...DEMO.agent.run, steps };
    expect(DemoInfoSchema.safeParse({ ...DEMO, agent: { ...DEMO.agent, run } }).success).toBe(false);
    expect(
      AccountLedgerPageSchema.safeParse({ events: [{ ...EVENT, source: 'buyer' }], nextCursor: null }).success,
    ).toBe(false);
  });
});
