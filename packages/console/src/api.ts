// The facilitator's HTTP API, on the page's own origin, and the shapes the console reads from it.
// The shapes mirror the facilitator's zod response schemas; test/api-shapes.test.ts checks that
// every answer the facilitator can give fits them, so the two cannot drift apart unnoticed.
import type { ChannelView, ClaimResponse, PaymentRequirements, SupportedResponse } from '@svc/core';
import { connection } from './connection.js';

export type { ChannelView, ClaimResponse, SupportedResponse };

/** The facilitator answered, with an error body (PROTOCOL.md §6). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The facilitator did not answer at all. */
export class Unreachable extends Error {}

async function request<T>(path: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { cache: 'no-store', ...init });
  } catch {
    connection.down();
    throw new Unreachable(`The facilitator did not answer ${path}.`);
  }
  connection.up();
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const err = (body ?? {}) as { error?: unknown; message?: unknown };
    throw new ApiError(
      res.status,
      typeof err.error === 'string' ? err.error : 'HTTP_' + String(res.status),
      typeof err.message === 'string' ? err.message : `HTTP ${res.status}`,
    );
  }
  return body as T;
}

export function get<T>(path: string): Promise<T> {
  return request<T>(path);
}

export function post<T>(path: string): Promise<T> {
  return request<T>(path, { method: 'POST' });
}

/** An event as GET /events and the account ledger give it (PROTOCOL.md §7). */
export interface EventView {
  id: number;
  type: string;
  source: 'gateway' | 'facilitator' | 'ledger';
  ts: string;
  channelId?: string | undefined;
  account?: string | undefined;
  data: Record<string, unknown>;
}

export interface Stats {
  vouchersAccepted: number;
  vouchersRejected: number;
  chainTxCount: number;
  volume: string;
  channelsOpen: number;
  medianVerifyLatencyMs: number | null;
  vouchersPerClaim: number | null;
  exactEquivalent: { txCount: number; seconds: number };
}

export type AgingBucket = '<1h' | '1h-24h' | '1d-7d' | '>7d';

export interface Settlement {
  settledAt: string;
  tx: string;
  channelId: string;
  payer: string | null;
  amount: string;
  paymentsCovered: number | null;
  explorer: string;
}

export interface Revenue {
  payTo: string;
  asOf: string;
  totals: {
    earned: string;
    settled: string;
    receivable: string;
    lost: string;
    payments: number;
    settlements: number;
    paymentsPerSettlement: number | null;
    buyers: number;
  };
  window: {
    bucket: 'hour' | 'day';
    days: number;
    start: string;
    end: string;
    earned: string;
    settled: string;
    payments: number;
    settlements: number;
  };
  byResource: { resource: string; earned: string; payments: number }[];
  otherResources: { resources: number; earned: string; payments: number };
  series: { start: string; earned: string; settled: string; payments: number; settlements: number }[];
  receivables: {
    total: string;
    buckets: { bucket: AgingBucket; amount: string; channels: number }[];
    channels: {
      channelId: string;
      payer: string | null;
      status: 'open' | 'closed';
      amount: string;
      oldestUnclaimedAt: string | null;
      ageSeconds: number;
      bucket: AgingBucket;
    }[];
  };
  losses: {
    total: string;
    channels: { channelId: string; payer: string | null; amount: string; closedAt: string }[];
    truncated: boolean;
  };
  settlements: Settlement[];
  settlementsTruncated: boolean;
  /** When the facilitator claims: a channel past `threshold` within `intervalSeconds`; any channel `expiryMarginLedgers` before expiry. */
  settlementPolicy: { threshold: string; intervalSeconds: number; expiryMarginLedgers: number; ledgerSeconds: number };
}

export interface Account {
  address: string;
  kind: 'account' | 'smart';
  policy: { agentKey: string; perTxCap: string; dailyCap: string; payees: string[]; expiresLedger: number } | null;
  spentToday: string;
  day: string | null;
  frozen: boolean;
  balances: { asset: string; code: string; amount: string }[];
  channels: ChannelView[];
}

export interface LedgerPage {
  events: EventView[];
  nextCursor: string | null;
}

export interface CreditLine {
  account: string;
  debt: string;
  value: string;
  healthBps: number;
  liquidatable: boolean;
  openedAt: string;
}

export interface PoolPosition {
  address: string;
  shares: string;
  value: string;
}

export interface Float {
  pool: {
    address: string;
    asset: string;
    size: string;
    idle: string;
    lent: string;
    totalShares: string;
    sharePrice: string;
    utilizationBps: number;
    liquidationThresholdBps: number;
    lineCount: number;
    investorCount: number;
  };
  lines: CreditLine[];
  positions: PoolPosition[];
  history: { at: string; sharePrice: string; size: string; lent: string; utilizationBps: number }[];
  sampleSeconds: number;
}

export interface DiscoveryItem {
  resource: string;
  accepts: PaymentRequirements[];
  lastUpdated: string;
  description: string;
  mimeType: string;
  payTo: string;
  payments: number;
  payers: number;
  firstSeen: string;
}

export interface Discovery {
  items: DiscoveryItem[];
  pagination: { limit: number; offset: number; total: number };
}

/** What the console reads of GET /demo/info (present when the demo is on): addresses to offer. */
export interface DemoInfo {
  seller: string;
  world: { account: string | null; investors: string[] } | null;
}
