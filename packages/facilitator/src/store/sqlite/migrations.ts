// SQLite schema, as versioned migrations. Tables are STRICT so a value of the wrong type is an
// error, not a silent conversion. Amounts are canonical decimal TEXT (i128 does not fit an
// INTEGER, and REAL would round); channel ids are TEXT zero-padded to 20 digits, because u64
// does not fit SQLite's signed INTEGER and padding keeps text order equal to numeric order.
// Timestamps are the ISO text they were given, so they come back exactly as issued.
import type Database from 'better-sqlite3';
import { checkedMigrations, refuseNewerSchema } from '../migration.js';
import type { Migration } from '../migration.js';

const INITIAL = `
CREATE TABLE channels (
  id               TEXT PRIMARY KEY,
  network          TEXT NOT NULL,
  channel_contract TEXT NOT NULL,
  payer            TEXT NOT NULL,
  payee            TEXT NOT NULL,
  asset            TEXT NOT NULL,
  voucher_key      TEXT NOT NULL,
  deposit          TEXT NOT NULL,
  claimed          TEXT NOT NULL,
  last_accepted    TEXT NOT NULL,
  last_signature   TEXT,
  expiry_ledger    INTEGER NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('open', 'closed')),
  vouchers         INTEGER NOT NULL,
  vouchers_claimed INTEGER NOT NULL,
  opened_at        TEXT,
  last_voucher_at  TEXT,
  closed_at        TEXT,
  refunded         TEXT,
  created_at       TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX channels_by_created ON channels (created_at, id);
CREATE INDEX channels_by_payer ON channels (payer, created_at, id);
CREATE INDEX channels_by_payee ON channels (payee, created_at, id);
CREATE INDEX channels_by_status ON channels (status, created_at, id);

-- AUTOINCREMENT: an id is never handed out twice, even after the newest event is gone.
CREATE TABLE events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  type       TEXT NOT NULL,
  source     TEXT NOT NULL,
  ts         TEXT NOT NULL,
  channel_id TEXT,
  account    TEXT,
  accounts   TEXT NOT NULL,
  data       TEXT NOT NULL
) STRICT;
CREATE INDEX events_by_channel ON events (channel_id, id);

-- One row per (account, event): "every event of this account" is a range scan, in id order.
CREATE TABLE event_accounts (
  account  TEXT NOT NULL,
  event_id INTEGER NOT NULL REFERENCES events (id),
  PRIMARY KEY (account, event_id)
) STRICT, WITHOUT ROWID;

-- body is the receipt's JSON text exactly as issued; the other columns only index it.
CREATE TABLE receipts (
  position   INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  channel_id TEXT NOT NULL,
  cumulative TEXT NOT NULL,
  payee      TEXT NOT NULL,
  body       TEXT NOT NULL
) STRICT;
CREATE INDEX receipts_by_channel_cumulative ON receipts (channel_id, cumulative);
CREATE INDEX receipts_by_channel ON receipts (channel_id, position);
CREATE INDEX receipts_by_payee ON receipts (payee, position);

CREATE TABLE idempotency (
  key         TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  response    TEXT NOT NULL,
  at          TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
`;

// Streaming sessions (docs/protocol.md#streams). Amounts and channel ids as in version 1. No CHECK on
// \`reason\`: the list of end reasons may grow, and a STRICT table's CHECK cannot be altered without
// rebuilding it; write() validates reasons before they reach a batch (op-checks.ts).
const STREAMS = `
CREATE TABLE streams (
  id                 TEXT PRIMARY KEY,
  channel_id         TEXT NOT NULL,
  pay_to             TEXT NOT NULL,
  resource           TEXT NOT NULL,
  unit               TEXT NOT NULL CHECK (unit IN ('token', 'second')),
  slice_cost         TEXT NOT NULL,
  initial_charge     TEXT NOT NULL,
  receipt_id         TEXT NOT NULL UNIQUE,
  required           TEXT NOT NULL,
  paid               TEXT NOT NULL,
  charged            TEXT NOT NULL,
  vouchers           INTEGER NOT NULL,
  pending_receipt_id TEXT,
  status             TEXT NOT NULL CHECK (status IN ('open', 'ended')),
  reason             TEXT,
  units              INTEGER,
  opened_at          TEXT NOT NULL,
  last_activity_at   TEXT NOT NULL,
  ended_at           TEXT
) STRICT, WITHOUT ROWID;
-- The per-channel limit counts (channel_id, 'open'); the total limit and listings by status walk
-- (status, …) in list order.
CREATE INDEX streams_by_channel_status ON streams (channel_id, status);
CREATE INDEX streams_by_status ON streams (status, opened_at, id);
-- The idle sweep: open sessions by last activity. Led by status, so the ended sessions, which keep
-- their old last_activity_at forever, are not walked on every sweep.
CREATE INDEX streams_by_activity ON streams (status, last_activity_at);
CREATE INDEX streams_by_opened ON streams (opened_at, id);
`;

