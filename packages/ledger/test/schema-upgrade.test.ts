// A data directory written before smart accounts and the DEX pool existed (schema version 1)
// keeps working: opening it adds the smart_accounts table and gives the pool its reserves once.
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DEX_GENESIS_RESERVES, LocalLedger } from '../src/index.js';
import { LEDGER_DB_FILE } from '../src/ledger-db.js';
import { Actor, CONTRACTS, tempDir } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';

/** Turns a fresh file back into what a version-1 build left: no smart_accounts, no pool. */
function downgradeToV1(dir: string): void {
  const db = new Database(path.join(dir, LEDGER_DB_FILE));
  db.exec(`DROP TABLE smart_accounts; DELETE FROM meta WHERE key = 'dex_genesis_reserves'; DELETE FROM balances WHERE address = '${CONTRACTS.dex}'`);
  db.pragma('user_version = 1');
  db.close();
}

function userVersion(dir: string): number {
  const db = new Database(path.join(dir, LEDGER_DB_FILE), { readonly: true });
  const version = db.pragma('user_version', { simple: true }) as number;
  db.close();
  return version;
}

describe('schema upgrade 1 → 2', () => {
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
    expect(userVersion(tmp.dir)).toBe(2);
    expect(await ledger.getAccount(buyer.address)).toMatchObject({ seq: 1, balances: [{ amount: 4_000n }] });
    expect((await ledger.events(null, 100)).events).toEqual(events);
    const pool = await ledger.getAccount(CONTRACTS.dex);
    expect(new Map(pool.balances.map((b) => [b.asset, b.amount]))).toEqual(new Map([[CONTRACTS.asset, DEX_GENESIS_RESERVES.asset], [CONTRACTS.xlm, DEX_GENESIS_RESERVES.xlm]]));
    const created = await new Actor(ledger, buyer.keys).send('account.create', { owner: buyer.address, policy: null });
    expect(created.status).toBe('SUCCESS');
    await ledger.close();

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock, dexReserves: { asset: 1n, xlm: 1n } });
    expect(await ledger.getAccount(CONTRACTS.dex)).toEqual(pool);
    expect((await ledger.getAccount(String(created.result?.['address']))).account).toMatchObject({ owner: buyer.address, policy: null });
    await ledger.close();
    tmp.remove();
  });
});
