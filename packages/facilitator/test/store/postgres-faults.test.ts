// PostgresStore when the database fails under it, against the real server:
// a write batch whose connection is cut mid-flight, and a lock held past the lock timeout. Nothing
// acknowledged may be missing afterwards, no promise may hang, and the process must not crash
// (postgres.js throws from a timer when a query is written to a connection it has closed).
import postgres from 'postgres';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/index.js';
import { isStoreUnavailable } from '../../src/store/faults.js';
import { createPgDatabase, pgEnabled, randomSchema } from '../helpers/pg.js';
import type { PgDatabase } from '../helpers/pg.js';

const PG = await pgEnabled();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves `p`, or 'hung' after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

describe.runIf(PG)('PostgresStore when the database fails under it', () => {
  let db: PgDatabase;
  let admin: Sql;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);

  beforeAll(async () => {
    db = await createPgDatabase();
    admin = postgres(db.url, { max: 2, onnotice: () => undefined });
    process.on('uncaughtException', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await admin?.end({ timeout: 5 });
    await db?.drop();
  });

  async function open(lockTimeoutMs?: number): Promise<PostgresStore> {
    const store = await PostgresStore.open({
      url: db.url,
      schema: randomSchema('faults'),
      max: 4,
      ...(lockTimeoutMs ? { lockTimeoutMs } : {}),
    });
    await store.migrate();
    return store;
  }

  /** Terminates every backend of this database but the admin's own, now. */
  const terminateAll = () =>
    admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${db.name} AND pid <> pg_backend_pid()`;

  it('a write batch whose connection is terminated mid-flight: every call settles, nothing acknowledged is lost, the next write commits', async () => {
    const store = await open();
    try {
      const refused: number[] = [];
      for (let round = 0; round < 3; round++) {
        const keys = Array.from({ length: 3000 }, (_v, i) => `r${round}k${i}`);
        // Long values: each batch of 64 calls is a pipeline of several hundred KB.
        const writes = keys.map((key) =>
          store.write([{ op: 'meta.set', key, value: 'x'.repeat(2000) }]).then(
            () => 'ok' as const,
            (err: unknown) => err,
          ),
        );
        await sleep(20 + round * 15);
        await terminateAll();
        const settled = await within(Promise.all(writes), 20_000);
        expect(settled, 'writes still pending 20 s after the connection was cut').not.toBe('hung');
        const outcomes = settled as unknown[];
        const failed = outcomes.filter((o) => o !== 'ok');
        for (const err of failed) expect(isStoreUnavailable(err), String(err)).toBe(true);
        refused.push(failed.length);
        // Every acknowledged write is there.
        const acknowledged = keys.filter((_k, i) => outcomes[i] === 'ok');
        const stored = await admin.unsafe(
          `SELECT count(*)::int AS n FROM ${store.schema}.meta WHERE key LIKE 'r${round}k%'`,
        );
        expect(stored[0]!['n']).toBeGreaterThanOrEqual(acknowledged.length);
        // And the store writes again.
        expect(await within(store.write([{ op: 'meta.set', key: `after${round}`, value: 'v' }]), 10_000)).toMatchObject(
          { ok: true },
        );
        expect(await store.getMeta(`after${round}`)).toBe('v');
      }
      console.log(
        `connection terminated under 3,000 queued writes, 3 times: refused ${refused.join(', ')}; the rest committed`,
      );
      // The cut landed while writes were in flight (else this test proves nothing).
      expect(refused.some((n) => n > 0)).toBe(true);
      expect(uncaught.map(String)).toEqual([]);
    } finally {
      await within(store.close(), 10_000);
    }
  }, 120_000);

  it('a lock held past the lock timeout costs each write at most about one lock timeout, not one per queued write', async () => {
    const lockTimeoutMs = 1000;
    const store = await open(lockTimeoutMs);
    const locker = postgres(db.url, { max: 1, onnotice: () => undefined });
    try {
      await store.write([{ op: 'meta.set', key: 'warm', value: 'up' }]);
      const held = locker.begin(async (tx) => {
        await tx.unsafe(`LOCK TABLE ${store.schema}.meta IN ACCESS EXCLUSIVE MODE`);
        await sleep(4000);
      });
      await sleep(100);
      // A write every 50 ms for 2.5 s, as requests keep arriving while the lock is held.
      const waits: Promise<{ ms: number; ok: boolean; unavailable: boolean }>[] = [];
      for (let i = 0; i < 50; i++) {
        const started = performance.now();
        waits.push(
          store.write([{ op: 'meta.set', key: `w${i}`, value: 'v' }]).then(
            () => ({ ms: performance.now() - started, ok: true, unavailable: false }),
            (err: unknown) => ({ ms: performance.now() - started, ok: false, unavailable: isStoreUnavailable(err) }),
          ),
        );
        await sleep(50);
      }
      const results = await Promise.all(waits);
      await held;
      const worst = Math.max(...results.map((r) => r.ms));
      console.log(
        `lock held 4 s, lock timeout ${lockTimeoutMs} ms: ${results.filter((r) => !r.ok).length} of ${results.length} writes refused, the longest wait ${Math.round(worst)} ms`,
      );
      expect(results.filter((r) => !r.ok && !r.unavailable)).toEqual([]);
      expect(results.filter((r) => !r.ok).length).toBeGreaterThan(0);
      expect(worst).toBeLessThan(lockTimeoutMs * 1.6);
      // Once the lock is gone, writes commit again.
      expect(await store.write([{ op: 'meta.set', key: 'after', value: 'v' }])).toMatchObject({ ok: true });
    } finally {
      await locker.end({ timeout: 5 });
      await within(store.close(), 10_000);
    }
  }, 60_000);
});
