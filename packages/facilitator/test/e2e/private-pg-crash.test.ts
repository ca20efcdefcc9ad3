// Acknowledged means durable, also through a PostgreSQL crash.
// - The server the fault tests crash (helpers/private-pg.ts) keeps every commit it acknowledged, as
//   a correctly configured production server does: the fault tests assert that nothing
//   acknowledged is lost, and that the books agree with the ledger afterwards. It ran with
//   synchronous_commit = off, acknowledged commits still in its WAL buffers, and `pg_ctl stop -m
//   immediate` lost them (a claim recorded 50 ms before the crash vanished, and the seller's revenue
//   missed it: cluster-database-faults, 2026-11-27).
// - The facilitator's store keeps every write it acknowledged even on a server configured with
//   synchronous_commit = off (for speed, by someone else): its writer turns the setting on for its
//   own session (postgres-store.ts durableCommits). Before, 91 of 124 acknowledged writes survived.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/index.js';
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

  it('keeps every write the facilitator’s store acknowledged through a crash, even when the server’s default is synchronous_commit = off', async () => {
    const fast = await startPrivatePostgres({ synchronousCommit: 'off' });
    try {
      const store = await PostgresStore.open({ url: fast.url });
      await store.migrate();
      let acknowledged = 0;
      const until = Date.now() + 300;
      while (Date.now() < until) {
        const written = await store.write([{ op: 'meta.set', key: `ack.${acknowledged + 1}`, value: 'x' }]);
        expect(written.ok).toBe(true);
        acknowledged++;
      }
      fast.stop('immediate');
      await store.close().catch(() => undefined);
      fast.start();
      const after = await PostgresStore.open({ url: fast.url });
      try {
        let kept = 0;
        for (let i = 1; i <= acknowledged; i++) if ((await after.getMeta(`ack.${i}`)) !== null) kept++;
        expect(acknowledged).toBeGreaterThan(10);
        expect(kept).toBe(acknowledged);
      } finally {
        await after.close();
      }
    } finally {
      fast.destroy();
    }
  }, 60_000);
});
