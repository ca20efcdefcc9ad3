// No pool of ours leaves the driver an unhandled rejection when a connection dies while it is being
// set up (the server crashed, or a pool whose query missed its deadline was ended): Node kills the
// process on an unhandled rejection, and an instance exited so under PostgreSQL faults
// (cluster-database-faults, 2026-11-27: "Error: write CONNECTION_DESTROYED" from a timer). The
// server here answers the connection's start-up and then nothing more — a proxy holds back every
// later byte — so the pool's read misses its deadline and ReplaceablePool ends it mid-setup.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_DRIVER_OPTIONS } from '../../src/store/postgres/driver.js';
import { PostgresWriter } from '../../src/store/postgres/postgres-batch.js';
import { ReplaceablePool } from '../../src/store/postgres/replaceable-pool.js';
import { startPgRelay } from '../helpers/pg-relay.js';
import { pgEnabled, pgTestUrl } from '../helpers/pg.js';

const enabled = await pgEnabled();

describe.runIf(enabled)('the facilitator’s postgres.js pools', () => {
  const stray: unknown[] = [];
  const onStray = (reason: unknown) => stray.push(reason);
  process.on('unhandledRejection', onStray);
  afterAll(() => {
    process.off('unhandledRejection', onStray);
  });

  it('leave no unhandled rejection when a pool is ended while its connection is being set up', async () => {
    const proxy = await startPgRelay(new URL(pgTestUrl()), {
      holdAfterStartup: true,
    });
    const open = () => postgres(proxy.url, { ...PG_DRIVER_OPTIONS, max: 1, onnotice: () => undefined });
    const pool = new ReplaceablePool(open(), open, 300);
    try {
      await expect(pool.run((sql) => sql`SELECT 1`)).rejects.toMatchObject({ code: 'READ_STALLED' });
      await new Promise((r) => setTimeout(r, 300)); // the ended pool's connection is destroyed meanwhile
      expect(stray.map((r) => (r as { code?: string }).code ?? String(r))).toEqual([]);
    } finally {
      await proxy.close();
      await pool.end(0).catch(() => undefined);
    }
  });

  it('nor when the writer’s batch misses its deadline while its connection is being set up', async () => {
    const proxy = await startPgRelay(new URL(pgTestUrl()), {
      holdAfterStartup: true,
    });
    const writer = new PostgresWriter(
      proxy.url,
      { ...PG_DRIVER_OPTIONS, onnotice: () => undefined },
      { lock: { lockClass: 1, lockName: 'driver-test' }, deadlineMs: 300 },
    );
    try {
      await expect(writer.run([[{ op: 'meta.set', key: 'k', value: 'v' }]])).rejects.toThrow(
        /did not finish the write/,
      );
      await new Promise((r) => setTimeout(r, 300));
      expect(stray.map((r) => (r as { code?: string }).code ?? String(r))).toEqual([]);
    } finally {
      await proxy.close();
      await writer.close(0).catch(() => undefined);
    }
  });
});
