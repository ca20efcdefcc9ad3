// Rate limits through rate-limiter-flexible (spec Limits): a fixed window per key, in process
// memory for one instance, or in a backend every instance shares — Redis (ioredis) or PostgreSQL
// (the facilitator's own database). A shared backend that stops answering does not stop the
// service: each limiter falls back to an in-memory one of the same size (the library's insurance
// limiter), so limits then hold per instance until the backend is back.
//
//   const limits = await openLimiters({ kind: 'redis', url: 'redis://127.0.0.1:6379' });
//   const perIp = limits.limiter({ name: 'ip', points: 3000, seconds: 60 });
//   const wait = await perIp.take('203.0.113.7');   // null, or seconds to wait
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { reconnectBackoff } from '../store/faults.js';
import { PG_DRIVER_OPTIONS } from '../store/postgres/driver.js';
import { ReplaceablePool } from '../store/postgres/replaceable-pool.js';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

export type LimitBackend = ({ kind: 'memory' } | { kind: 'redis'; url: string } | { kind: 'postgres'; url: string }) & {
  /** Namespaces the counters, so several deployments can share one Redis or database (default `svc`). */
  prefix?: string;
};

export interface LimitSpec {
  /** Names the counter; limiters with one name count together across instances. */
  name: string;
  points: number;
  seconds: number;
}

export interface Limiter {
  /** Counts one hit for `key`; resolves null, or the whole seconds to wait when over the limit. */
  take(key: string): Promise<number | null>;
}

export interface Limiters {
  readonly backend: LimitBackend['kind'];
  limiter(spec: LimitSpec): Promise<Limiter>;
  close(): Promise<void>;
}

/** The PostgreSQL table every instance's counters share (in the database's search path). */
export const RATE_LIMIT_TABLE = 'svc_rate_limits';
/** A Redis or PostgreSQL call slower than this counts in memory instead. */
const BACKEND_TIMEOUT_MS = 1000;

export async function openLimiters(backend: LimitBackend): Promise<Limiters> {
  const prefix = backend.prefix ?? 'svc';
  const options = (spec: LimitSpec) => ({
    keyPrefix: `${prefix}:${spec.name}`,
    points: spec.points,
    duration: spec.seconds,
  });
  const memory = (spec: LimitSpec) => new RateLimiterMemory(options(spec));
  switch (backend.kind) {
    case 'memory':
      return {
        backend: 'memory',
        limiter: (spec) => Promise.resolve(wrap(memory(spec))),
        close: () => Promise.resolve(),
      };
    case 'redis': {
      // No offline queue: while Redis is unreachable a call fails at once and the insurance
      // limiter answers, rather than requests queueing behind a reconnect.
      const redis = new Redis(backend.url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: BACKEND_TIMEOUT_MS,
        lazyConnect: true,
      });
      redis.on('error', () => undefined); // reported through the limiter's fallback, not as crashes
      await redis.connect();
      return {
        backend: 'redis',
        limiter: (spec) =>
          Promise.resolve(
            wrap(new RateLimiterRedis({ storeClient: redis, ...options(spec), insuranceLimiter: memory(spec) })),
          ),
        close: async () => {
          await redis.quit().catch(() => redis.disconnect());
        },
      };
    }
    case 'postgres': {
      const open = () =>
        postgres(backend.url, {
          ...PG_DRIVER_OPTIONS,
          max: 4,
          backoff: reconnectBackoff,
          onnotice: () => undefined,
          connect_timeout: 5,
          connection: { application_name: 'svc-rate-limits', statement_timeout: BACKEND_TIMEOUT_MS },
        });
      const sql = open();
      await sql`SELECT 1`;
      // A query the driver never settles fails after its deadline, and the insurance limiter answers.
      const guarded = new ReplaceablePool(sql, open, 2 * BACKEND_TIMEOUT_MS);
      // rate-limiter-flexible speaks to a `pg`-style pool: query({ text, values }) → { rows }.
      const pool = {
        query: async (q: { text: string; values?: unknown[] }) => ({
          rows: await guarded.run((s) => s.unsafe(q.text, (q.values ?? []) as postgres.ParameterOrJSON<never>[])),
        }),
      };
      return {
        backend: 'postgres',
        limiter: (spec) =>
          new Promise<Limiter>((resolve, reject) => {
            const limiter: RateLimiterPostgres = new RateLimiterPostgres(
              {
                storeClient: pool,
                storeType: 'pool',
                tableName: RATE_LIMIT_TABLE,
                ...options(spec),
                insuranceLimiter: memory(spec),
              },
              (err?: unknown) =>
                err
                  ? reject(err instanceof Error ? err : new Error('the rate-limit table could not be created'))
                  : resolve(wrap(limiter)),
            );
          }),
        close: () => guarded.end(5),
      };
    }
  }
}

function wrap(limiter: RateLimiterAbstract): Limiter {
  return {
    async take(key) {
      try {
        await limiter.consume(key);
        return null;
      } catch (res) {
        if (res instanceof RateLimiterRes) return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
        throw res;
      }
    },
  };
}
