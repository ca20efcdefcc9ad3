// The ops of one write() call on PostgreSQL, inside the caller's savepoint. Every statement is
// handed to the connection synchronously, in op order (`execute()` now, results later), so the
// caller can pipeline many calls and the server still runs each call's statements in order. A
// failed precondition reports { ok: false }; the caller rolls the savepoint back, which also undoes
// the statements that ran after it.
// Numbers cross as decimal text with explicit casts: i128 and u64 do not fit an int8 parameter.
import type { PendingQuery, Row, RowList, Sql } from 'postgres';
import type { ChannelRecord, StoredEvent, WriteOp, WriteResult } from '../port.js';
import { storedEvent } from '../row-mapping.js';
import {
  MAX_COUNTED_PAYERS,
  catalogJsonText,
  distinctAccounts,
  flooredChannel,
  eventDataText,
  receiptChannelId,
  receiptCumulative,
} from '../op-checks.js';

type Failure = 'conflict' | 'duplicate' | 'limit';
type StepResult = 'ok' | Failure | StoredEvent;

type Op<K extends WriteOp['op']> = Extract<WriteOp, { op: K }>;

const text = (value: bigint | null | undefined): string | null =>
  value === null || value === undefined ? null : value.toString();

/** Sends the statement now; the returned promise reads its result whenever it arrives. */
function issue<T extends Row[]>(query: PendingQuery<T>, read: (rows: RowList<T>) => StepResult): Promise<StepResult> {
  return query.execute().then(read);
}

const OK = (): StepResult => 'ok';

function insertChannel(sql: Sql, channel: ChannelRecord): Promise<StepResult> {
  const c = flooredChannel(channel);
  return issue(
    sql`
      INSERT INTO channels (id, network, channel_contract, payer, payee, asset, voucher_key, deposit, claimed, last_accepted,
        last_signature, charged, receiver_authorizer, refund_nonce, reserved_fingerprint, reserved_until, expiry_ledger, status,
        vouchers, vouchers_claimed, opened_at, last_voucher_at, closed_at, refunded, created_at)
      VALUES (${text(c.id)}::numeric, ${c.network}, ${c.channelContract}, ${c.payer}, ${c.payee}, ${c.asset}, ${c.voucherKey},
        ${text(c.deposit)}::numeric, ${text(c.claimed)}::numeric, ${text(c.lastAccepted)}::numeric, ${c.lastSignature},
        ${text(c.charged)}::numeric, ${c.receiverAuthorizer}::text, ${c.refundNonce}::bigint,
        ${c.reservation?.fingerprint ?? null}::text, ${c.reservation?.until ?? null}::text, ${c.expiryLedger}::bigint, ${c.status}, ${c.vouchers}::bigint, ${c.vouchersClaimed}::bigint, ${c.openedAt},
        ${c.lastVoucherAt}, ${c.closedAt}, ${text(c.refunded)}::numeric, ${c.createdAt})
      ON CONFLICT (id) DO NOTHING`,
    OK,
  );
}

/**
 * No reservation is live at `at`, unless it is `fingerprint`'s own. reserved_until is COLLATE "C"
 * ISO text: byte order is time order.
 */
function freeFor(sql: Sql, at: string, fingerprint: string | null) {
  return sql`(reserved_until IS NULL OR reserved_until <= ${at}::text OR reserved_fingerprint = ${fingerprint}::text)`;
}

/**
 * The compare-and-set (docs/protocol.md#errors): 0 rows means another copy of the voucher won, the channel
 * closed, or a batch-settlement payment holds it.
 */
function advance(sql: Sql, op: Op<'channel.advance'>): Promise<StepResult> {
  if (op.cumulative <= op.expected) return Promise.resolve('conflict');
  return issue(
    sql`
      UPDATE channels SET last_accepted = ${text(op.cumulative)}::numeric, charged = ${text(op.cumulative)}::numeric,
        last_signature = ${op.signature}, vouchers = vouchers + 1, last_voucher_at = ${op.at}
      WHERE id = ${text(op.channelId)}::numeric AND last_accepted = ${text(op.expected)}::numeric
        AND charged = ${text(op.expectedCharged ?? op.expected)}::numeric AND status = 'open' AND ${freeFor(sql, op.at, null)}`,
    (rows) => (rows.count === 1 ? 'ok' : 'conflict'),
  );
}

