// A latency histogram in constant memory: logarithmic buckets 1 % wide from 10 µs to 2 minutes
// (about 1,600 counters), so a run of any length keeps no per-request samples. Quantiles are read
// as the upper edge of their bucket: at most 1 % above the true value.
//
//   const h = new Histogram();
//   h.record(12.3);
//   h.quantile(0.99); // ≈ 12.4
const MIN_MS = 0.01;
const MAX_MS = 120_000;
const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(MAX_MS / MIN_MS) / LOG_GROWTH) + 2;

export class Histogram {
  private readonly counts = new Float64Array(BUCKETS);
  count = 0;
  private sum = 0;
  private highest = 0;

  record(ms: number): void {
    const index = ms <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log(ms / MIN_MS) / LOG_GROWTH) + 1);
    this.counts[index] = (this.counts[index] ?? 0) + 1;
    this.count++;
    this.sum += ms;
    if (ms > this.highest) this.highest = ms;
  }

  /** The q-quantile (0 < q ≤ 1) in ms; 0 when empty. */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i] ?? 0;
      if (seen >= rank) return Math.min(MIN_MS * GROWTH ** i, this.highest);
    }
    return this.highest;
  }

  get mean(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }

  get max(): number {
    return this.highest;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.sum = 0;
    this.highest = 0;
  }
}
