// Whether this instance can write to its store, for /health and for leadership (before, /health
// said ok while every commit failed, or while every write hung, and a leader that could not write
// kept the lock). Every write's outcome is watched: a failure marks the store
// unwritable until a write succeeds again, and so does a write still waiting after `stallMs`.
// /health asks for a small probe write while the store is marked unwritable, at most one at a
// time, so the mark clears once the fault is gone even without traffic; leadership asks for one
// (check()) on every poll, bounded in time. Writes waiting (`pending`) and each write's time
// (`onWrite`) are there for the metrics.
import type { Store } from '../store/port.js';
import { isStoreUnavailable } from '../store/faults.js';

const PROBE_KEY = 'health.probe';
/** A write still waiting after this long means the store cannot write now (its lock timeout is 5 s). */
export const DEFAULT_STALL_MS = 6_000;

/**
 * Runs after every write settles: how long it took from the call (waiting for its batch included),
 * in ms, and whether it failed (threw: nothing of it acknowledged).
 */
export type WriteHook = (event: { ms: number; failed: boolean }) => void;

export class StoreHealth {
  private failedAt: number | null = null;
  private okAt: number | null = null;
  private probing = false;
  /** Writes in flight by start time, oldest first (a Map keeps insertion order). */
  private readonly inFlight = new Map<number, number>();
  private nextWrite = 0;
  readonly #written: WriteHook[] = [];

  constructor(
    private readonly now: () => number = () => Date.now(),
    private readonly stallMs = DEFAULT_STALL_MS,
  ) {}

  onWrite(hook: WriteHook): void {
    this.#written.push(hook);
  }

  /** Writes called and not yet settled: waiting for their batch, or in it. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** `store`, with every write's outcome recorded. */
  watch<S extends Store>(store: S): S {
    const write = async (...args: Parameters<Store['write']>) => {
      const id = this.nextWrite++;
      const started = performance.now();
      let failed = true;
      this.inFlight.set(id, this.now());
      try {
        const result = await store.write(...args);
        this.okAt = this.now();
        failed = false;
        return result;
      } catch (err) {
        if (isStoreUnavailable(err)) this.failedAt = this.now();
        throw err;
      } finally {
        this.inFlight.delete(id);
        if (this.#written.length > 0) this.notify({ ms: performance.now() - started, failed });
      }
    };
    const bound = new Map<PropertyKey, unknown>([['write', write]]);
    return new Proxy(store, {
      get: (target, prop) => {
        if (bound.has(prop)) return bound.get(prop);
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const method = (value as (...a: unknown[]) => unknown).bind(target);
        bound.set(prop, method);
        return method;
      },
    });
  }

  /** False from a failed write until a write succeeds, and while a write has waited past `stallMs`. */
  get writable(): boolean {
    const oldest = this.inFlight.values().next();
    if (!oldest.done && this.now() - oldest.value > this.stallMs) return false;
    return this.failedAt === null || (this.okAt !== null && this.okAt >= this.failedAt);
  }

  /** A hook that throws changes nothing of the write, which has settled. */
  private notify(event: Parameters<WriteHook>[0]): void {
    for (const hook of this.#written) {
      try {
        hook(event);
      } catch {
        // the write's caller has its answer; a hook's failure is not the store's
      }
    }
  }

  /** While unwritable, tries one small write (in the background) to learn whether it still is. */
  probe(store: Store): void {
    if (this.writable || this.probing) return;
    this.probing = true;
    store
      .write([{ op: 'meta.set', key: PROBE_KEY, value: new Date(this.now()).toISOString() }])
      .catch(() => undefined)
      .finally(() => {
        this.probing = false;
      });
  }

  /** Whether a small write commits within `timeoutMs` now (`store`: the watched store). */
  async check(store: Store, timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const write = store.write([{ op: 'meta.set', key: PROBE_KEY, value: new Date(this.now()).toISOString() }]).then(
      () => true,
      () => false,
    );
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([write, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