function reserve(sql: Sql, op: Op<'channel.reserve'>): Promise<StepResult> {
  return issue(
    sql`
      UPDATE channels SET reserved_fingerprint = ${op.fingerprint}::text, reserved_until = ${op.until}::text
      WHERE id = ${text(op.channelId)}::numeric AND status = 'open' AND charged = ${text(op.expectedCharged)}::numeric
        AND ${freeFor(sql, op.at, op.fingerprint)}`,
    (rows) => (rows.count === 1 ? 'ok' : 'conflict'),
  );
}

/**
 * The new charged is computed here (the bound on the ceiling is the op's own); the ceiling becomes
 * the voucher to claim only above every one accepted so far. Right-hand sides read the row as it
 * was before the UPDATE.
 */
function charge(sql: Sql, op: Op<'channel.charge'>): Promise<StepResult> {
  const charged = op.expectedCharged + op.charge;
  if (charged > op.ceiling) return Promise.resolve('conflict');
  const ceiling = text(op.ceiling);
  return issue(
    sql`
      UPDATE channels SET charged = ${text(charged)}::numeric,
        last_accepted = GREATEST(last_accepted, ${ceiling}::numeric),
        last_signature = CASE WHEN ${ceiling}::numeric > last_accepted THEN ${op.signature}::text ELSE last_signature END,
        vouchers = vouchers + 1, last_voucher_at = ${op.at}, reserved_fingerprint = NULL, reserved_until = NULL
      WHERE id = ${text(op.channelId)}::numeric AND status = 'open' AND charged = ${text(op.expectedCharged)}::numeric
        AND ${freeFor(sql, op.at, op.fingerprint)}`,
    (rows) => (rows.count === 1 ? 'ok' : 'conflict'),
  );
}

function release(sql: Sql, op: Op<'channel.release'>): Promise<StepResult> {
  return issue(
    sql`
      UPDATE channels SET reserved_fingerprint = NULL, reserved_until = NULL
      WHERE id = ${text(op.channelId)}::numeric AND reserved_fingerprint = ${op.fingerprint}::text`,
    OK,
  );
}

/** Refunds apply in nonce order: an older one (a replayed event) changes nothing. */
function refunded(sql: Sql, op: Op<'channel.refunded'>): Promise<StepResult> {
  return issue(
    sql`
      UPDATE channels SET deposit = ${text(op.deposit)}::numeric, refund_nonce = ${op.refundNonce}::bigint
      WHERE id = ${text(op.channelId)}::numeric AND refund_nonce < ${op.refundNonce}::bigint`,
    OK,
  );
}

// GREATEST ignores NULL, so an absent field leaves the column as it is; the first close is final.
// The ledger's claimed amount is the floor of what was accepted (op-checks.ts flooredChannel); every
// right-hand side reads the row as it was before the UPDATE.
function ledger(sql: Sql, op: Op<'channel.ledger'>): Promise<StepResult> {
  const closing = op.closed !== undefined;
  return issue(
    sql`
      UPDATE channels SET
        deposit = GREATEST(deposit, ${text(op.deposit)}::numeric),
        expiry_ledger = GREATEST(expiry_ledger, ${op.expiryLedger ?? null}::bigint),
        claimed = GREATEST(claimed, ${text(op.claimed)}::numeric),
        charged = GREATEST(charged, ${text(op.claimed)}::numeric),
        last_accepted = GREATEST(last_accepted, ${text(op.claimed)}::numeric),
        last_signature = CASE WHEN ${text(op.claimed)}::numeric > last_accepted THEN NULL ELSE last_signature END,
        closed_at = CASE WHEN ${closing}::boolean AND status = 'open' THEN ${op.closed?.at ?? null} ELSE closed_at END,
        refunded = CASE WHEN ${closing}::boolean AND status = 'open' THEN ${text(op.closed?.refunded)}::numeric ELSE refunded END,
        status = CASE WHEN ${closing}::boolean THEN 'closed' ELSE status END
      WHERE id = ${text(op.channelId)}::numeric`,
    OK,
  );
}

function claimed(sql: Sql, op: Op<'channel.claimed'>): Promise<StepResult> {
  return issue(
    sql`
      UPDATE channels SET claimed = GREATEST(claimed, ${text(op.cumulative)}::numeric),
        charged = GREATEST(charged, ${text(op.cumulative)}::numeric),
        last_accepted = GREATEST(last_accepted, ${text(op.cumulative)}::numeric),
        last_signature = CASE WHEN ${text(op.cumulative)}::numeric > last_accepted THEN NULL ELSE last_signature END,
        vouchers_claimed = GREATEST(vouchers_claimed, ${op.vouchersClaimed}::bigint)
      WHERE id = ${text(op.channelId)}::numeric`,
    OK,
  );
}

