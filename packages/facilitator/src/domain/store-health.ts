// Whether this instance can write to its store, for /health (issue 13.14: /health said ok while
// every commit failed). Every write's outcome is watched: a failure marks the store unwritable
// until a write succeeds again. /health asks for a small probe write while the store is marked
// unwritable, at most one at a time, so the mark clears once the fault is gone even without traffic.
import type { Store } from '../store/port.js';
import { isStoreUnavailable } from '../store/faults.js';

const PROBE_KEY = 'health.probe';

export class StoreHealth {
  private failedAt: number | null = null;
  private okAt: number | null = null;
  private probing = false;

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** `store`, with every write's outcome recorded. */
  watch<S extends Store>(store: S): S {
    const write = async (...args: Parameters<Store['write']>) => {
      try {
        const result = await store.write(...args);
        this.okAt = this.now();
        return result;
      } catch (err) {
        if (isStoreUnavailable(err)) this.failedAt = this.now();
        throw err;
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

  /** False from a failed write until a write succeeds. */
  get writable(): boolean {
    return this.failedAt === null || (this.okAt !== null && this.okAt >= this.failedAt);
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
}
