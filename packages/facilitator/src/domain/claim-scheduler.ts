// Settles on a clock: every interval, claims each open channel whose unclaimed amount reached the
// threshold, and — from CLAIM_EXPIRY_MARGIN_LEDGERS before expiry — whatever is unclaimed, so the
// last voucher is claimed long before the payer can take the refund. A failed claim is retried with exponential backoff.
//
// A pass first reads every due channel, then claims them MAX_CLAIMS_PER_TX to a transaction
// (Claimer.claimBatch; any payee, any scheme): near-expiry channels first, soonest expiry first —
// their last voucher is lost if the claim comes late — then the most owed, so what a pass cut
// short by an outage leaves unclaimed is the least.
import { MAX_CLAIMS_PER_TX } from '@svc/ledger';
import type { ChannelFilter, ChannelRecord, Store } from '../store/port.js';
import type { ClaimResult, Claimer } from './claimer.js';
import type { Clock } from './clock.js';
import type { LatestLedger } from './latest-ledger.js';
import { Passes } from './passes.js';

const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 5 * 60_000;
/** Open channels read at a time: thousands read at once held the event loop ~100 ms. */
const PAGE = 100;

export interface SchedulerOptions {
  intervalMs: number;
  threshold: bigint;
  expiryMarginLedgers: number;
}

/** A channel a pass claims, with what orders it. */
interface Due {
  id: bigint;
  nearExpiry: boolean;
  expiryLedger: number;
  unclaimed: bigint;
}

/** Near expiry first (soonest first), then most owed, then the older channel. */
export function claimOrder(a: Due, b: Due): number {
  if (a.nearExpiry !== b.nearExpiry) return a.nearExpiry ? -1 : 1;
  if (a.nearExpiry && a.expiryLedger !== b.expiryLedger) return a.expiryLedger - b.expiryLedger;
  if (a.unclaimed !== b.unclaimed) return a.unclaimed > b.unclaimed ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export interface SchedulerLog {
  warn(obj: object, msg: string): void;
}

export class ClaimScheduler {
  private timer: NodeJS.Timeout | null = null;
  private readonly passes = new Passes(() => this.pass());
  private readonly backoff = new Map<bigint, { failures: number; nextAt: number }>();

  constructor(
    private readonly store: Store,
    private readonly claimer: Claimer,
    private readonly latestLedger: LatestLedger,
    private readonly clock: Clock,
    private readonly options: SchedulerOptions,
    private readonly log: SchedulerLog,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.passes.ended();
  }

  /** One pass that starts after this call; concurrent callers share the next pass. */
  tick(): Promise<void> {
    return this.passes.run();
  }

  private async pass(): Promise<void> {
    const due = await this.dueChannels();
    if (!due) return;
    due.sort(claimOrder);
    for (let i = 0; i < due.length; i += MAX_CLAIMS_PER_TX) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve)); // vouchers go first
      const results = await this.claimer.claimBatch(due.slice(i, i + MAX_CLAIMS_PER_TX).map((d) => d.id));
      for (const [id, result] of results) this.settled(id, result);
    }
  }

  /** Every open channel due for a claim now; null when the store could not be read. */
  private async dueChannels(): Promise<Due[] | null> {
    const due: Due[] = [];
    let after: ChannelFilter['after'];
    for (;;) {
      let page: ChannelRecord[];
      try {
        page = await this.store.listChannels({ status: 'open', limit: PAGE, ...(after ? { after } : {}) });
      } catch (err) {
        this.log.warn({ err }, 'claim scheduler could not read channels');
        return due.length > 0 ? due : null;
      }
      for (const ch of page) {
        const d = this.claimable(ch);
        if (d) due.push(d);
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last) return due;
      after = { createdAt: last.createdAt, id: last.id };
      await new Promise<void>((resolve) => setImmediate(resolve)); // vouchers go first
    }
  }

  private claimable(ch: ChannelRecord): Due | null {
    const unclaimed = ch.charged - ch.claimed;
    if (unclaimed <= 0n || ch.lastSignature === null) return null;
    const nearExpiry = ch.expiryLedger - this.latestLedger.currentLedger <= this.options.expiryMarginLedgers;
    if (!(unclaimed >= this.options.threshold || nearExpiry) || !this.due(ch.id)) return null;
    return { id: ch.id, nearExpiry, expiryLedger: ch.expiryLedger, unclaimed };
  }

  private due(id: bigint): boolean {
    const b = this.backoff.get(id);
    return !b || this.clock.now() >= b.nextAt;
  }

  private settled(id: bigint, result: ClaimResult): void {
    if ('error' in result) this.failed(id, { err: result.error });
    else if (result.outcome.status === 'rejected') {
      const { code, codeName, tx } = result.outcome;
      this.failed(id, { code, codeName, tx });
    } else this.backoff.delete(id);
  }

  private failed(id: bigint, detail: object): void {
    const failures = (this.backoff.get(id)?.failures ?? 0) + 1;
    const delay = Math.min(BACKOFF_BASE_MS * 2 ** (failures - 1), BACKOFF_MAX_MS);
    this.backoff.set(id, { failures, nextAt: this.clock.now() + delay });
    this.log.warn({ channelId: id.toString(), failures, retryInMs: delay, ...detail }, 'claim failed; will retry');
  }
}