// One statement stores the event and its account index rows. Text parameters cast to json keep
// the JSON exactly as written (a json-typed parameter would be re-serialised by the driver).
function insertEvent(sql: Sql, op: Op<'event'>): Promise<StepResult> {
  const e = op.event;
  const dataText = eventDataText(e.data);
  const accounts = e.accounts ?? [];
  return issue(
    sql<{ id: string }[]>`
      WITH e AS (
        INSERT INTO events (type, source, ts, channel_id, account, accounts, data)
        VALUES (${e.type}, ${e.source}, ${e.ts}, ${text(e.channelId)}::numeric, ${accounts[0] ?? null},
          ARRAY(SELECT json_array_elements_text(${JSON.stringify(accounts)}::text::json)), ${dataText}::text::json)
        RETURNING id
      ), indexed AS (
        INSERT INTO event_accounts (account, event_id)
        SELECT a, e.id FROM e, json_array_elements_text(${JSON.stringify(distinctAccounts(accounts))}::text::json) AS a
      )
      SELECT id FROM e`,
    ([row]) => {
      if (!row) throw new Error('event insert returned no id');
      return storedEvent(Number(row.id), e, dataText);
    },
  );
}

function insertReceipt(sql: Sql, op: Op<'receipt'>): Promise<StepResult> {
  const r = op.receipt;
  return issue(
    sql`
      INSERT INTO receipts (id, channel_id, cumulative, payee, body)
      VALUES (${r.id}, ${text(receiptChannelId(r.channelId))}::numeric, ${text(receiptCumulative(r.cumulative))}::numeric,
        ${r.payee}, ${JSON.stringify(r)})
      ON CONFLICT (id) DO NOTHING`,
    OK,
  );
}

function idempotency(sql: Sql, op: Op<'idempotency'>): Promise<StepResult> {
  return issue(
    sql`
      INSERT INTO idempotency (key, fingerprint, response, at) VALUES (${op.key}, ${op.fingerprint}, ${op.response}, ${op.at})
      ON CONFLICT (key) DO NOTHING`,
    (rows) => (rows.count === 1 ? 'ok' : 'duplicate'),
  );
}

function paymentId(sql: Sql, op: Op<'payment.id'>): Promise<StepResult> {
  // One statement sees one snapshot: the sweep leaves (payTo, id) itself to the insert, which
  // replaces that record only if it expired.
  return issue(
    sql`
      WITH swept AS (
        DELETE FROM payment_ids WHERE expires_at <= ${op.at} AND NOT (pay_to = ${op.payTo} AND id = ${op.id}))
      INSERT INTO payment_ids (pay_to, id, fingerprint, response, at, expires_at)
      VALUES (${op.payTo}, ${op.id}, ${op.fingerprint}, ${op.response}, ${op.at}, ${op.expiresAt})
      ON CONFLICT (pay_to, id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, response = EXCLUDED.response,
        at = EXCLUDED.at, expires_at = EXCLUDED.expires_at
        WHERE payment_ids.expires_at <= EXCLUDED.at`,
    (rows) => (rows.count === 1 ? 'ok' : 'duplicate'),
  );
}

function takeIdempotency(sql: Sql, op: Op<'idempotency.take'>): Promise<StepResult> {
  return issue(sql`DELETE FROM idempotency WHERE key = ${op.key} AND fingerprint = ${op.fingerprint}`, (rows) =>
    rows.count === 1 ? 'ok' : 'conflict',
  );
}