// The discovery catalog: one listing per (resource, pay_to), so one seller paying itself for
// another seller's URL only ever creates or bumps its own listing. accepts and bazaar are the JSON
// text as written. Listings are never deleted, so catalog_payers needs no foreign key to clean up
// after; it holds at most MAX_COUNTED_PAYERS rows per listing (op-checks.ts), and `payers` counts them.
const CATALOG = `
CREATE TABLE catalog (
  resource     TEXT NOT NULL,
  pay_to       TEXT NOT NULL,
  accepts      TEXT NOT NULL,
  bazaar       TEXT NOT NULL,
  description  TEXT NOT NULL,
  mime_type    TEXT NOT NULL,
  payments     INTEGER NOT NULL,
  payers       INTEGER NOT NULL,
  first_seen   TEXT NOT NULL,
  last_updated TEXT NOT NULL,
  PRIMARY KEY (resource, pay_to)
) STRICT, WITHOUT ROWID;
-- Listings in list order, all of them or one seller's: a page is a walk of offset + limit entries,
-- never a sort of the whole catalog (the discovery endpoint is public).
CREATE INDEX catalog_by_rank ON catalog (payments DESC, last_updated DESC, resource, pay_to);
CREATE INDEX catalog_by_pay_to ON catalog (pay_to, payments DESC, last_updated DESC, resource);

CREATE TABLE catalog_payers (
  resource TEXT NOT NULL,
  pay_to   TEXT NOT NULL,
  payer    TEXT NOT NULL,
  PRIMARY KEY (resource, pay_to, payer)
) STRICT, WITHOUT ROWID;
`;

// The parties of a session, for the caps per payer and per payee (before, one account filled
// the global cap). Sessions opened before this version keep payer ''.
const STREAM_PARTIES = `
ALTER TABLE streams ADD COLUMN payer TEXT NOT NULL DEFAULT '';
CREATE INDEX streams_by_payer ON streams (payer, status);
CREATE INDEX streams_by_pay_to ON streams (pay_to, status);
`;

// Idempotency records as an ordinary (rowid) table: a record holds a whole answer (~1.5 KB for
// /verify), and a WITHOUT ROWID table keeps its rows in the key's B-tree, two or three to a page,
// so every insert split pages: ~130 µs an insert against ~40 µs now, on every /verify that carries
// an Idempotency-Key (every meter's). The key stays the primary key (a unique index).
const IDEMPOTENCY_ROWID = `
CREATE TABLE idempotency_rowid (
  key         TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  response    TEXT NOT NULL,
  at          TEXT NOT NULL
) STRICT;
INSERT INTO idempotency_rowid (key, fingerprint, response, at) SELECT key, fingerprint, response, at FROM idempotency;
DROP TABLE idempotency;
ALTER TABLE idempotency_rowid RENAME TO idempotency;
`;

// batch-settlement: what a payment charged (`charged`, at most what was accepted; a
// channel voucher charges its whole amount, so existing rows start at last_accepted), the
// authorizer and refund nonce the ledger bound to the channel, and the reservation a verified
// payment holds until it is settled or released (both columns null together). ALTER TABLE can only
// add a NOT NULL column with a default, hence the default, overwritten at once for existing rows.
const BATCH_SETTLEMENT = `
ALTER TABLE channels ADD COLUMN charged TEXT NOT NULL DEFAULT '0';
UPDATE channels SET charged = last_accepted;
ALTER TABLE channels ADD COLUMN receiver_authorizer TEXT;
ALTER TABLE channels ADD COLUMN refund_nonce INTEGER NOT NULL DEFAULT 0;
ALTER TABLE channels ADD COLUMN reserved_fingerprint TEXT;
ALTER TABLE channels ADD COLUMN reserved_until TEXT;
`;

// The scheme a stream session's slices are paid with: `channel` (every session before this version)
// or x402's `batch-settlement`, whose slice vouchers are ceilings charged by batch-payments.ts.
const STREAM_SCHEME = `
ALTER TABLE streams ADD COLUMN scheme TEXT NOT NULL DEFAULT 'channel';
`;

// x402's payment-identifier extension: the answer to a named payment, per (payTo, id), until it
// expires (ISO times: text order is time order); expires_at indexed for the sweep of expired ones.
const PAYMENT_IDS = `
CREATE TABLE payment_ids (
  pay_to      TEXT NOT NULL,
  id          TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  response    TEXT NOT NULL,
  at          TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  PRIMARY KEY (pay_to, id)
) STRICT;
CREATE INDEX payment_ids_by_expiry ON payment_ids (expires_at);
`;

export const SQLITE_MIGRATIONS: readonly Migration[] = checkedMigrations([
  { version: 1, name: 'initial', sql: INITIAL },
  { version: 2, name: 'streams', sql: STREAMS },
  { version: 3, name: 'catalog', sql: CATALOG },
  { version: 4, name: 'stream_parties', sql: STREAM_PARTIES },
  { version: 5, name: 'idempotency_rowid', sql: IDEMPOTENCY_ROWID },
  { version: 6, name: 'batch_settlement', sql: BATCH_SETTLEMENT },
  { version: 7, name: 'stream_scheme', sql: STREAM_SCHEME },
  { version: 8, name: 'payment_ids', sql: PAYMENT_IDS },
]);

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
) STRICT`;

/**
 * Applies what is missing, each migration in its own BEGIN IMMEDIATE transaction: the write lock
 * is taken before the version is read, so two processes opening one file apply each version once.
 */
export function migrateSqlite(db: Database.Database, migrations: readonly Migration[] = SQLITE_MIGRATIONS): void {
  const applyNext = db.transaction((): boolean => {
    db.exec(CREATE_MIGRATIONS_TABLE);
    const row = db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number };
    refuseNewerSchema(row.v, migrations);
    const next = migrations.find((m) => m.version > row.v);
    if (!next) return false;
    db.exec(next.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      next.version,
      next.name,
      new Date().toISOString(),
    );
    return true;
  });
  while (applyNext.immediate()) {
    // one version per transaction, until none is missing
  }
}

/** Versions recorded in the file, for tests and `svc doctor`-style checks. */
export function appliedSqliteVersions(db: Database.Database): number[] {
  const rows = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[];
  return rows.map((r) => r.version);
}
