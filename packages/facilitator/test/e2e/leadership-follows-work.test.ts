// Leadership follows the ability to do the work. Before, a leader whose writes hung
// kept the advisory lock on its separate leadership connection, and settlement stopped for the
// whole cluster: 5,024 payments through the healthy instance, 0 claims. Here the leader reaches
// PostgreSQL through a TCP relay that goes silent — nothing passes either way and no connection
// closes, as in a network partition — while the other instance keeps its own path to the database.
// The cut-off leader can neither write nor poll: the healthy instance must lead within the lease
// and claim what is due, and the cut-off one must say on /health that it cannot write.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import { startPgRelay } from '../helpers/pg-relay.js';
import type { PgRelay } from '../helpers/pg-relay.js';
import type { PgDatabase } from '../helpers/pg.js';

const enabled = await pgEnabled();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(enabled)('a leader cut off from its database', () => {
  let db: PgDatabase;
  let ledger: LedgerServer;
  let ledgerDir: string;
  const harnesses: Harness[] = [];
  let relay: PgRelay | undefined;

  afterAll(async () => {
    await relay?.close();
    for (const h of harnesses) await h.close().catch(() => undefined);
    await ledger?.close();
    await db?.drop();
    if (ledgerDir) fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('lets leadership go: the instance that can write leads within the lease and claims what is due', async () => {
    db = await createPgDatabase();
    ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lead-ledger-'));
    ledger = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    relay = await startPgRelay(new URL(db.url));
    const env = {
      LEDGER_URL: ledger.url,
      FACILITATOR_SECRET: randomBytes(32).toString('hex'),
      CLAIM_INTERVAL_SECONDS: '1',
      CLAIM_THRESHOLD: '1',
      PG_LOCK_TIMEOUT_MS: '1000',
      IP_RATE_LIMIT_PER_MINUTE: '0',
      DEMO: 'off',
    };
    const cutOff = await startHarness({ ...env, DATABASE_URL: relay.url });
    harnesses.push(cutOff);
    const until = Date.now() + 10_000;
    while (!cutOff.f.leadership.isLeader && Date.now() < until) await sleep(50);
    expect(cutOff.f.leadership.isLeader).toBe(true);
    const healthy = await startHarness({ ...env, DATABASE_URL: db.url });
    harnesses.push(healthy);
    await sleep(1500);
    expect(healthy.f.leadership.isLeader).toBe(false);

    const payTo = randomKeypair().address;
    relay.silence();
    const cutAt = Date.now();
    // Payments keep going through the healthy instance.
    const buyer = await healthy.buyer({ payee: payTo });
    for (let i = 1; i <= 5; i++)
      expect(
        (await healthy.verify(buyer.signer.sign(1000n * BigInt(i)), healthy.requirements({ payTo, amount: '1000' })))
          .body['isValid'],
      ).toBe(true);

    const deadline = Date.now() + 20_000;
    let claimed = '0';
    while (Date.now() < deadline) {
      claimed = String(
        ((await (await fetch(`${ledger.url}/channels/${buyer.channelId}`)).json()) as Record<string, unknown>)[
          'claimed'
        ],
      );
      if (healthy.f.leadership.isLeader && claimed === '5000') break;
      await sleep(200);
    }
    const tookMs = Date.now() - cutAt;
    expect(healthy.f.leadership.isLeader).toBe(true);
    expect(claimed).toBe('5000');
    const health = await fetch(`${cutOff.url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ storeWritable: false, leader: false });
    console.log(
      `leader cut off from PostgreSQL (no connection closed): the other instance led and claimed ${tookMs} ms later`,
    );
  }, 60_000);
});
