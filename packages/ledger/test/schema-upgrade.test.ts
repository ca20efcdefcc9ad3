// A data directory written by an older build keeps working: a version-1 file (before smart
// accounts and the DEX pool) gets the smart_accounts table and the DEX its reserves once; a
// version-2 file (before the credit pool) gets the pool's tables and starts with an empty pool; a
// version-3 file (before the channel contract v2) keeps its channels under their sequential ids,
// with no receiver authorizer and refund nonce 0, and they work with claim_many and refund.
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { channelIdOf, randomKeypair } from '@svc/core';
import { DEX_GENESIS_RESERVES, LocalLedger } from '../src/index.js';
import { LEDGER_DB_FILE, SCHEMA_VERSION } from '../src/ledger-db.js';
import { Actor, CONTRACTS, PASS, tempDir, voucher } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';
import { borrower, openLine, POOL, poolOf } from './helpers/pool.js';

const POOL_TABLES = 'DROP TABLE pool_totals; DROP TABLE pool_positions; DROP TABLE pool_lines;';

/**
 * The channels table as versions 1–3 made it (no receiver authorizer, no refund nonce), its rows
 * renumbered 1, 2, 3… in opening order as those builds numbered them.
 */
const CHANNELS_BEFORE_V4 = `
CREATE TABLE channels_old (
  id            INTEGER PRIMARY KEY,
  payer         TEXT NOT NULL,
  payee         TEXT NOT NULL,
  asset         TEXT NOT NULL,
  deposit       TEXT NOT NULL CHECK (length(deposit) BETWEEN 1 AND 39 AND deposit NOT GLOB '*[^0-9]*'),
  claimed       TEXT NOT NULL CHECK (length(claimed) BETWEEN 1 AND 39 AND claimed NOT GLOB '*[^0-9]*'),
  voucher_key   TEXT NOT NULL,
  expiry_ledger INTEGER NOT NULL,
  open          INTEGER NOT NULL
) STRICT;
INSERT INTO channels_old (id, payer, payee, asset, deposit, claimed, voucher_key, expiry_ledger, open)
  SELECT ROW_NUMBER() OVER (ORDER BY (
           SELECT MIN(e.id) FROM events e
           WHERE e.type = 'channel.opened' AND json_extract(e.data, '$.voucherKey') = channels.voucher_key)),
         payer, payee, asset, deposit, claimed, voucher_key, expiry_ledger, open
  FROM channels;
DROP TABLE channels;
ALTER TABLE channels_old RENAME TO channels;`;

function downgrade(dir: string, version: number, sql: string): void {
  const db = new Database(path.join(dir, LEDGER_DB_FILE));
  db.exec(sql);
  db.pragma(`user_version = ${version}`);
  db.close();
}

/** Turns a fresh file back into what a version-1 build left: no smart_accounts, no DEX pool, no credit pool. */
function downgradeToV1(dir: string): void {
  downgrade(
    dir,
    1,
    `${CHANNELS_BEFORE_V4} ${POOL_TABLES} DROP TABLE smart_accounts; DELETE FROM meta WHERE key = 'dex_genesis_reserves'; DELETE FROM balances WHERE address = '${CONTRACTS.dex}'`,
  );
}

/** Turns a file back into what a version-2 build left: everything but the credit pool's tables. */
function downgradeToV2(dir: string): void {
  downgrade(dir, 2, `${CHANNELS_BEFORE_V4} ${POOL_TABLES}`);
}

/** Turns a file back into what a version-3 build left: channels of the first contract, numbered from 1. */
function downgradeToV3(dir: string): void {
  downgrade(dir, 3, CHANNELS_BEFORE_V4);
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

describe('schema upgrade 2 → current', () => {
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

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    expect(userVersion(tmp.dir)).toBe(SCHEMA_VERSION);
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

describe('schema upgrade 3 → 4', () => {
  it('keeps the channels under their sequential ids with no authorizer and nonce 0; they claim, batch and refund; new ones get derived ids', async () => {
    const tmp = tempDir();
    const clock = new FakeClock();
    let ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    const [payer, payee] = [new Actor(ledger), new Actor(ledger)];
    const keys = [randomKeypair(), randomKeypair()];
    await ledger.faucet(payer.address);
    const open = (key: (typeof keys)[number]) =>
      new Actor(ledger, payer.keys).send('channel.open', {
        payee: payee.address,
        deposit: '10000',
        voucherKey: key.publicKeyHex,
        expiryLedger: 900,
      });
    for (const key of keys) expect((await open(key)).status).toBe('SUCCESS');
    await ledger.close();
    downgradeToV3(tmp.dir);
    expect(userVersion(tmp.dir)).toBe(3);
    expect(SCHEMA_VERSION).toBe(4);

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    expect(userVersion(tmp.dir)).toBe(4);
    const [first, second] = [await ledger.getChannel(1n), await ledger.getChannel(2n)];
    expect(first).toMatchObject({
      id: 1n,
      voucherKey: keys[0]!.publicKeyHex,
      deposit: 10_000n,
      receiverAuthorizer: null,
      refundNonce: 0n,
      open: true,
    });
    expect(second).toMatchObject({
      id: 2n,
      voucherKey: keys[1]!.publicKeyHex,
      receiverAuthorizer: null,
      refundNonce: 0n,
    });
    // Their vouchers are for the ids they have.
    const claimed = await ledger.claim(
      { channelId: 1n, cumulative: 300n, signature: voucher(keys[0]!, 1n, 300n) },
      payee.keys,
    );
    expect(claimed.result).toEqual({ amount: '300' });
    const batch = await ledger.claimMany(
      [
        { channelId: 1n, maxClaimable: 500n, signature: voucher(keys[0]!, 1n, 500n), total: 500n },
        { channelId: 2n, maxClaimable: 700n, signature: voucher(keys[1]!, 2n, 700n), total: 700n },
      ],
      payee.keys,
    );
    expect(batch.result).toEqual({ amounts: ['200', '700'] });
    // No authorizer: only whole vouchers, and only the payee refunds.
    const below = await ledger.claimMany(
      [{ channelId: 2n, maxClaimable: 900n, signature: voucher(keys[1]!, 2n, 900n), total: 800n }],
      payee.keys,
    );
    expect(below).toMatchObject({ status: 'FAILED', code: 26 });
    expect((await ledger.refund({ channelId: 2n, amount: 1_000n, nonce: 0n }, payee.keys)).result).toEqual({
      refunded: '1000',
    });
    expect(await ledger.getChannel(2n)).toMatchObject({ deposit: 9_000n, claimed: 700n, refundNonce: 1n });
    // New channels get derived ids. An old channel's key is not at its derived id, so it may open
    // one more channel there: vouchers name their channel's id, so neither can pay for the other.
    for (const key of [randomKeypair(), keys[0]!]) {
      const opened = await open(key);
      expect(opened.result).toEqual({ channelId: channelIdOf(PASS, CONTRACTS.channel, key.publicKey).toString() });
    }
    expect(await ledger.getChannel(1n)).toMatchObject({ claimed: 500n, deposit: 10_000n });
    await ledger.close();

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    expect(await ledger.getChannel(2n)).toMatchObject({ refundNonce: 1n, deposit: 9_000n });
    await ledger.close();
    tmp.remove();
  });
});
