// The credit pool's history for GET /float: every FLOAT_SAMPLE_SECONDS the pool is read from the
// ledger (a read, never a transaction) and a sample kept — share price, size, lent, utilization.
// The last 500 samples live in the store (meta `float.history`), so a restart loses none of them.
import type { PoolState } from '@svc/ledger';
import { formatUnits } from '@svc/core';
import type { FloatSample } from '@svc/core';
import type { Store } from '../store/port.js';
import type { Clock } from './clock.js';

export const FLOAT_HISTORY_MAX = 500;
const META_KEY = 'float.history';

export interface FloatLog {
  warn(obj: object, msg: string): void;
}

export class FloatHistory {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly pool: () => Promise<PoolState | null>,
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly log: FloatLog,
  ) {}

  /** Samples now, then every interval. */
  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Takes one sample (a pass already under way is shared). */
  tick(): Promise<void> {
    this.running ??= this.sample()
      .catch((err: unknown) => this.log.warn({ err }, 'could not sample the credit pool'))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** The newest `count` samples, oldest first. */
  async recent(count: number): Promise<FloatSample[]> {
    const all = await this.load();
    return all.slice(Math.max(0, all.length - count));
  }

  private async sample(): Promise<void> {
    const pool = await this.pool();
    if (!pool) return;
    const samples = await this.load();
    samples.push({
      at: new Date(this.clock.now()).toISOString(),
      sharePrice: formatUnits(pool.sharePrice),
      size: formatUnits(pool.size),
      lent: formatUnits(pool.lent),
      utilizationBps: pool.utilizationBps,
    });
    const kept = samples.slice(Math.max(0, samples.length - FLOAT_HISTORY_MAX));
    const result = await this.store.write([{ op: 'meta.set', key: META_KEY, value: JSON.stringify(kept) }]);
    if (!result.ok) throw new Error(`the store refused the float history (${result.reason})`);
  }

  private async load(): Promise<FloatSample[]> {
    const raw = await this.store.getMeta(META_KEY);
    if (raw === null) return [];
    try {
      const parsed: unknown = JSON.parse(raw);
      return Array.isArray(parsed) ? (parsed as FloatSample[]) : [];
    } catch {
      return [];
    }
  }
}
