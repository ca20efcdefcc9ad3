// A claim the ledger paid is recorded as a settlement once, even when the facilitator that sent it
// could not record it. Deterministic, as reported: 5 vouchers on a channel, a session
// holds LOCK TABLE idempotency past the lock timeout, and POST /channels/:id/claim goes to the
// leader. Before, the claim answered 503 "send the same request again" although the ledger paid
// it, the leader's watcher skipped the claim as its own and moved past it, and the settlement was
// never recorded: revenue settled 0 / receivable 5000 for good, no row in settlements.csv.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import type { PgDatabase } from '../helpers/pg.js';

const enabled = await pgEnabled();
const LOCK_TIMEOUT_MS = 1000;

describe.runIf(enabled)('a claim paid on the ledger while the store cannot record it', () => {
  let db: PgDatabase;
  let ledger: LedgerServer;
  let ledgerDir: string;
  let h: Harness;
  const payTo = randomKeypair().address;

  beforeAll(async () => {
    db = await createPgDatabase();
    ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-claim-ledger-'));
    ledger = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    h = await startHarness({
      DATABASE_URL: db.url,
      LEDGER_URL: ledger.url,
      PG_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
      FACILITATOR_SECRET: randomBytes(32).toString('hex'),
      CLAIM_INTERVAL_SECONDS: '3600',
      MANUAL_CLAIM_MIN: '1',
      IP_RATE_LIMIT_PER_MINUTE: '0',
      DEMO: 'off',
    });
  });

  afterAll(async () => {
    await h?.close();
    await ledger?.close();
    await db?.drop();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('answers that the ledger paid it (no resend), and records it once when the store answers again', async () => {
    const deadline = Date.now() + 10_000;
    while (!h.f.leadership.isLeader && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(h.f.leadership.isLeader).toBe(true);
    const buyer = await h.buyer({ payee: payTo });
    const terms = h.requirements({ payTo, amount: '1000' });
    for (let i = 1; i <= 5; i++)
      expect((await h.verify(buyer.signer.sign(1000n * BigInt(i)), terms)).body['isValid']).toBe(true);

    const locker = postgres(db.url, { max: 1, onnotice: () => undefined });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holding = locker.begin(async (tx) => {
      await tx.unsafe('LOCK TABLE idempotency IN ACCESS EXCLUSIVE MODE');
      locked();
      await released;
    });
    await isLocked;
    const claim = await fetch(`${h.url}/channels/${buyer.channelId}/claim`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const answer = (await claim.json()) as Record<string, unknown>;
    expect(claim.status).toBe(503);
    expect(claim.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(String(answer['message'])).toMatch(/ledger paid the claim.*Do not send the claim again/);
    expect(answer['tx']).toMatch(/^[0-9a-f]{64}$/);
    const onLedger = (await (await fetch(`${ledger.url}/channels/${buyer.channelId}`)).json()) as Record<
      string,
      unknown
    >;
    expect(onLedger['claimed']).toBe('5000');

    // Meanwhile this instance cannot write: /health says so with a 503 (a load balancer sends
    // payments elsewhere), and it lets leadership go, so a healthy instance would lead.
    const health = async () => {
      const res = await fetch(`${h.url}/health`);
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as Record<string, unknown>,
      };
    };
    let during = await health();
    const by = Date.now() + 8_000;
    while ((during.status !== 503 || during.body['leader'] !== false) && Date.now() < by) {
      await new Promise((r) => setTimeout(r, 100));
      during = await health();
    }
    expect(during).toMatchObject({ status: 503, retryAfter: '1', body: { storeWritable: false, leader: false } });
    release();
    await holding;
    await locker.end({ timeout: 5 });

    // Recorded from the ledger's event, once, with the vouchers it covered.
    const until = Date.now() + 10_000;
    let totals: Record<string, unknown> = {};
    while (Date.now() < until) {
      totals = (
        (await (await fetch(`${h.url}/sellers/${payTo}/revenue`)).json()) as { totals: Record<string, unknown> }
      ).totals;
      if (totals['settled'] === '5000') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(totals).toMatchObject({ earned: '5000', settled: '5000', receivable: '0', settlements: 1 });
    const claimed = await h.f.store.events({
      channelId: buyer.channelId,
      types: ['channel.claimed'],
      limit: 10,
    });
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.data).toMatchObject({
      amount: '5000',
      cumulative: '5000',
      vouchersCovered: 5,
      tx: answer['tx'],
    });
    const csv = await (await fetch(`${h.url}/sellers/${payTo}/settlements.csv`)).text();
    expect(csv.trim().split('\n')).toHaveLength(2);
    expect(csv).toContain(String(answer['tx']));
    expect(
      ((await (await fetch(`${h.url}/channels/${buyer.channelId}`)).json()) as Record<string, unknown>)['claimed'],
    ).toBe('5000');
    const after = Date.now() + 8_000;
    while ((await health()).body['leader'] !== true && Date.now() < after) await new Promise((r) => setTimeout(r, 100));
    expect(await health()).toMatchObject({ status: 200, body: { storeWritable: true, leader: true } });
    // A retry finds nothing left to claim, and adds no settlement.
    const again = await fetch(`${h.url}/channels/${buyer.channelId}/claim`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect([409, 429]).toContain(again.status);
    expect(await h.f.store.events({ channelId: buyer.channelId, types: ['channel.claimed'], limit: 10 })).toHaveLength(
      1,
    );
  }, 60_000);
});