function metaSet(sql: Sql, op: Op<'meta.set'>): Promise<StepResult> {
  return issue(
    sql`INSERT INTO meta (key, value) VALUES (${op.key}, ${op.value}) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    OK,
  );
}

function metaInit(sql: Sql, op: Op<'meta.init'>): Promise<StepResult> {
  return issue(sql`INSERT INTO meta (key, value) VALUES (${op.key}, ${op.value}) ON CONFLICT (key) DO NOTHING`, OK);
}

/**
 * One statement decides and inserts, so it stays one step of the pipeline: whether the id or the
 * receipt is already bound, the open sessions on the channel and in all, and the insert only when
 * all allow it. Atomic with the count because every write batch holds the schema's advisory lock
 * (postgres-store.ts): no other transaction can open a session until this one commits, and each
 * statement of ours sees the calls before it in the batch. ON CONFLICT only guards against a writer
 * that bypassed the lock; what it refuses is a duplicate too. 'duplicate' is decided before
 * 'limit': a retried open whose own session fills the last slot is told it exists.
 */
function openStream(sql: Sql, op: Op<'stream.open'>): Promise<StepResult> {
  const st = op.stream;
  return issue(
    sql<{ duplicate: boolean; room: boolean; inserted: boolean }[]>`
      WITH taken AS (
        SELECT EXISTS (SELECT 1 FROM streams WHERE id = ${st.id}::text OR receipt_id = ${st.receiptId}::text) AS duplicate
      ), counts AS (
        SELECT count(*) FILTER (WHERE channel_id = ${text(st.channelId)}::numeric) AS on_channel,
          count(*) FILTER (WHERE payer = ${st.payer}::text) AS of_payer, count(*) FILTER (WHERE pay_to = ${st.payTo}::text) AS of_payee,
          count(*) AS total
        FROM streams WHERE status = 'open'
      ), room AS (
        SELECT counts.on_channel < ${op.maxPerChannel}::bigint AND counts.of_payer < ${op.maxPerPayer}::bigint
          AND counts.of_payee < ${op.maxPerPayee}::bigint AND counts.total < ${op.maxTotal}::bigint AS room FROM counts
      ), inserted AS (
        INSERT INTO streams (id, channel_id, payer, pay_to, resource, unit, slice_cost, initial_charge, receipt_id, required, paid, charged,
          vouchers, pending_receipt_id, status, reason, units, opened_at, last_activity_at, ended_at, scheme)
        SELECT ${st.id}::text, ${text(st.channelId)}::numeric, ${st.payer}::text, ${st.payTo}::text, ${st.resource}::text, ${st.unit}::text,
          ${text(st.sliceCost)}::numeric, ${text(st.initialCharge)}::numeric, ${st.receiptId}::text, ${text(st.required)}::numeric,
          ${text(st.paid)}::numeric, ${text(st.charged)}::numeric, ${st.vouchers}::bigint, ${st.pendingReceiptId}::text,
          ${st.status}::text, ${st.reason}::text, ${st.units}::bigint, ${st.openedAt}::text, ${st.lastActivityAt}::text,
          ${st.endedAt}::text, ${st.scheme}::text
        FROM taken, room WHERE NOT taken.duplicate AND room.room
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT taken.duplicate, room.room, EXISTS (SELECT 1 FROM inserted) AS inserted FROM taken, room`,
    ([row]) => {
      if (!row) throw new Error('stream open returned no row');
      if (row.inserted) return 'ok';
      if (row.duplicate) return 'duplicate';
      return row.room ? 'duplicate' : 'limit';
    },
  );
}

/**
 * charged grows in numeric, never through a float. Only an open session with no slice pending is
 * credited, and with one slice at most.
 */
function creditStream(sql: Sql, op: Op<'stream.credit'>): Promise<StepResult> {
  return issue(
    sql`
      UPDATE streams SET paid = ${text(op.cumulative)}::numeric, charged = charged + ${text(op.delta)}::numeric,
        vouchers = vouchers + 1, required = ${text(op.required)}::numeric, pending_receipt_id = ${op.receiptId},
        last_activity_at = ${op.at}
      WHERE id = ${op.streamId} AND status = 'open' AND pending_receipt_id IS NULL
        AND slice_cost >= ${text(op.delta)}::numeric`,
    (rows) => (rows.count === 1 ? 'ok' : 'conflict'),
  );
}

/** Takes the pending slice only if it is this one: of two waits, one gets it and one conflicts. */
function consumeStream(sql: Sql, op: Op<'stream.consume'>): Promise<StepResult> {
  return issue(
    sql`UPDATE streams SET pending_receipt_id = NULL WHERE id = ${op.streamId} AND status = 'open' AND pending_receipt_id = ${op.receiptId}`,
    (rows) => (rows.count === 1 ? 'ok' : 'conflict'),
  );
}

function touchStream(sql: Sql, op: Op<'stream.touch'>): Promise<StepResult> {
  return issue(sql`UPDATE streams SET last_activity_at = ${op.at} WHERE id = ${op.streamId} AND status = 'open'`, OK);
}

/** Only the first end succeeds, so the stream.ended event written beside it is stored once. */
function endStream(sql: Sql, op: Op<'stream.end'>): Promise<StepResult> {
  return issue(
    sql`
      UPDATE streams SET status = 'ended', reason = ${op.reason}, units = ${op.units}::bigint, ended_at = ${op.at}
      WHERE id = ${op.streamId} AND status = 'open'`,
    (rows) => (rows.count === 1 ? 'ok' : 'conflict'),
  );
}

function streamUnits(sql: Sql, op: Op<'stream.units'>): Promise<StepResult> {
  return issue(sql`UPDATE streams SET units = ${op.units}::bigint WHERE id = ${op.streamId} AND units IS NULL`, OK);
}

/**
 * One statement, so it stays one step of the pipeline: the payer is stored only while its listing
 * counts fewer than the cap, and only once (the CTE reads the listing as it was before this
 * statement); the listing's upsert then adds 1 to payers if it was. Both are keyed by (resource,
 * pay_to): a record never touches another payTo's listing. The read of the count and the insert
 * cannot race another writer: every write batch holds the schema's advisory lock.
 */
function recordCatalog(sql: Sql, op: Op<'catalog.record'>): Promise<StepResult> {
  const accepts = catalogJsonText(op.accepts, 'accepts', 'array');
  const bazaar = catalogJsonText(op.bazaar, 'bazaar', 'object');
  return issue(
    sql`
      WITH payer AS (
        INSERT INTO catalog_payers (resource, pay_to, payer)
        SELECT ${op.resource}::text, ${op.payTo}::text, ${op.payer}::text
        WHERE COALESCE((SELECT payers FROM catalog WHERE resource = ${op.resource}::text AND pay_to = ${op.payTo}::text), 0)
          < ${MAX_COUNTED_PAYERS}::bigint
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      INSERT INTO catalog (resource, pay_to, accepts, bazaar, description, mime_type, payments, payers, first_seen, last_updated)
      VALUES (${op.resource}, ${op.payTo}, ${accepts}::text::json, ${bazaar}::text::json, ${op.description}, ${op.mimeType}, ${op.payments}::bigint,
        (SELECT count(*) FROM payer), ${op.at}, ${op.at})
      ON CONFLICT (resource, pay_to) DO UPDATE SET accepts = EXCLUDED.accepts, bazaar = EXCLUDED.bazaar,
        description = EXCLUDED.description, mime_type = EXCLUDED.mime_type, payments = catalog.payments + EXCLUDED.payments,
        payers = catalog.payers + EXCLUDED.payers, last_updated = EXCLUDED.last_updated`,
    OK,
  );
}

function step(sql: Sql, op: WriteOp): Promise<StepResult> {
  switch (op.op) {
    case 'channel.insert':
      return insertChannel(sql, op.channel);
    case 'channel.advance':
      return advance(sql, op);
    case 'channel.reserve':
      return reserve(sql, op);
    case 'channel.charge':
      return charge(sql, op);
    case 'channel.release':
      return release(sql, op);
    case 'channel.refunded':
      return refunded(sql, op);
    case 'channel.ledger':
      return ledger(sql, op);
    case 'channel.claimed':
      return claimed(sql, op);
    case 'event':
      return insertEvent(sql, op);
    case 'receipt':
      return insertReceipt(sql, op);
    case 'idempotency':
      return idempotency(sql, op);
    case 'idempotency.take':
      return takeIdempotency(sql, op);
    case 'payment.id':
      return paymentId(sql, op);
    case 'meta.set':
      return metaSet(sql, op);
    case 'meta.init':
      return metaInit(sql, op);
    case 'stream.open':
      return openStream(sql, op);
    case 'stream.credit':
      return creditStream(sql, op);
    case 'stream.consume':
      return consumeStream(sql, op);
    case 'stream.touch':
      return touchStream(sql, op);
    case 'stream.end':
      return endStream(sql, op);
    case 'stream.units':
      return streamUnits(sql, op);
    case 'catalog.record':
      return recordCatalog(sql, op);
  }
}

const isFailure = (r: StepResult): r is Failure => r === 'conflict' || r === 'duplicate' || r === 'limit';

/**
 * Sends every op of the call now (synchronously, in order) and returns the outcome: the first
 * failed precondition, if any. Throws synchronously only if an op cannot be turned into SQL.
 */
export function sendPostgresOps(sql: Sql, ops: readonly WriteOp[]): Promise<WriteResult> {
  const steps = ops.map((op) => step(sql, op));
  return Promise.all(steps).then((results): WriteResult => {
    const failed = results.findIndex(isFailure);
    const reason = results[failed];
    if (reason !== undefined && isFailure(reason)) return { ok: false, reason, op: failed };
    return { ok: true, events: results.filter((r): r is StoredEvent => typeof r === 'object') };
  });
}
