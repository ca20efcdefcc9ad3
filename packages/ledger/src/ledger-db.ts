// The local ledger's SQLite file: opened in WAL mode with synchronous = FULL (this is money: a
// transaction reported as applied must survive a power cut, not only a process crash). Amounts
// are non-negative i128 held as TEXT of decimal digits; a CHECK refuses anything else (a STRICT
// TEXT column alone would quietly store the float 1.5 as '1.5').
//
// Versions: 1 — accounts, balances, channels, txs, events, faucet grants; 2 — smart_accounts;
// 3 — the credit pool (pool_totals, pool_positions, pool_lines); 4 — the channel contract v2: a
// channel's receiver authorizer and refund nonce (columns added to an older file's channels, whose
// channels get none and nonce 0). Every table is created IF NOT EXISTS, so opening an older file
// adds what the later versions brought and its existing rows stay as they are (an empty pool reads
// as no row); a file of a newer version than this build is refused.
//
// Channel ids are u64 (derived from the voucher key since version 4, so any value from 1 to
// 2^64 − 1) and SQLite's INTEGER is an i64: an id is stored as the i64 of the same 64 bits
// (ledger-state.ts). The sequential ids of older files are below 2^63 and so stored as they were.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openSqlite } from './sqlite-open.js';

export const LEDGER_DB_FILE = 'ledger.sqlite';
export const SCHEMA_VERSION = 4;
const BUSY_TIMEOUT_MS = 5_000;

/** Balances, deposits and claimed amounts are never negative and fit i128 (39 digits). */
const DIGITS = (column: string) => `length(${column}) BETWEEN 1 AND 39 AND ${column} NOT GLOB '*[^0-9]*'`;
const AMOUNT = (column: string) => `${column} TEXT NOT NULL CHECK (${DIGITS(column)})`;
/** A cap of a smart account's policy: an amount, or NULL when the account has no policy. */
const OPTIONAL_AMOUNT = (column: string) => `${column} TEXT CHECK (${column} IS NULL OR (${DIGITS(column)}))`;
const POLICY_COLUMNS = ['agent_key', 'per_tx_cap', 'daily_cap', 'payees', 'expires_ledger'];
/** A u64 as decimal digits (at most 20): the refund nonce. */
const U64_TEXT = (column: string) =>
  `${column} TEXT NOT NULL DEFAULT '0' CHECK (length(${column}) BETWEEN 1 AND 20 AND ${column} NOT GLOB '*[^0-9]*')`;
/** The columns version 4 added to channels, in the order a fresh file has them. */
const CHANNEL_COLUMNS_V4 = { receiver_authorizer: 'receiver_authorizer TEXT', refund_nonce: U64_TEXT('refund_nonce') };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS accounts (
  address TEXT PRIMARY KEY,
  seq     INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS balances (
  address TEXT NOT NULL,
  asset   TEXT NOT NULL,
  ${AMOUNT('amount')},
  PRIMARY KEY (address, asset)
) STRICT;
CREATE TABLE IF NOT EXISTS channels (
  id            INTEGER PRIMARY KEY,
  payer         TEXT NOT NULL,
  payee         TEXT NOT NULL,
  asset         TEXT NOT NULL,
  ${AMOUNT('deposit')},
  ${AMOUNT('claimed')},
  voucher_key   TEXT NOT NULL,
  expiry_ledger INTEGER NOT NULL,
  open          INTEGER NOT NULL,
  ${Object.values(CHANNEL_COLUMNS_V4).join(',\n  ')}
) STRICT;
CREATE TABLE IF NOT EXISTS txs (
  hash      TEXT PRIMARY KEY,
  source    TEXT NOT NULL,
  seq       INTEGER,
  op        TEXT NOT NULL,
  args      TEXT NOT NULL,
  signature TEXT,
  status    TEXT NOT NULL,
  code      INTEGER,
  message   TEXT,
  result    TEXT,
  ledger    INTEGER NOT NULL,
  ts        TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS events (
  id     INTEGER PRIMARY KEY AUTOINCREMENT,
  tx     TEXT NOT NULL,
  ledger INTEGER NOT NULL,
  ts     TEXT NOT NULL,
  type   TEXT NOT NULL,
  data   TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS events_by_tx ON events (tx, id);
CREATE TABLE IF NOT EXISTS faucet_grants (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  address TEXT NOT NULL,
  at_ms   INTEGER NOT NULL,
  tx      TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS faucet_grants_by_time ON faucet_grants (at_ms);
CREATE INDEX IF NOT EXISTS faucet_grants_by_address ON faucet_grants (address, at_ms);
CREATE TABLE IF NOT EXISTS smart_accounts (
  address        TEXT PRIMARY KEY,
  owner          TEXT NOT NULL,
  agent_key      TEXT,
  ${OPTIONAL_AMOUNT('per_tx_cap')},
  ${OPTIONAL_AMOUNT('daily_cap')},
  payees         TEXT,
  expires_ledger INTEGER,
  frozen         INTEGER NOT NULL CHECK (frozen IN (0, 1)),
  ${AMOUNT('spent_today')},
  day            TEXT NOT NULL,
  created_tx     TEXT NOT NULL,
  -- A policy is all of its fields or none of them.
  CHECK ((${POLICY_COLUMNS.map((c) => `${c} IS NULL`).join(' AND ')}) OR (${POLICY_COLUMNS.map((c) => `${c} IS NOT NULL`).join(' AND ')}))
) STRICT;
-- The credit pool's books: one row (id 1) once anything was deposited.
CREATE TABLE IF NOT EXISTS pool_totals (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  ${AMOUNT('idle')},
  ${AMOUNT('total_shares')}
) STRICT;
-- Investors with shares (a row whose shares reach 0 is deleted).
CREATE TABLE IF NOT EXISTS pool_positions (
  address TEXT PRIMARY KEY,
  ${AMOUNT('shares')}
) STRICT;
-- Open credit lines, at most one per smart account (a line is deleted when closed or liquidated;
-- its history is in the events).
CREATE TABLE IF NOT EXISTS pool_lines (
  account       TEXT PRIMARY KEY,
  ${AMOUNT('principal')},
  ${AMOUNT('debt')},
  opened_ledger INTEGER NOT NULL,
  opened_at     TEXT NOT NULL,
  opened_tx     TEXT NOT NULL
) STRICT;
`;

export function openLedgerDb(dataDir: string): Database.Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = openSqlite(path.join(dataDir, LEDGER_DB_FILE));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('foreign_keys = ON');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new Error(`${LEDGER_DB_FILE} has schema version ${version}; this build knows ${SCHEMA_VERSION}`);
    }
    db.transaction(() => {
      db.exec(SCHEMA);
      addChannelColumns(db);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Gives the channels of a file made before version 4 the columns it lacks (their defaults: none, 0). */
function addChannelColumns(db: Database.Database): void {
  const have = new Set((db.pragma('table_info(channels)') as { name: string }[]).map((c) => c.name));
  for (const [name, definition] of Object.entries(CHANNEL_COLUMNS_V4))
    if (!have.has(name)) db.exec(`ALTER TABLE channels ADD COLUMN ${definition}`);
}
