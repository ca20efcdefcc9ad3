// A window of recent verification latencies for /stats (median) and the bench (p50/p99).
const WINDOW = 4096;

export class LatencyWindow {
  private readonly samples = new Float64Array(WINDOW);
  private count = 0;

  record(ms: number): void {
    this.samples[this.count % WINDOW] = ms;
    this.count++;
  }

  quantile(q: number): number | null {
    const n = Math.min(this.count, WINDOW);
    if (n === 0) return null;
    const sorted = Array.from(this.samples.subarray(0, n)).sort((a, b) => a - b);
    return sorted[Math.min(n - 1, Math.floor(q * n))] ?? null;
  }
}
