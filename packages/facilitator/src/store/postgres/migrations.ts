// PostgreSQL schema, as versioned migrations. Amounts are numeric(39,0) (i128 does not fit int8,
// and never a float); channel ids numeric(20,0) (u64 does not fit int8 either). Timestamps stay
// the ISO text they were given (COLLATE "C": byte order, which is time order for ISO UTC), so
// they come back exactly as issued. Event data is `json`, not `jsonb`: json keeps the text as
// written, key order included.
import type { Sql } from 'postgres';
import { checkedMigrations, refuseNewerSchema } from '../migration.js';
import type { Migration } from '../migration.js';

/** First key of every advisory lock svc takes ("svc\x01"); the second key is per schema. */
export const MIGRATION_LOCK_CLASS = 0x73766301;

const INITIAL = `
CREATE TABLE channels (
  id               numeric(20,0) PRIMARY KEY,
  network          text NOT NULL,
  channel_contract text NOT NULL,
  payer            text NOT NULL,
  payee            text NOT NULL,
  asset            text NOT NULL,
  voucher_key      text NOT NULL,
  deposit          numeric(39,0) NOT NULL,
  claimed          numeric(39,0) NOT NULL,
  last_accepted    numeric(39,0) NOT NULL,
  last_signature   text,
  expiry_ledger    bigint NOT NULL,
  status           text NOT NULL CHECK (status IN ('open', 'closed')),
  vouchers         bigint NOT NULL,
  vouchers_claimed bigint NOT NULL,
  opened_at        text,
  last_voucher_at  text,
  closed_at        text,
  refunded         numeric(39,0),
  created_at       text COLLATE "C" NOT NULL
);
CREATE INDEX channels_by_created ON channels (created_at, id);
CREATE INDEX channels_by_payer ON channels (payer, created_at, id);
CREATE INDEX channels_by_payee ON channels (payee, created_at, id);
CREATE INDEX channels_by_status ON channels (status, created_at, id);

CREATE TABLE events (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type       text NOT NULL,
  source     text NOT NULL,
  ts         text NOT NULL,
  channel_id numeric(20,0),
  account    text,
  accounts   text[] NOT NULL,
  data       json NOT NULL
);
CREATE INDEX events_by_channel ON events (channel_id, id);

CREATE TABLE event_accounts (
  account  text NOT NULL,
  event_id bigint NOT NULL REFERENCES events (id),
  PRIMARY KEY (account, event_id)
);

CREATE TABLE receipts (
  position   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id         text NOT NULL UNIQUE,
  channel_id numeric(20,0) NOT NULL,
  cumulative numeric(39,0) NOT NULL,
  payee      text NOT NULL,
  body       text NOT NULL
);
CREATE INDEX receipts_by_channel_cumulative ON receipts (channel_id, cumulative);
CREATE INDEX receipts_by_channel ON receipts (channel_id, position);
CREATE INDEX receipts_by_payee ON receipts (payee, position);

CREATE TABLE idempotency (
  key         text PRIMARY KEY,
  fingerprint text NOT NULL,
  response    text NOT NULL,
  at          text NOT NULL
);

CREATE TABLE meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);
`;

// Streaming sessions (docs/protocol.md#streams). Amounts and channel ids as in version 1; ids and the
// timestamps listings sort or compare on are COLLATE "C", so order is byte order as in SQLite. No
// CHECK on \`reason\`: the list of end reasons may grow; write() validates it (op-checks.ts).
const STREAMS = `
CREATE TABLE streams (
  id                 text COLLATE "C" PRIMARY KEY,
  channel_id         numeric(20,0) NOT NULL,
  pay_to             text NOT NULL,
  resource           text NOT NULL,
  unit               text NOT NULL CHECK (unit IN ('token', 'second')),
  slice_cost         numeric(39,0) NOT NULL,
  initial_charge     numeric(39,0) NOT NULL,
  receipt_id         text NOT NULL,
  required           numeric(39,0) NOT NULL,
  paid               numeric(39,0) NOT NULL,
  charged            numeric(39,0) NOT NULL,
  vouchers           bigint NOT NULL,
  pending_receipt_id text,
  status             text NOT NULL CHECK (status IN ('open', 'ended')),
  reason             text,
  units              bigint,
  opened_at          text COLLATE "C" NOT NULL,
  last_activity_at   text COLLATE "C" NOT NULL,
  ended_at           text,
  CONSTRAINT streams_receipt_id_key UNIQUE (receipt_id)
);
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
// another seller's URL only ever creates or bumps its own listing. accepts and bazaar are json (the
// text as written). The columns the listing sorts on are COLLATE "C", byte order as in SQLite.
// Listings are never deleted, so catalog_payers needs no foreign key to clean up after; it holds at
// most MAX_COUNTED_PAYERS rows per listing (op-checks.ts), and `payers` counts them.
const CATALOG = `
CREATE TABLE catalog (
  resource     text COLLATE "C" NOT NULL,
  pay_to       text COLLATE "C" NOT NULL,
  accepts      json NOT NULL,
  bazaar       json NOT NULL,
  description  text NOT NULL,
  mime_type    text NOT NULL,
  payments     bigint NOT NULL,
  payers       bigint NOT NULL,
  first_seen   text NOT NULL,
  last_updated text COLLATE "C" NOT NULL,
  PRIMARY KEY (resource, pay_to)
);
-- Listings in list order, all of them or one seller's: a page is a walk of offset + limit entries,
-- never a sort of the whole catalog (the discovery endpoint is public).
CREATE INDEX catalog_by_rank ON catalog (payments DESC, last_updated DESC, resource, pay_to);
CREATE INDEX catalog_by_pay_to ON catalog (pay_to, payments DESC, last_updated DESC, resource);

