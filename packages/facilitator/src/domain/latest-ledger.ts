// The facilitator's view of the ledger's time. The verifier checks expiry on every voucher, so it
// must not cost a ledger call per voucher: the latest ledger is read in the background (every
// instance reads it; the watcher too) and `current` is estimated from it.
//
// A reading that stops moving — the ledger or its RPC unreachable, or answering with a ledger that
// no longer advances — must not stop time for the facilitator (before, vouchers were accepted
// past expiry while the ledger was down, and the payer took the refund as it came back). So
// `current` is a conservative estimate: the last value seen to change, plus the ledgers that could
// have closed since at the fastest pace the network closes them. It is never below the ledger's
// real time by more than the poll delay, and the safety margin covers that.
import type { Ledger } from '@svc/ledger';

/** A ledger may close this much faster than its nominal pace (Stellar targets 5 s; a few close sooner). */
const FASTEST_PACE = 0.9;

/** A reading: the ledger, and when (monotonic ms) it was first seen at that value. */
interface Seen {
  ledger: number;
  at: number;
}

/** A reading persisted across restarts, with wall-clock time. */
export interface SavedLedgerTime {
  ledger: number;
  wallMs: number;
}

export class LatestLedger {
  private seen: Seen | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** When the last refresh succeeded (monotonic ms), for /health. */
  private reachedAt: number | null = null;

  constructor(
    private readonly ledger: Ledger,
    private readonly ledgerSeconds: number,
    private readonly monotonic: () => number = () => performance.now(),
  ) {}

  /** Whether any reading exists (live, or restored from the last run). */
  get known(): boolean {
    return this.seen !== null;
  }

  /** The latest ledger read from the ledger (0 before the first reading). */
  get latestLedger(): number {
    return this.seen?.ledger ?? 0;
  }

  /** The conservative estimate of the ledger's current sequence (see the header). */
  get currentLedger(): number {
    if (!this.seen) return 0;
    const elapsed = Math.max(0, this.monotonic() - this.seen.at);
    return this.seen.ledger + Math.ceil(elapsed / (this.ledgerSeconds * 1000 * FASTEST_PACE));
  }

  /** Milliseconds since the ledger last answered; null if it never did in this process. */
  get silentForMs(): number | null {
    return this.reachedAt === null ? null : this.monotonic() - this.reachedAt;
  }

  /** Reads the latest ledger; throws when the ledger does not answer. */
  async refresh(): Promise<number> {
    const latest = await this.ledger.latestLedger();
    const now = this.monotonic();
    this.reachedAt = now;
    // Time is rebased only when the ledger is seen moving: a value that stays put keeps its age.
    if (!this.seen || latest !== this.seen.ledger) this.seen = { ledger: latest, at: now };
    return latest;
  }

  /** Starts from a reading saved by an earlier run (when the ledger does not answer at start). */
  restore(saved: SavedLedgerTime, wallNow: number): void {
    if (this.seen) return;
    const age = Math.max(0, wallNow - saved.wallMs);
    this.seen = { ledger: saved.ledger, at: this.monotonic() - age };
  }

  /** The reading to persist, with wall-clock time. */
  save(wallNow: number): SavedLedgerTime | null {
    if (!this.seen) return null;
    return { ledger: this.seen.ledger, wallMs: wallNow - (this.monotonic() - this.seen.at) };
  }

  /**
   * Refreshes every `pollMs` in the background (a failed read is left to the estimate), and after a
   * successful read at most every `saveEveryMs` calls `save` (the reading, kept for a restart).
   */
  start(options: { pollMs: number; saveEveryMs: number; save(): Promise<void> }): void {
    if (this.timer) return;
    let savedAt = -Infinity;
    this.timer = setInterval(() => {
      void this.refresh().then(
        async () => {
          if (this.monotonic() - savedAt < options.saveEveryMs) return;
          savedAt = this.monotonic();
          await options.save().catch(() => undefined);
        },
        () => undefined,
      );
    }, options.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
