// Seller revenue from the audit ledger (spec "Endpoints": earned = accepted vouchers, settled =
// claimed on-chain, receivable = earned minus settled). What a closed channel still owes can never
// be paid (the contract takes no claim after close): that is `lost`, not receivable, so
// earned = settled + receivable + lost, to the base unit. No I/O: the caller pages through the seller's
// events in id order and feeds them to a RevenueTally, which keeps running sums (bigint: SQLite
// keeps amounts as text, and a float would lose base units).
//
//   const tally = new RevenueTally(payTo, revenueWindow(now, 'day', 30));
//   for (const page of pages) tally.add(page);
//   const report = tally.report(now, explorerBase);
//
// Totals are all-time. The window (whole UTC buckets, see revenueWindow) bounds the time series,
// revenue by resource and the settlement list, and reports its own earned/settled.
import { AGING_BUCKETS, displayAmount, formatUnits, parseUnits } from '@svc/core';
import type {
  AgingBucket,
  AgingReport,
  LossReport,
  RevenueBucket,
  RevenueReport,
  RevenueSettlement,
  RevenueSums,
} from '@svc/core';
import type { StoredEvent } from '../store/port.js';

/** What the tally reads; opened/closed only name each channel's payer and status. */
export const REVENUE_EVENT_TYPES = ['channel.opened', 'voucher.accepted', 'channel.claimed', 'channel.closed'];

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const BUCKET_MS: Record<RevenueBucket, number> = { hour: HOUR_MS, day: DAY_MS };
/** The JSON settlement list stops here (newest first); the CSV has every settlement. */
export const MAX_LISTED_SETTLEMENTS = 500;
/** Resources past the top ones (by earned) are summed into `otherResources`. */
export const MAX_LISTED_RESOURCES = 100;

/** [start, end) in epoch ms, both on UTC bucket boundaries. */
export interface RevenueWindow {
  bucket: RevenueBucket;
  days: number;
  start: number;
  end: number;
}

/**
 * The last `days` × 24 h in whole UTC buckets, ending with the bucket that holds `now` (the current
 * hour or day, still filling): days × 24 hourly or `days` daily buckets. A day is a whole number
 * of hours, so `start` is on a boundary of either size.
 */
export function revenueWindow(now: number, bucket: RevenueBucket, days: number): RevenueWindow {
  const size = BUCKET_MS[bucket];
  const end = Math.floor(now / size) * size + size;
  return { bucket, days, start: end - days * DAY_MS, end };
}

/**
 * One on-chain settlement of the seller: the wire's, with its amount as bigint. The payer is null
 * only when no event ever named the channel's payer.
 */
export type Settlement = Omit<RevenueSettlement, 'amount'> & { amount: bigint };

interface Bin {
  earned: bigint;
  /** Part of earned: claims beyond the vouchers on record (ChannelTally.claim). */
  restored: bigint;
  settled: bigint;
  payments: number;
  settlements: number;
}

const emptyBin = (): Bin => ({ earned: 0n, restored: 0n, settled: 0n, payments: 0, settlements: 0 });

type Claim = Omit<Settlement, 'explorer'> & { at: number };

export class RevenueTally {
  private readonly total = emptyBin();
  private readonly inWindow = emptyBin();
  private readonly series: Bin[];
  private readonly resources = new Map<string, { earned: bigint; payments: number }>();
  private readonly buyers = new Set<string>();
  private readonly channels = new Map<string, ChannelTally>();
  private readonly claims: Claim[] = [];

  constructor(
    readonly payTo: string,
    readonly window: RevenueWindow,
  ) {
    this.series = Array.from({ length: (window.end - window.start) / BUCKET_MS[window.bucket] }, emptyBin);
  }

  /** Feeds events in id order. The account may also be a payer elsewhere: only its payee side counts. */
  add(events: readonly StoredEvent[]): void {
    for (const e of events) {
      if (e.type === 'voucher.accepted' && e.data['payee'] === this.payTo) this.accepted(e);
      else if (e.type === 'channel.claimed' && e.data['payee'] === this.payTo) this.claimed(e);
      else if (e.type === 'channel.opened' && e.data['payee'] === this.payTo)
        this.channel(text(e, 'channelId')).payer ??= text(e, 'payer');
      else if (e.type === 'channel.closed') this.closed(e);
    }
  }

