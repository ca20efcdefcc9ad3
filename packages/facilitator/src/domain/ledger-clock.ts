// The latest ledger as last read from the ledger. The verifier checks expiry against it on every
// voucher, so it must not cost a ledger call per voucher; the watcher refreshes it every tick
// (a ledger closes every few seconds, far inside the 60-ledger safety margin).
import type { Ledger } from '@svc/ledger';

export class LedgerClock {
  private latest = 0;

  constructor(private readonly ledger: Ledger) {}

  get latestLedger(): number {
    return this.latest;
  }

  async refresh(): Promise<number> {
    const latest = await this.ledger.latestLedger();
    if (latest > this.latest) this.latest = latest;
    return this.latest;
  }
}
