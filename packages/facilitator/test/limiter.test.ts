// The rate limiter on each backend, for real: memory (per process), Redis and PostgreSQL (shared:
// two instances with their own connections count together), the fixed window's Retry-After, and a
// shared backend that stops answering falling back to an in-memory count instead of failing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLimiters } from '../src/limits/limiter.js';
import type { LimitBackend, Limiters } from '../src/limits/limiter.js';
import { createPgDatabase, pgEnabled } from './helpers/pg.js';
import type { PgDatabase } from './helpers/pg.js';
import { redisEnabled, redisTestUrl } from './helpers/redis.js';

const name = () => `test-${randomBytes(4).toString('hex')}`;

async function takeAll(
  limiters: Limiters[],
  spec: { name: string; points: number; seconds: number },
  key: string,
  hits: number,
): Promise<(number | null)[]> {
  const limiterList = await Promise.all(limiters.map((l) => l.limiter(spec)));
  const out: (number | null)[] = [];
  for (let i = 0; i < hits; i++) out.push(await limiterList[i % limiterList.length]!.take(key));
  return out;
}

describe('memory backend', () => {
  it('refuses past the points with the seconds left in the window, per key and per process', async () => {
    const a = await openLimiters({ kind: 'memory' });
    const b = await openLimiters({ kind: 'memory' });
    const spec = { name: name(), points: 3, seconds: 60 };
    const one = await a.limiter(spec);
    const results = [await one.take('k'), await one.take('k'), await one.take('k'), await one.take('k')];
    expect(results.slice(0, 3)).toEqual([null, null, null]);
    expect(results[3]).toBeGreaterThanOrEqual(59);
    expect(results[3]).toBeLessThanOrEqual(60);
    expect(await one.take('other key')).toBeNull();
    // Another process's memory is its own.
    expect(await (await b.limiter(spec)).take('k')).toBeNull();
  });
});

for (const kind of ['redis', 'postgres'] as const) {
  describe(`${kind} backend, shared by two instances`, async () => {
    const enabled = kind === 'redis' ? await redisEnabled() : await pgEnabled();
    let db: PgDatabase | null = null;
    let backend: LimitBackend;
    const open: Limiters[] = [];

    beforeAll(async () => {
      if (!enabled) return;
      if (kind === 'postgres') db = await createPgDatabase();
      backend = kind === 'redis' ? { kind, url: redisTestUrl() } : { kind, url: db!.url };
      open.push(await openLimiters(backend), await openLimiters(backend));
    });
    afterAll(async () => {
      await Promise.all(open.map((l) => l.close()));
      await db?.drop();
    });

    it.runIf(enabled)('counts hits from both instances against one budget', async () => {
      const results = await takeAll(open, { name: name(), points: 4, seconds: 60 }, '203.0.113.5', 6);
      expect(results.slice(0, 4)).toEqual([null, null, null, null]);
      for (const wait of results.slice(4)) {
        expect(wait).toBeGreaterThanOrEqual(58);
        expect(wait).toBeLessThanOrEqual(60);
      }
    });

    it.runIf(enabled)('starts a new window once the last one ends', async () => {
      const spec = { name: name(), points: 2, seconds: 1 };
      expect(await takeAll(open, spec, 'k', 3)).toEqual([null, null, 1]);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await takeAll(open, spec, 'k', 1)).toEqual([null]);
    });
  });
}

describe('a shared backend that stops answering', async () => {
  const enabled = await redisEnabled();

  it.runIf(enabled)('limits in memory instead of failing the request', async () => {
    const limiters = await openLimiters({ kind: 'redis', url: redisTestUrl() });
    try {
      const limiter = await limiters.limiter({ name: name(), points: 2, seconds: 60 });
      expect(await limiter.take('k')).toBeNull();
      // The connection goes away (as when Redis restarts): the insurance limiter counts from here.
      await limiters.close();
      expect(await limiter.take('k')).toBeNull();
      expect(await limiter.take('k')).toBeNull();
      expect(await limiter.take('k')).toBeGreaterThanOrEqual(1);
    } finally {
      await limiters.close().catch(() => undefined);
    }
  });

  it('refuses to start against a backend that is not there', async () => {
    await expect(openLimiters({ kind: 'redis', url: 'redis://127.0.0.1:1' })).rejects.toThrow();
  });
});