  private closed(e: StoredEvent): void {
    // No payee in its data: it is this seller's only if one of its channels is named.
    const channel = this.channels.get(text(e, 'channelId'));
    if (channel && channel.closedAt === null) channel.closedAt = e.ts;
  }

  private accepted(e: StoredEvent): void {
    // A payment without a resource object (the flat and v1 payloads) is stored with resource ''.
    const [delta, payer, at, resource] = [units(e, 'delta'), text(e, 'payer'), timeOf(e), optionalText(e, 'resource')];
    this.channel(text(e, 'channelId')).accept(payer, units(e, 'cumulative'), delta, at);
    this.buyers.add(payer);
    for (const bin of this.bins(at)) {
      bin.earned += delta;
      bin.payments += 1;
    }
    if (!this.inRange(at)) return;
    const r = this.resources.get(resource) ?? { earned: 0n, payments: 0 };
    this.resources.set(resource, { earned: r.earned + delta, payments: r.payments + 1 });
  }

  private claimed(e: StoredEvent): void {
    const [channelId, amount, at] = [text(e, 'channelId'), units(e, 'amount'), timeOf(e)];
    const restored = this.channel(channelId).claim(units(e, 'cumulative'), amount);
    for (const bin of this.bins(at)) {
      bin.settled += amount;
      bin.settlements += 1;
      bin.earned += restored;
      bin.restored += restored;
    }
    const { tx, payer, vouchersCovered } = e.data;
    this.claims.push({
      settledAt: e.ts,
      at,
      tx: typeof tx === 'string' ? tx : '',
      channelId,
      payer: typeof payer === 'string' ? payer : null,
      amount,
      paymentsCovered: typeof vouchersCovered === 'number' ? vouchersCovered : null,
    });
  }

  private channel(id: string): ChannelTally {
    let c = this.channels.get(id);
    if (!c) this.channels.set(id, (c = new ChannelTally(id)));
    return c;
  }

  private inRange(at: number): boolean {
    return at >= this.window.start && at < this.window.end;
  }

  /** The sums an event at `at` adds to: the totals, and if in the window, its bucket and the window's. */
  private bins(at: number): Bin[] {
    if (!this.inRange(at)) return [this.total];
    const bucket = this.series[Math.floor((at - this.window.start) / BUCKET_MS[this.window.bucket])];
    return bucket ? [this.total, this.inWindow, bucket] : [this.total, this.inWindow];
  }

  /** Every settlement, oldest first; a claim event without a payer (a claim by someone else) takes the channel's. */
  settlements(explorerBase: string | null, only: (c: Claim) => boolean = () => true): Settlement[] {
    return this.claims.filter(only).map(({ at: _at, ...c }) => ({
      ...c,
      payer: c.payer ?? this.channels.get(c.channelId)?.payer ?? null,
      explorer: explorerBase && c.tx ? `${explorerBase}${c.tx}` : '',
    }));
  }

  /** The report but `settlementPolicy`: the claim settings are configuration, not something events tell. */
  report(now: number, explorerBase: string | null): Omit<RevenueReport, 'settlementPolicy'> {
    const { total, window } = this;
    const size = BUCKET_MS[window.bucket];
    const ranked = [...this.resources].sort(([a, x], [b, y]) =>
      x.earned !== y.earned ? (x.earned > y.earned ? -1 : 1) : a < b ? -1 : 1,
    );
    const rest = ranked.slice(MAX_LISTED_RESOURCES).map(([, r]) => r);
    const listed = this.settlements(explorerBase, (c) => this.inRange(c.at)).reverse();
    const all = [...this.channels.values()];
    const losses = lossReport(all.filter((c) => c.closedAt !== null));
    const lost = BigInt(losses.total);
    return {
      payTo: this.payTo,
      asOf: iso(now),
      totals: {
        earned: formatUnits(total.earned),
        restored: formatUnits(total.restored),
        settled: formatUnits(total.settled),
        receivable: formatUnits(total.earned - total.settled - lost),
        lost: losses.total,
        payments: total.payments,
        settlements: total.settlements,
        paymentsPerSettlement: paymentsPerSettlement(this.claims),
        buyers: this.buyers.size,
      },
      window: {
        bucket: window.bucket,
        days: window.days,
        start: iso(window.start),
        end: iso(window.end),
        ...binJson(this.inWindow),
      },
      byResource: ranked
        .slice(0, MAX_LISTED_RESOURCES)
        .map(([resource, r]) => ({ resource, earned: formatUnits(r.earned), payments: r.payments })),
      otherResources: {
        resources: rest.length,
        earned: formatUnits(rest.reduce((s, r) => s + r.earned, 0n)),
        payments: rest.reduce((s, r) => s + r.payments, 0),
      },
      series: this.series.map((b, i) => ({ start: iso(window.start + i * size), ...binJson(b) })),
      receivables: agingReport(
        all.filter((c) => c.closedAt === null),
        now,
      ),
      losses,
      settlements: listed.slice(0, MAX_LISTED_SETTLEMENTS).map(settlementJson),
      settlementsTruncated: listed.length > MAX_LISTED_SETTLEMENTS,
    };
  }
}