CREATE TABLE catalog_payers (
  resource text NOT NULL,
  pay_to   text NOT NULL,
  payer    text NOT NULL,
  PRIMARY KEY (resource, pay_to, payer)
);
`;

// The parties of a session, for the caps per payer and per payee. Sessions opened
// before this version keep payer ''.
const STREAM_PARTIES = `
ALTER TABLE streams ADD COLUMN payer text NOT NULL DEFAULT '';
CREATE INDEX streams_by_payer ON streams (payer, status);
CREATE INDEX streams_by_pay_to ON streams (pay_to, status);
`;

// Version 5 changed SQLite's idempotency table only (a rowid table instead of WITHOUT ROWID);
// PostgreSQL's heap tables have no such layout. An empty step keeps both adapters' versions in
// step, so one contract suite and one `svc` build speak of the same schema versions.
const IDEMPOTENCY_ROWID = `SELECT 1;`;

// batch-settlement: what a payment charged (`charged`, at most what was accepted; a
// channel voucher charges its whole amount, so existing rows start at last_accepted), the
// authorizer and refund nonce the ledger bound to the channel, and the reservation a verified
// payment holds until it is settled or released (both columns null together). reserved_until is
// compared with the ISO time of a write, so it is COLLATE "C": byte order, which is time order.
const BATCH_SETTLEMENT = `
ALTER TABLE channels ADD COLUMN charged numeric(39,0);
UPDATE channels SET charged = last_accepted;
ALTER TABLE channels ALTER COLUMN charged SET NOT NULL,
  ADD COLUMN receiver_authorizer text,
  ADD COLUMN refund_nonce bigint NOT NULL DEFAULT 0,
  ADD COLUMN reserved_fingerprint text,
  ADD COLUMN reserved_until text COLLATE "C";
`;

// The scheme a stream session's slices are paid with: `channel` (every session before this version)
// or x402's `batch-settlement`, whose slice vouchers are ceilings charged by batch-payments.ts.
const STREAM_SCHEME = `
ALTER TABLE streams ADD COLUMN scheme text NOT NULL DEFAULT 'channel';
`;

// x402's payment-identifier extension: the answer to a named payment, per (pay_to, id), until it
// expires. The times are ISO text compared with a write's time: COLLATE "C" (byte order, time order).
const PAYMENT_IDS = `
CREATE TABLE payment_ids (
  pay_to      text NOT NULL,
  id          text NOT NULL,
  fingerprint text NOT NULL,
  response    text NOT NULL,
  at          text NOT NULL,
  expires_at  text COLLATE "C" NOT NULL,
  PRIMARY KEY (pay_to, id)
);
CREATE INDEX payment_ids_by_expiry ON payment_ids (expires_at);
`;

export const POSTGRES_MIGRATIONS: readonly Migration[] = checkedMigrations([
  { version: 1, name: 'initial', sql: INITIAL },
  { version: 2, name: 'streams', sql: STREAMS },
  { version: 3, name: 'catalog', sql: CATALOG },
  { version: 4, name: 'stream_parties', sql: STREAM_PARTIES },
  { version: 5, name: 'idempotency_rowid', sql: IDEMPOTENCY_ROWID },
  { version: 6, name: 'batch_settlement', sql: BATCH_SETTLEMENT },
  { version: 7, name: 'stream_scheme', sql: STREAM_SCHEME },
  { version: 8, name: 'payment_ids', sql: PAYMENT_IDS },
]);

const SCHEMA_NAME_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Schema names are spliced into DDL and search_path, so only plain identifiers are allowed. */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME_RE.test(schema))
    throw new Error(`schema must match ${SCHEMA_NAME_RE.source}: ${JSON.stringify(schema)}`);
  return schema;
}

/**
 * Applies what is missing, one migration per transaction. Each transaction first takes an
 * advisory lock for this schema, then reads the version: two instances starting at once queue on
 * the lock, and the second finds the work done.
 */
export async function migratePostgres(
  sql: Sql,
  schema: string,
  migrations: readonly Migration[] = POSTGRES_MIGRATIONS,
): Promise<void> {
  checkSchemaName(schema);
  for (;;) {
    const applied = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_CLASS}, hashtext(${schema}))`;
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const [row] = await tx.unsafe<{ v: number }[]>(
        `SELECT COALESCE(MAX(version), 0)::integer AS v FROM ${schema}.schema_migrations`,
      );
      const current = row?.v ?? 0;
      refuseNewerSchema(current, migrations);
      const next = migrations.find((m) => m.version > current);
      if (!next) return false;
      await tx.unsafe(`SET LOCAL search_path TO ${schema}`);
      await tx.unsafe(next.sql).simple();
      await tx.unsafe(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
        next.version,
        next.name,
      ]);
      return true;
    });
    if (!applied) return;
  }
}

export async function appliedPostgresVersions(sql: Sql, schema: string): Promise<number[]> {
  const rows = await sql.unsafe<{ version: number }[]>(
    `SELECT version FROM ${checkSchemaName(schema)}.schema_migrations ORDER BY version`,
  );
  return rows.map((r) => r.version);
}
