// The books follow the ledger even when the store lost a claim's record after acknowledging it —
// as a PostgreSQL that fails over to an asynchronous standby loses its last commits, or a server
// run with synchronous_commit = off loses them in a crash (seen in cluster-database-faults,
// 2026-11-27). Before, the claimer remembered in memory that it had recorded the claim, and the
// ledger watcher trusted that memory over the store: it moved past the claim's event without
// recording it, and the seller's revenue missed the settlement for good.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { claimKeyOf } from '../../src/domain/claimer.js';
import { CURSOR_KEY } from '../../src/domain/openings.js';
import { SQLITE_FILE_NAME } from '../../src/store/open-store.js';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

describe('a claim whose record the store lost', () => {
  let ledger: LedgerServer | undefined;
  let h: Harness | undefined;
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lost-claim-ledger-'));

  afterAll(async () => {
    await h?.close();
    await ledger?.close();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('is recorded again from the ledger’s event, once, when the watcher passes it', async () => {
    ledger = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    h = await startHarness({ LEDGER_URL: ledger.url, CLAIM_INTERVAL_SECONDS: '3600', DEMO: 'off' });
    const payTo = randomKeypair().address;
    const buyer = await h.buyer({ payee: payTo });
    const terms = h.requirements({ payTo, amount: '1000' });
    for (let i = 1; i <= 3; i++)
      expect((await h.verify(buyer.signer.sign(1000n * BigInt(i)), terms)).body['isValid']).toBe(true);

    // The watcher is caught up and then held, so it meets the claim only after the store lost it.
    await h.f.watcher.tick();
    await h.f.watcher.stop();
    const store = h.f.store;
    const cursor = await store.getMeta(CURSOR_KEY);
    expect(cursor).not.toBeNull();
    const outcome = await h.f.services.claimer.claim(buyer.channelId);
    expect(outcome).toMatchObject({ status: 'claimed', amount: 3000n });
    const tx = outcome.status === 'claimed' ? outcome.tx : '';
    expect(await store.events({ channelId: buyer.channelId, types: ['channel.claimed'], limit: 10 })).toHaveLength(1);

    // The store loses the claimer's write, and the watcher's cursor is where it was before the claim.
    onTheFile(h.dataDir, (db) => {
      const ids = db.prepare(`SELECT id FROM events WHERE type = 'channel.claimed'`).pluck().all() as number[];
      for (const id of ids) {
        db.prepare('DELETE FROM event_accounts WHERE event_id = ?').run(id);
        db.prepare('DELETE FROM events WHERE id = ?').run(id);
      }
      db.prepare('DELETE FROM idempotency WHERE key = ?').run(claimKeyOf(tx, buyer.channelId, 3000n));
      db.prepare(`UPDATE channels SET claimed = '0', vouchers_claimed = 0 WHERE id = ?`).run(
        buyer.channelId.toString(),
      );
      db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(cursor, CURSOR_KEY);
    });
    h.f.services.book.invalidate(buyer.channelId);
    expect(await store.events({ channelId: buyer.channelId, types: ['channel.claimed'], limit: 10 })).toHaveLength(0);

    await h.f.watcher.tick();
    const claimed = await store.events({ channelId: buyer.channelId, types: ['channel.claimed'], limit: 10 });
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.data).toMatchObject({ amount: '3000', cumulative: '3000', tx });
    const revenue = (await (await fetch(`${h.url}/sellers/${payTo}/revenue`)).json()) as {
      totals: Record<string, unknown>;
    };
    expect(revenue.totals).toMatchObject({ earned: '3000', settled: '3000', receivable: '0', settlements: 1 });

    // And once: another pass over the same events records nothing more.
    onTheFile(h.dataDir, (db) => db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(cursor, CURSOR_KEY));
    await h.f.watcher.tick();
    expect(await store.events({ channelId: buyer.channelId, types: ['channel.claimed'], limit: 10 })).toHaveLength(1);
  }, 60_000);
});

describe('a claim_many whose records the store lost', () => {
  let ledger: LedgerServer | undefined;
  let h: Harness | undefined;
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lost-batch-ledger-'));

  afterAll(async () => {
    await h?.close();
    await ledger?.close();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('is recorded again from the ledger’s events, each channel of the transaction once', async () => {
    ledger = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    h = await startHarness({ LEDGER_URL: ledger.url, CLAIM_INTERVAL_SECONDS: '3600', DEMO: 'off' });
    const sellers = [randomKeypair().address, randomKeypair().address];
    const buyers: Buyer[] = [];
    for (let i = 0; i < 3; i++) buyers.push(await h.buyer({ payee: sellers[i % 2]! }));
    for (const [i, b] of buyers.entries()) {
      const terms = h.requirements({ payTo: b.payee, amount: '1000' });
      for (let k = 1; k <= i + 1; k++)
        expect((await h.verify(b.signer.sign(1000n * BigInt(k)), terms)).body['isValid']).toBe(true);
    }
    await h.f.watcher.tick();
    await h.f.watcher.stop();
    const store = h.f.store;
    const cursor = await store.getMeta(CURSOR_KEY);
    const results = await h.f.services.claimer.claimBatch(buyers.map((b) => b.channelId));
    const txs = new Set<string>();
    for (const [i, b] of buyers.entries()) {
      const result = results.get(b.channelId);
      expect(result).toMatchObject({ outcome: { status: 'claimed', amount: 1000n * BigInt(i + 1) } });
      if (result && 'outcome' in result && result.outcome.status === 'claimed') txs.add(result.outcome.tx);
    }
    expect(txs.size).toBe(1); // one claim_many for the three channels
    const [tx] = [...txs];

    // The store loses every write of the claim, and the watcher's cursor is where it was before it.
    onTheFile(h.dataDir, (db) => {
      const ids = db.prepare(`SELECT id FROM events WHERE type = 'channel.claimed'`).pluck().all() as number[];
      for (const id of ids) {
        db.prepare('DELETE FROM event_accounts WHERE event_id = ?').run(id);
        db.prepare('DELETE FROM events WHERE id = ?').run(id);
      }
      for (const [i, b] of buyers.entries())
        db.prepare('DELETE FROM idempotency WHERE key = ?').run(claimKeyOf(tx!, b.channelId, 1000n * BigInt(i + 1)));
      db.prepare(`UPDATE channels SET claimed = '0', vouchers_claimed = 0`).run();
      db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(cursor, CURSOR_KEY);
    });
    for (const b of buyers) h.f.services.book.invalidate(b.channelId);

    // Two passes over the same events: each channel of the transaction recorded once.
    for (let pass = 0; pass < 2; pass++) {
      onTheFile(h.dataDir, (db) => db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(cursor, CURSOR_KEY));
      await h.f.watcher.tick();
      for (const [i, b] of buyers.entries()) {
        const claimed = await store.events({ channelId: b.channelId, types: ['channel.claimed'], limit: 10 });
        expect(claimed.map((e) => e.data)).toEqual([
          expect.objectContaining({ amount: String(1000 * (i + 1)), tx, vouchersCovered: i + 1 }),
        ]);
      }
    }
    const settled = [1000n + 3000n, 2000n];
    for (const [s, seller] of sellers.entries()) {
      const revenue = (await (await fetch(`${h.url}/sellers/${seller}/revenue`)).json()) as {
        totals: Record<string, unknown>;
      };
      expect(revenue.totals).toMatchObject({
        earned: settled[s]!.toString(),
        settled: settled[s]!.toString(),
        receivable: '0',
        settlements: s === 0 ? 2 : 1,
      });
    }
  }, 60_000);
});

/** Changes the store's file behind the facilitator's back, in one transaction. */
function onTheFile(dataDir: string, change: (db: Database.Database) => unknown): void {
  const db = new Database(path.join(dataDir, SQLITE_FILE_NAME));
  try {
    db.transaction(() => change(db))();
  } finally {
    db.close();
  }
}
