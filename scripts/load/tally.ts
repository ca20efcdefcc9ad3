// What the load saw: answers by kind, rejections by reason code, bad vouchers and how they were
// refused, and latency (total and per progress interval) in constant memory.
import { Histogram } from './histogram.js';

export type VoucherKind = 'good' | 'forged' | 'stale' | 'payee';
export type BadKind = Exclude<VoucherKind, 'good'>;

/** The reason code each deliberately bad voucher must be refused with (docs/protocol.md#errors order). */
export const EXPECTED: Record<BadKind, string> = {
  forged: 'VOUCHER_BAD_SIGNATURE',
  stale: 'VOUCHER_NOT_INCREASING',
  payee: 'WRONG_PAYEE',
};

export class Counts {
  private readonly map = new Map<string, number>();
  add(key: string, n = 1): void {
    this.map.set(key, (this.map.get(key) ?? 0) + n);
  }
  get(key: string): number | undefined {
    return this.map.get(key);
  }
  get total(): number {
    let sum = 0;
    for (const n of this.map.values()) sum += n;
    return sum;
  }
  /** "A 12, B 3", largest first; "none" when empty. */
  toString(): string {
    if (this.map.size === 0) return 'none';
    return [...this.map]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  }
}

export class Tally {
  requests = 0;
  accepted = 0;
  readonly rejected = new Counts();
  tooMany = 0;
  readonly client4xx = new Counts();
  readonly server5xx = new Counts();
  readonly network = new Counts();
  /** 200 answers that are not a verify answer. */
  oddAnswers = 0;
  readonly badSent = new Counts();
  readonly badAsExpected = new Counts();
  readonly badOtherwise = new Counts();
  readonly badAccepted = new Counts();
  /** Good vouchers refused (CHANNEL_EXHAUSTED is expected when a deposit runs out; the rest are not). */
  readonly goodRefused = new Counts();
  /** Answers lost to a network error or 5xx, later found accepted (or not) on GET /channels/:id. */
  resolvedAccepted = 0;
  resolvedNotAccepted = 0;
  readonly latency = new Histogram();
  readonly interval = new Histogram();
  private lastRequests = 0;
  private lastAt = performance.now();
  readonly startedAt = performance.now();

  answered(ms: number): void {
    this.latency.record(ms);
    this.interval.record(ms);
  }

  /** One progress line; resets the interval's latency. */
  progress(): string {
    const now = performance.now();
    const rate = ((this.requests - this.lastRequests) * 1000) / (now - this.lastAt);
    const line =
      `[${fmtSeconds(now - this.startedAt)}] ${Math.round(rate)} req/s | total ${this.requests}: accepted ${this.accepted}, ` +
      `rejected ${this.rejected.total}, 429 ${this.tooMany}, 4xx ${this.client4xx.total}, 5xx ${this.server5xx.total}, ` +
      `net ${this.network.total} | p50 ${ms(this.interval.quantile(0.5))}, p99 ${ms(this.interval.quantile(0.99))}`;
    this.lastRequests = this.requests;
    this.lastAt = now;
    this.interval.reset();
    return line;
  }

  report(elapsedMs: number): string[] {
    const s = elapsedMs / 1000;
    const l = this.latency;
    return [
      `  requests    ${this.requests} in ${s.toFixed(1)} s = ${Math.round(this.requests / s)} req/s (accepted ${Math.round(this.accepted / s)}/s)`,
      `  accepted    ${this.accepted}`,
      `  rejected    ${this.rejected.total}  (${this.rejected.toString()})`,
      `  429         ${this.tooMany}`,
      `  other 4xx   ${this.client4xx.total}  (${this.client4xx.toString()})`,
      `  5xx         ${this.server5xx.total}  (${this.server5xx.toString()})`,
      `  network     ${this.network.total}  (${this.network.toString()})`,
      `  latency     p50 ${ms(l.quantile(0.5))}, p90 ${ms(l.quantile(0.9))}, p99 ${ms(l.quantile(0.99))}, p99.9 ${ms(l.quantile(0.999))}, max ${ms(l.max)}, mean ${ms(l.mean)} (answered requests)`,
      `  bad sent    ${this.badSent.total}  (${this.badSent.toString()}); refused as expected ${this.badAsExpected.total}, otherwise ${this.badOtherwise.total} (${this.badOtherwise.toString()}), ACCEPTED ${this.badAccepted.total}`,
      `  good refused ${this.goodRefused.total}  (${this.goodRefused.toString()})`,
      ...(this.oddAnswers ? [`  odd answers ${this.oddAnswers} (200 without a verify body)`] : []),
      ...(this.resolvedAccepted + this.resolvedNotAccepted
        ? [
            `  lost answers resolved on GET /channels/:id: accepted ${this.resolvedAccepted}, not accepted ${this.resolvedNotAccepted}`,
          ]
        : []),
    ];
  }
}

export function ms(n: number): string {
  return `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`;
}

function fmtSeconds(elapsed: number): string {
  return `${(elapsed / 1000).toFixed(0).padStart(4)} s`;
}
