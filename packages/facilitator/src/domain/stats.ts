// GET /stats (docs/protocol.md#channels-and-records). Counted once from the audit ledger at start, then kept current from
// the event bus — every instance sees every event, so every instance answers the same.
import type { StatsView } from '@svc/core';
import type { Bus } from '../bus/port.js';
import type { Store, StoredEvent } from '../store/port.js';
import type { LatencyWindow } from './latency.js';

const PAGE = 1000;

export class Stats {
  private accepted = 0;
  private rejected = 0;
  /** Claims that say how many vouchers they covered, and the sum of those. */
  private claims = 0;
  private covered = 0;
  private chainTx = 0;
  private volume = 0n;
  private lastId = 0;
  /** Live events that arrive while the ledger so far is being read. */
  private early: StoredEvent[] | null = [];

  constructor(
    private readonly store: Store,
    private readonly latency: LatencyWindow,
    private readonly ledgerSeconds: number,
  ) {}

  /** Reads the ledger so far, then follows the bus (events already counted are skipped by id). */
  async start(bus: Bus): Promise<void> {
    bus.subscribe((e) => (this.early ? this.early.push(e) : this.count(e)));
    for (;;) {
      const page = await this.store.events({ after: this.lastId, limit: PAGE });
      for (const e of page) this.count(e);
      if (page.length < PAGE) break;
    }
    const early = this.early ?? [];
    this.early = null;
    for (const e of early) this.count(e);
  }

  async view(): Promise<StatsView> {
    const channelsOpen = await this.store.countChannels({ status: 'open' });
    const median = this.latency.quantile(0.5);
    return {
      vouchersAccepted: this.accepted,
      vouchersRejected: this.rejected,
      chainTxCount: this.chainTx,
      volume: this.volume.toString(),
      channelsOpen,
      medianVerifyLatencyMs: median === null ? null : Math.round(median * 100) / 100,
      // What each claim covered (not accepted ÷ claims: vouchers no claim covers yet would count).
      vouchersPerClaim: this.claims === 0 ? null : Math.round((this.covered / this.claims) * 10) / 10,
      // The same payments as one on-chain transfer each, each waiting for a ledger to close.
      exactEquivalent: { txCount: this.accepted, seconds: this.accepted * this.ledgerSeconds },
    };
  }

  private claimed(vouchersCovered: unknown): void {
    // A claim made by someone else (seen by the ledger watcher) may not know what it covered.
    if (typeof vouchersCovered !== 'number' || !Number.isSafeInteger(vouchersCovered)) return;
    this.claims++;
    this.covered += vouchersCovered;
  }

  private count(e: StoredEvent): void {
    if (e.id <= this.lastId) return;
    this.lastId = e.id;
    if (e.type === 'voucher.accepted') {
      this.accepted++;
      const delta = e.data['delta'];
      if (typeof delta === 'string' && /^[0-9]{1,39}$/.test(delta)) this.volume += BigInt(delta);
    } else if (e.type === 'voucher.rejected') {
      this.rejected++;
    } else if (e.type === 'channel.claimed') {
      this.claimed(e.data['vouchersCovered']);
    }
    if (typeof e.data['tx'] === 'string' && e.data['tx'] !== '') this.chainTx++;
  }
}
