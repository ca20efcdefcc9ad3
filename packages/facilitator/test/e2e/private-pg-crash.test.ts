// The PostgreSQL server the fault tests crash (helpers/private-pg.ts) must keep every commit it
// acknowledged through the crash, as a correctly configured production server does: the fault
// tests assert that nothing acknowledged is lost, and that the books agree with the ledger
// afterwards. With synchronous_commit = off it acknowledged commits still in its WAL buffers, and
// `pg_ctl stop -m immediate` lost them (a claim recorded 50 ms before the crash vanished, and the
// seller's revenue missed it: cluster-database-faults, 2026-11-27).
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { inCi } from '../helpers/pg.js';
import { postgresBinDir, startPrivatePostgres } from '../helpers/private-pg.js';
import type { PrivatePg } from '../helpers/private-pg.js';

const enabled = inCi() || postgresBinDir() !== null;

describe.runIf(enabled)('the private PostgreSQL of the fault tests', () => {
  let pg: PrivatePg | undefined;
  afterAll(() => pg?.destroy());

  it('keeps every commit it acknowledged through a crash (pg_ctl stop -m immediate)', async () => {
    pg = await startPrivatePostgres();
    const sql = postgres(pg.url, { max: 1, onnotice: () => undefined });
    await sql`CREATE TABLE acknowledged (n integer PRIMARY KEY)`;
    let acknowledged = 0;
    const until = Date.now() + 300;
    while (Date.now() < until) {
      await sql`INSERT INTO acknowledged (n) VALUES (${acknowledged + 1})`; // one transaction each
      acknowledged++;
    }
    pg.stop('immediate');
    await sql.end({ timeout: 0 }).catch(() => undefined);
    pg.start();
    const after = postgres(pg.url, { max: 1, onnotice: () => undefined });
    try {
      const [row] = await after<{ count: string }[]>`SELECT count(*) AS count FROM acknowledged`;
      expect(acknowledged).toBeGreaterThan(10);
      expect(Number(row!.count)).toBe(acknowledged);
    } finally {
      await after.end({ timeout: 1 });
    }
  }, 60_000);
});