/**
 * What a settlement covered, on average: the payments each claim settled (not all payments ever
 * accepted ÷ claims, which counts payments no claim covers yet). Claims whose coverage is unknown
 * (made by someone else) are left out; null when none is known. A ratio of counts: two decimals.
 */
function paymentsPerSettlement(claims: readonly Claim[]): number | null {
  const known = claims.flatMap((c) => (c.paymentsCovered === null ? [] : [c.paymentsCovered]));
  return known.length === 0 ? null : Math.round((known.reduce((a, b) => a + b, 0) * 100) / known.length) / 100;
}

/** One channel of the seller: what it earned and settled, and the accepted vouchers no claim covers yet. */
class ChannelTally {
  payer: string | null = null;
  /** When the ledger closed the channel (the first channel.closed event), or null while open. */
  closedAt: string | null = null;
  earned = 0n;
  settled = 0n;
  private claimedCumulative = 0n;
  /** The highest cumulative accepted (or, past it, claimed): what the channel has earned up to. */
  private earnedCumulative = 0n;
  /** Oldest first; cumulatives only grow on a channel, so a claim covers a prefix. */
  private uncovered: { cumulative: bigint; at: number }[] = [];
  private lastAt: number | null = null;

  constructor(readonly id: string) {}

  accept(payer: string, cumulative: bigint, delta: bigint, at: number): void {
    this.payer ??= payer;
    this.earned += delta;
    this.lastAt = at;
    if (cumulative > this.earnedCumulative) this.earnedCumulative = cumulative;
    if (cumulative > this.claimedCumulative) this.uncovered.push({ cumulative, at });
  }

  /**
   * A claim; returns what it settled beyond the vouchers on record (restored), which the channel
   * earned too: vouchers whose records a lost or restored store no longer holds, or one the payee
   * claimed without passing it through /verify. The ledger paid it, so it was earned.
   */
  claim(cumulative: bigint, amount: bigint): bigint {
    this.settled += amount;
    const restored = cumulative > this.earnedCumulative ? cumulative - this.earnedCumulative : 0n;
    if (restored > 0n) {
      this.earned += restored;
      this.earnedCumulative = cumulative;
    }
    if (cumulative <= this.claimedCumulative) return restored;
    this.claimedCumulative = cumulative;
    const firstOpen = this.uncovered.findIndex((v) => v.cumulative > cumulative);
    this.uncovered = firstOpen < 0 ? [] : this.uncovered.slice(firstOpen);
    return restored;
  }

  /** When the oldest voucher not yet covered by a claim was accepted. */
  oldestUnclaimedAt(): number | null {
    return this.uncovered[0]?.at ?? this.lastAt;
  }
}

/** Lower bounds inclusive: exactly one hour old is `1h-24h`. */
export function agingBucket(ageMs: number): AgingBucket {
  if (ageMs < HOUR_MS) return '<1h';
  if (ageMs < DAY_MS) return '1h-24h';
  if (ageMs < 7 * DAY_MS) return '1d-7d';
  return '>7d';
}

/**
 * Channels owing the seller something (earned − settled > 0), oldest first. Their sum is the
 * receivable: a claim that settled more than the vouchers on record counts the difference as earned
 * (ChannelTally.claim), so no channel owes less than nothing.
 */
