// A data directory written by an older build keeps working: a version-1 file (before smart
// accounts and the DEX pool) gets the smart_accounts table and the DEX its reserves once; a
// version-2 file (before the credit pool) gets the pool's tables and starts with an empty pool.
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DEX_GENESIS_RESERVES, LocalLedger } from '../src/index.js';
import { LEDGER_DB_FILE, SCHEMA_VERSION } from '../src/ledger-db.js';
import { Actor, CONTRACTS, tempDir } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';
import { borrower, openLine, POOL, poolOf } from './helpers/pool.js';

const POOL_TABLES = 'DROP TABLE pool_totals; DROP TABLE pool_positions; DROP TABLE pool_lines;';

/** Turns a fresh file back into what a version-1 build left: no smart_accounts, no DEX pool, no credit pool. */
function downgradeToV1(dir: string): void {
  const db = new Database(path.join(dir, LEDGER_DB_FILE));
  db.exec(
    `${POOL_TABLES} DROP TABLE smart_accounts; DELETE FROM meta WHERE key = 'dex_genesis_reserves'; DELETE FROM balances WHERE address = '${CONTRACTS.dex}'`,
  );
  db.pragma('user_version = 1');
  db.close();
}

/** Turns a file back into what a version-2 build left: everything but the credit pool's tables. */
function downgradeToV2(dir: string): void {
  const db = new Database(path.join(dir, LEDGER_DB_FILE));
  db.exec(POOL_TABLES);
  db.pragma('user_version = 2');
  db.close();
}

function userVersion(dir: string): number {
  const db = new Database(path.join(dir, LEDGER_DB_FILE), { readonly: true });
  const version = db.pragma('user_version', { simple: true }) as number;
  db.close();
  return version;
}

describe('schema upgrade 1 → current', () => {
  it('keeps balances, seqs and events, adds smart accounts, and seeds the DEX pool exactly once', async () => {
    const tmp = tempDir();
    const clock = new FakeClock();
    let ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    const buyer = new Actor(ledger);
    await ledger.faucet(buyer.address, 5_000n);
    await buyer.send('transfer', { to: CONTRACTS.creditPool, amount: '1000' });
    const events = (await ledger.events(null, 100)).events;
    await ledger.close();
    downgradeToV1(tmp.dir);
    expect(userVersion(tmp.dir)).toBe(1);

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    expect(userVersion(tmp.dir)).toBe(SCHEMA_VERSION);
    expect(await ledger.getAccount(buyer.address)).toMatchObject({ seq: 1, balances: [{ amount: 4_000n }] });
    expect((await ledger.events(null, 100)).events).toEqual(events);
    const pool = await ledger.getAccount(CONTRACTS.dex);
    expect(new Map(pool.balances.map((b) => [b.asset, b.amount]))).toEqual(
      new Map([
        [CONTRACTS.asset, DEX_GENESIS_RESERVES.asset],
        [CONTRACTS.xlm, DEX_GENESIS_RESERVES.xlm],
      ]),
    );
    const created = await new Actor(ledger, buyer.keys).send('account.create', { owner: buyer.address, policy: null });
    expect(created.status).toBe('SUCCESS');
    await ledger.close();

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock, dexReserves: { asset: 1n, xlm: 1n } });
    expect(await ledger.getAccount(CONTRACTS.dex)).toEqual(pool);
    expect((await ledger.getAccount(String(created.result?.['address']))).account).toMatchObject({
      owner: buyer.address,
      policy: null,
    });
    await ledger.close();
    tmp.remove();
  });
});

describe('schema upgrade 2 → 3', () => {
  it('keeps smart accounts and balances, adds an empty credit pool that works and persists across reopen', async () => {
    const tmp = tempDir();
    const clock = new FakeClock();
    let ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    const [investor, owner] = [new Actor(ledger), new Actor(ledger)];
    const sa = await borrower(ledger, owner, investor.address, 20_000_000n);
    const before = await ledger.getAccount(sa.address);
    await ledger.close();
    downgradeToV2(tmp.dir);
    expect(userVersion(tmp.dir)).toBe(2);
    expect(SCHEMA_VERSION).toBe(3);

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    expect(userVersion(tmp.dir)).toBe(3);
    expect(await ledger.getAccount(sa.address)).toEqual(before);
    expect(await poolOf(ledger)).toMatchObject({ address: POOL, size: 0n, totalShares: 0n, lines: [], positions: [] });
    await ledger.faucet(investor.address, 1_000_000_000n);
    expect((await new Actor(ledger, investor.keys).send('pool.deposit', { amount: '1000000000' })).status).toBe(
      'SUCCESS',
    );
    const opened = await openLine(new Actor(ledger, owner.keys), sa.address, 100_000_000n);
    const pool = await poolOf(ledger);
    await ledger.close();

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    expect(await poolOf(ledger)).toEqual(pool);
    expect(pool.lines).toEqual([
      {
        account: sa.address,
        debt: 102_000_000n,
        value: 120_000_000n,
        healthBps: 11_764,
        liquidatable: false,
        openedAt: opened.ts,
      },
    ]);
    await ledger.close();
    tmp.remove();
  });
});
