// Records verified payments in the discovery catalog off the voucher's hot path. A `catalog.record`
// in every voucher's commit costs a third of the store's voucher throughput (measured: SQLite 15.3k
// → 10.6k/s, PostgreSQL 5.1k → 2.6k/s), so payments are tallied in memory per listing and written
// every FLUSH_MS: per listing, one record per distinct payer carrying its count and the latest
// terms. A crash loses at most the last interval's counts — the catalog is an index of what sells,
// not money; the payments themselves are in the audit ledger. The tally is bounded: past
// MAX_LISTINGS pending listings it flushes at once, and drops (and counts) what exceeds twice that.
import type { PaymentRequirements, Receipt } from '@svc/core';
import type { Store, WriteOp } from '../store/port.js';
import type { Listing } from './catalog.js';

export const CATALOG_FLUSH_MS = 1000;
const MAX_LISTINGS = 10_000;
/** Distinct payers tallied per listing per flush; more payments are counted under one of them. */
const MAX_PAYERS = 1000;

interface Tally {
  resource: string;
  payTo: string;
  latest: { accepts: unknown[]; bazaar: Record<string, unknown>; description: string; mimeType: string };
  firstAt: string;
  lastAt: string;
  payers: Map<string, number>;
}

export interface CatalogLog {
  warn(obj: object, msg: string): void;
}

export class CatalogRecorder {
  private pending = new Map<string, Tally>();
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  /** Payments not recorded because the tally was full. */
  dropped = 0;

  constructor(
    private readonly store: Store,
    private readonly log: CatalogLog,
    private readonly flushMs = CATALOG_FLUSH_MS,
  ) {}

  /** Tallies one accepted payment (not a replayed answer); self-payments list nothing. */
  record(listing: Listing, requirements: PaymentRequirements, receipt: Receipt): void {
    if (receipt.payer === receipt.payee || requirements.payTo !== receipt.payee) return;
    const key = `${listing.url}\u0000${receipt.payee}`;
    let tally = this.pending.get(key);
    if (!tally) {
      if (this.pending.size >= 2 * MAX_LISTINGS) {
        this.dropped++;
        return;
      }
      tally = {
        resource: listing.url,
        payTo: receipt.payee,
        latest: terms(listing, requirements),
        firstAt: receipt.ts,
        lastAt: receipt.ts,
        payers: new Map(),
      };
      this.pending.set(key, tally);
      if (this.pending.size >= MAX_LISTINGS) void this.flush();
    }
    if (receipt.ts >= tally.lastAt) {
      tally.latest = terms(listing, requirements);
      tally.lastAt = receipt.ts;
    }
    const payer =
      tally.payers.has(receipt.payer) || tally.payers.size < MAX_PAYERS
        ? receipt.payer
        : tally.payers.keys().next().value!;
    tally.payers.set(payer, (tally.payers.get(payer) ?? 0) + 1);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Writes what is pending (after any flush under way): each listing in its own call. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    await Promise.all(
      batch.map(async (tally) => {
        try {
          const result = await this.store.write(opsOf(tally));
          if (!result.ok)
            this.log.warn(
              { resource: tally.resource, payTo: tally.payTo, reason: result.reason },
              'the store refused a catalog listing',
            );
        } catch (err) {
          this.log.warn({ err, resource: tally.resource, payTo: tally.payTo }, 'could not record a catalog listing');
        }
      }),
    );
  }
}

function terms(listing: Listing, requirements: PaymentRequirements): Tally['latest'] {
  return {
    accepts: [requirements],
    bazaar: listing.bazaar,
    description: listing.description,
    mimeType: listing.mimeType,
  };
}

/** One record per payer; the first carries the first payment's time (firstSeen of a new listing), the last the latest. */
function opsOf(tally: Tally): WriteOp[] {
  const payers = [...tally.payers.entries()];
  return payers.map(([payer, payments], i) => ({
    op: 'catalog.record',
    resource: tally.resource,
    payTo: tally.payTo,
    payer,
    payments,
    ...tally.latest,
    at: i === payers.length - 1 ? tally.lastAt : tally.firstAt,
  }));
}