function agingReport(channels: readonly ChannelTally[], now: number): AgingReport {
  const owing = channels
    .filter((c) => c.earned > c.settled)
    .map((c) => ({ c, amount: c.earned - c.settled, at: c.oldestUnclaimedAt() }))
    .sort((x, y) => (x.at ?? now) - (y.at ?? now) || (x.c.id < y.c.id ? -1 : 1));
  const rows = owing.map(({ c, amount, at }) => {
    const ageMs = Math.max(0, now - (at ?? now));
    return {
      amount,
      row: {
        channelId: c.id,
        payer: c.payer,
        status: c.closedAt === null ? ('open' as const) : ('closed' as const),
        amount: formatUnits(amount),
        oldestUnclaimedAt: at === null ? null : iso(at),
        ageSeconds: Math.floor(ageMs / 1000),
        bucket: agingBucket(ageMs),
      },
    };
  });
  const buckets = AGING_BUCKETS.map((bucket) => {
    const inBucket = rows.filter((r) => r.row.bucket === bucket);
    return { bucket, amount: formatUnits(inBucket.reduce((s, r) => s + r.amount, 0n)), channels: inBucket.length };
  });
  return { total: formatUnits(rows.reduce((s, r) => s + r.amount, 0n)), buckets, channels: rows.map((r) => r.row) };
}

/** Closed channels whose accepted vouchers were not all claimed: what they owe can never be paid. */
function lossReport(closed: readonly ChannelTally[]): LossReport {
  const owing = closed
    .filter((c) => c.earned > c.settled)
    .sort((x, y) => (x.closedAt! < y.closedAt! ? 1 : x.closedAt! > y.closedAt! ? -1 : x.id < y.id ? -1 : 1));
  const channels = owing.map((c) => ({
    channelId: c.id,
    payer: c.payer,
    amount: formatUnits(c.earned - c.settled),
    closedAt: c.closedAt!,
  }));
  return {
    total: formatUnits(owing.reduce((s, c) => s + c.earned - c.settled, 0n)),
    channels: channels.slice(0, MAX_LISTED_SETTLEMENTS),
    truncated: channels.length > MAX_LISTED_SETTLEMENTS,
  };
}

export function settlementJson(s: Settlement): RevenueSettlement {
  return { ...s, amount: formatUnits(s.amount) };
}

export const SETTLEMENTS_CSV_COLUMNS = [
  'settled_at',
  'tx',
  'channel_id',
  'payer',
  'amount',
  'payments_covered',
  'explorer',
];

/** docs/protocol.md#channels-and-records: a header row, then one row per settlement; amounts in asset units (7 decimals). */
export function settlementsCsv(settlements: readonly Settlement[]): string {
  const rows = settlements.map((s) => [
    s.settledAt,
    s.tx,
    s.channelId,
    s.payer ?? '',
    displayAmount(s.amount),
    s.paymentsCovered?.toString() ?? '',
    s.explorer,
  ]);
  return toCsv([SETTLEMENTS_CSV_COLUMNS, ...rows]);
}

/** RFC 4180: CRLF after every record; a field holding a comma, quote or line break is quoted, quotes doubled. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function binJson(b: Bin): RevenueSums {
  return {
    earned: formatUnits(b.earned),
    settled: formatUnits(b.settled),
    payments: b.payments,
    settlements: b.settlements,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

// Event data is the facilitator's own JSON: a malformed row is a bug worth a 500 INTERNAL, not a
// silent gap in someone's revenue.
function text(e: StoredEvent, key: string): string {
  const v = e.data[key];
  if (typeof v !== 'string' || v === '') throw new TypeError(`event ${e.id} (${e.type}) has no ${key}`);
  return v;
}

function optionalText(e: StoredEvent, key: string): string {
  const v = e.data[key];
  if (typeof v !== 'string') throw new TypeError(`event ${e.id} (${e.type}) has no ${key}`);
  return v;
}

function units(e: StoredEvent, key: string): bigint {
  return parseUnits(text(e, key));
}

function timeOf(e: StoredEvent): number {
  const at = Date.parse(e.ts);
  if (Number.isNaN(at)) throw new TypeError(`event ${e.id} has an unreadable ts: ${e.ts}`);
  return at;
}
