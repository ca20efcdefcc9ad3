// Settles on a clock (docs/protocol.md#settlement-timing): every interval, claims each open channel
// whose unclaimed amount reached the threshold, and — from CLAIM_EXPIRY_MARGIN_LEDGERS before
// expiry — whatever is unclaimed, so the last voucher is claimed long before the payer can take
// the refund. A failed claim is retried with exponential backoff.
import type { ChannelFilter, ChannelRecord, Store } from '../store/port.js';
import type { Claimer } from './claimer.js';
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
    let after: ChannelFilter['after'];
    for (;;) {
      let page: ChannelRecord[];
      try {
        page = await this.store.listChannels({ status: 'open', limit: PAGE, ...(after ? { after } : {}) });
      } catch (err) {
        this.log.warn({ err }, 'claim scheduler could not read channels');
        return;
      }
      for (const ch of page) if (this.claimable(ch)) await this.claimOne(ch.id);
      const last = page.at(-1);
      if (page.length < PAGE || !last) return;
      after = { createdAt: last.createdAt, id: last.id };
      await new Promise<void>((resolve) => setImmediate(resolve)); // vouchers go first
    }
  }

  private claimable(ch: ChannelRecord): boolean {
    const unclaimed = ch.charged - ch.claimed;
    if (unclaimed <= 0n || ch.lastSignature === null) return false;
    const nearExpiry = ch.expiryLedger - this.latestLedger.currentLedger <= this.options.expiryMarginLedgers;
    return (unclaimed >= this.options.threshold || nearExpiry) && this.due(ch.id);
  }

  private due(id: bigint): boolean {
    const b = this.backoff.get(id);
    return !b || this.clock.now() >= b.nextAt;
  }

  private async claimOne(id: bigint): Promise<void> {
    try {
      const out = await this.claimer.claim(id);
      if (out.status === 'rejected') this.failed(id, { code: out.code, codeName: out.codeName, tx: out.tx });
      else this.backoff.delete(id);
    } catch (err) {
      this.failed(id, { err });
    }
  }

  private failed(id: bigint, detail: object): void {
    const failures = (this.backoff.get(id)?.failures ?? 0) + 1;
    const delay = Math.min(BACKOFF_BASE_MS * 2 ** (failures - 1), BACKOFF_MAX_MS);
    this.backoff.set(id, { failures, nextAt: this.clock.now() + delay });
    this.log.warn({ channelId: id.toString(), failures, retryInMs: delay, ...detail }, 'claim failed; will retry');
  }
}
