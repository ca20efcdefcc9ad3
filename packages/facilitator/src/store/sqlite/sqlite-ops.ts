// The ops of one write() call, applied synchronously on a better-sqlite3 connection that is
// inside a transaction and a savepoint (the caller owns both). A failed precondition returns
// { ok: false } and leaves the rollback to the caller; anything else throws.
// The write lock is held for the whole batch (BEGIN IMMEDIATE), so the read-then-write of the
// monotonic ledger updates cannot race another writer, in this process or another.
import type { ChannelRecord, StoredEvent, StreamRecord, WriteOp, WriteResult } from '../port.js';
import { storedEvent } from '../row-mapping.js';
import {
  advance,
  advanceHolds,
  charge,
  chargeHolds,
  paymentState,
  reserve,
  reserveHolds,
} from './sqlite-channel-cas.js';
import {
  MAX_COUNTED_PAYERS,
  catalogJsonText,
  distinctAccounts,
  eventDataText,
  flooredChannel,
  paddedId,
  receiptChannelId,
  receiptCumulative,
  toBigint,
  toBigintOrNull,
} from '../op-checks.js';
import type { StatementCache } from './sqlite-statements.js';

const INSERT_CHANNEL = `INSERT INTO channels (id, network, channel_contract, payer, payee, asset, voucher_key, deposit, claimed,
  last_accepted, last_signature, charged, receiver_authorizer, refund_nonce, reserved_fingerprint, reserved_until, expiry_ledger,
  status, vouchers, vouchers_claimed, opened_at, last_voucher_at, closed_at, refunded, created_at)
VALUES (@id, @network, @channelContract, @payer, @payee, @asset, @voucherKey, @deposit, @claimed, @lastAccepted,
  @lastSignature, @charged, @receiverAuthorizer, @refundNonce, @reservedFingerprint, @reservedUntil, @expiryLedger, @status,
  @vouchers, @vouchersClaimed, @openedAt, @lastVoucherAt, @closedAt, @refunded, @createdAt)
ON CONFLICT (id) DO NOTHING`;
const RELEASE =
  'UPDATE channels SET reserved_fingerprint = NULL, reserved_until = NULL WHERE id = ? AND reserved_fingerprint = ?';
// refund_nonce is an INTEGER column: compared as a number.
const REFUNDED = 'UPDATE channels SET deposit = ?, refund_nonce = ? WHERE id = ? AND refund_nonce < ?';
const SELECT_LEDGER_FIELDS = `SELECT deposit, claimed, last_accepted, charged, expiry_ledger, status, closed_at, refunded, vouchers_claimed
FROM channels WHERE id = ?`;
const UPDATE_LEDGER_FIELDS = `UPDATE channels SET deposit = ?, claimed = ?, expiry_ledger = ?, status = ?, closed_at = ?, refunded = ?,
  vouchers_claimed = ? WHERE id = ?`;
// The ledger's claimed amount is the floor of what was charged and accepted (op-checks.ts flooredChannel).
const RAISE_CHARGED = 'UPDATE channels SET charged = claimed WHERE id = ?';
const RAISE_TO_CLAIMED = 'UPDATE channels SET last_accepted = claimed, last_signature = NULL WHERE id = ?';
const INSERT_EVENT =
  'INSERT INTO events (type, source, ts, channel_id, account, accounts, data) VALUES (?, ?, ?, ?, ?, ?, ?)';
const INSERT_EVENT_ACCOUNT = 'INSERT INTO event_accounts (account, event_id) VALUES (?, ?)';
const INSERT_RECEIPT =
  'INSERT INTO receipts (id, channel_id, cumulative, payee, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING';
const INSERT_IDEMPOTENCY =
  'INSERT INTO idempotency (key, fingerprint, response, at) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING';
const TAKE_IDEMPOTENCY = 'DELETE FROM idempotency WHERE key = ? AND fingerprint = ?';
const SWEEP_PAYMENT_IDS = 'DELETE FROM payment_ids WHERE expires_at <= ?';
const INSERT_PAYMENT_ID = `INSERT INTO payment_ids (pay_to, id, fingerprint, response, at, expires_at)
VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (pay_to, id) DO NOTHING`;
const UPSERT_META =
  'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value';
const INIT_META = 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING';
// Streams. The open's checks and its insert run under the batch's write lock, so no other writer
// (thread or process) can open a session between the count and the insert.
const SELECT_STREAM_TAKEN = 'SELECT 1 FROM streams WHERE id = ? OR receipt_id = ?';
const COUNT_OPEN_ON_CHANNEL = "SELECT COUNT(*) AS n FROM streams WHERE channel_id = ? AND status = 'open'";
const COUNT_OPEN = "SELECT COUNT(*) AS n FROM streams WHERE status = 'open'";
const COUNT_OPEN_OF_PAYER = "SELECT COUNT(*) AS n FROM streams WHERE payer = ? AND status = 'open'";
const COUNT_OPEN_OF_PAYEE = "SELECT COUNT(*) AS n FROM streams WHERE pay_to = ? AND status = 'open'";
const INSERT_STREAM = `INSERT INTO streams (id, channel_id, payer, pay_to, resource, unit, slice_cost, initial_charge, receipt_id, required,
  paid, charged, vouchers, pending_receipt_id, status, reason, units, opened_at, last_activity_at, ended_at, scheme)
VALUES (@id, @channelId, @payer, @payTo, @resource, @unit, @sliceCost, @initialCharge, @receiptId, @required, @paid, @charged,
  @vouchers, @pendingReceiptId, @status, @reason, @units, @openedAt, @lastActivityAt, @endedAt, @scheme)`;
const SELECT_OPEN_STREAM_CREDIT =
  "SELECT charged, slice_cost, pending_receipt_id FROM streams WHERE id = ? AND status = 'open'";
// charged is decimal text, so the sum is taken in bigint (SQLite arithmetic would go through i64 or a float).
const CREDIT_STREAM = `UPDATE streams SET paid = ?, charged = ?, vouchers = vouchers + 1, required = ?, pending_receipt_id = ?,
  last_activity_at = ? WHERE id = ? AND status = 'open' AND pending_receipt_id IS NULL`;
const CONSUME_STREAM =
  "UPDATE streams SET pending_receipt_id = NULL WHERE id = ? AND status = 'open' AND pending_receipt_id = ?";
const TOUCH_STREAM = "UPDATE streams SET last_activity_at = ? WHERE id = ? AND status = 'open'";
const END_STREAM =
  "UPDATE streams SET status = 'ended', reason = ?, units = ?, ended_at = ? WHERE id = ? AND status = 'open'";
const STREAM_UNITS = 'UPDATE streams SET units = ? WHERE id = ? AND units IS NULL';
// The catalog. The payer first: it is stored (and counted) only while its listing counts fewer
// than the cap, and only once; then the listing's upsert adds 1 to payers if it was. Both are keyed
// by (resource, pay_to), so a record never touches another payTo's listing.
const INSERT_CATALOG_PAYER = `INSERT INTO catalog_payers (resource, pay_to, payer)
SELECT @resource, @payTo, @payer
WHERE COALESCE((SELECT payers FROM catalog WHERE resource = @resource AND pay_to = @payTo), 0) < @cap
ON CONFLICT DO NOTHING`;
const UPSERT_CATALOG = `INSERT INTO catalog (resource, pay_to, accepts, bazaar, description, mime_type, payments, payers, first_seen,
  last_updated)
VALUES (@resource, @payTo, @accepts, @bazaar, @description, @mimeType, @payments, @newPayer, @at, @at)
ON CONFLICT (resource, pay_to) DO UPDATE SET accepts = excluded.accepts, bazaar = excluded.bazaar,
  description = excluded.description, mime_type = excluded.mime_type, payments = payments + excluded.payments,
  payers = payers + excluded.payers, last_updated = excluded.last_updated`;

interface LedgerFields {
  deposit: bigint;
  claimed: bigint;
  expiryLedger: number;
  status: string;
  closedAt: string | null;
  refunded: bigint | null;
  vouchersClaimed: number;
}

type LedgerOp = Extract<WriteOp, { op: 'channel.ledger' }>;
type ClaimedOp = Extract<WriteOp, { op: 'channel.claimed' }>;

const max = (a: bigint, b: bigint | undefined): bigint => (b !== undefined && b > a ? b : a);

/** channel.ledger: everything only grows, and the first close is final (port.ts). */
function applyLedger(f: LedgerFields, op: LedgerOp): LedgerFields {
  const closing = op.closed !== undefined && f.status === 'open';
  return {
    ...f,
    deposit: max(f.deposit, op.deposit),
    claimed: max(f.claimed, op.claimed),
    expiryLedger: Math.max(f.expiryLedger, op.expiryLedger ?? 0),
    status: op.closed !== undefined ? 'closed' : f.status,
    closedAt: closing ? (op.closed?.at ?? null) : f.closedAt,
    refunded: closing ? (op.closed?.refunded ?? null) : f.refunded,
  };
}

function applyClaimed(f: LedgerFields, op: ClaimedOp): LedgerFields {
  return {
    ...f,
    claimed: max(f.claimed, op.cumulative),
    vouchersClaimed: Math.max(f.vouchersClaimed, op.vouchersClaimed),
  };
}

function insertChannel(stmts: StatementCache, channel: ChannelRecord): void {
  const { reservation, ...c } = flooredChannel(channel);
  stmts.get(INSERT_CHANNEL).run({
    ...c,
    id: paddedId(c.id),
    deposit: c.deposit.toString(),
    claimed: c.claimed.toString(),
    lastAccepted: c.lastAccepted.toString(),
    charged: c.charged.toString(),
    reservedFingerprint: reservation?.fingerprint ?? null,
    reservedUntil: reservation?.until ?? null,
    refunded: c.refunded === null ? null : c.refunded.toString(),
  });
}

function updateLedgerFields(stmts: StatementCache, channelId: bigint, patch: (f: LedgerFields) => LedgerFields): void {
  const id = paddedId(channelId);
  const row = stmts.get(SELECT_LEDGER_FIELDS).get(id) as Record<string, string | number | null> | undefined;
  if (!row) return;
  const lastAccepted = toBigint(row.last_accepted, 'last_accepted');
  const charged = toBigint(row.charged, 'charged');
  const f = patch({
    deposit: toBigint(row.deposit, 'deposit'),
    claimed: toBigint(row.claimed, 'claimed'),
    expiryLedger: Number(row.expiry_ledger),
    status: String(row.status),
    closedAt: row.closed_at as string | null,
    refunded: toBigintOrNull(row.refunded, 'refunded'),
    vouchersClaimed: Number(row.vouchers_claimed),
  });
  const refunded = f.refunded === null ? null : f.refunded.toString();
  stmts
    .get(UPDATE_LEDGER_FIELDS)
    .run(
      f.deposit.toString(),
      f.claimed.toString(),
      f.expiryLedger,
      f.status,
      f.closedAt,
      refunded,
      f.vouchersClaimed,
      id,
    );
  if (f.claimed > charged) stmts.get(RAISE_CHARGED).run(id);
  if (f.claimed > lastAccepted) stmts.get(RAISE_TO_CLAIMED).run(id);
}

function insertEvent(stmts: StatementCache, op: Extract<WriteOp, { op: 'event' }>): StoredEvent {
  const e = op.event;
  const dataText = eventDataText(e.data);
  const accounts = e.accounts ?? [];
  const channelId = e.channelId === undefined ? null : paddedId(e.channelId);
  const info = stmts
    .get(INSERT_EVENT)
    .run(e.type, e.source, e.ts, channelId, accounts[0] ?? null, JSON.stringify(accounts), dataText);
  const id = Number(info.lastInsertRowid);
  for (const account of distinctAccounts(accounts)) stmts.get(INSERT_EVENT_ACCOUNT).run(account, id);
  return storedEvent(id, e, dataText);
}

function insertReceipt(stmts: StatementCache, op: Extract<WriteOp, { op: 'receipt' }>): void {
  const r = op.receipt;
  const channelId = paddedId(receiptChannelId(r.channelId));
  stmts
    .get(INSERT_RECEIPT)
    .run(r.id, channelId, receiptCumulative(r.cumulative).toString(), r.payee, JSON.stringify(r));
}

type StreamOpenOp = Extract<WriteOp, { op: 'stream.open' }>;

/** 'duplicate' first: a retried open whose own session fills the last slot is told it exists, not that it is over the limit. */
function openStream(stmts: StatementCache, op: StreamOpenOp): 'ok' | 'duplicate' | 'limit' {
  const st = op.stream;
  if (stmts.get(SELECT_STREAM_TAKEN).get(st.id, st.receiptId) !== undefined) return 'duplicate';
  const channelId = paddedId(st.channelId);
  const count = (sql: string, ...args: string[]) => (stmts.get(sql).get(...args) as { n: number }).n;
  if (count(COUNT_OPEN_ON_CHANNEL, channelId) >= op.maxPerChannel) return 'limit';
  if (count(COUNT_OPEN_OF_PAYER, st.payer) >= op.maxPerPayer) return 'limit';
  if (count(COUNT_OPEN_OF_PAYEE, st.payTo) >= op.maxPerPayee) return 'limit';
  if (count(COUNT_OPEN) >= op.maxTotal) return 'limit';
  stmts.get(INSERT_STREAM).run(streamParams(st, channelId));
  return 'ok';
}

function streamParams(st: StreamRecord, channelId: string): Record<string, string | number | null> {
  return {
    ...st,
    channelId,
    sliceCost: st.sliceCost.toString(),
    initialCharge: st.initialCharge.toString(),
    required: st.required.toString(),
    paid: st.paid.toString(),
    charged: st.charged.toString(),
  };
}

/**
 * What a credit adds to: the open session's charged, when no slice is pending and the credit is of
 * one slice at most (slice_cost is decimal text, compared in bigint); else null, a conflict.
 */
function creditable(stmts: StatementCache, op: Extract<WriteOp, { op: 'stream.credit' }>): bigint | null {
  const row = stmts.get(SELECT_OPEN_STREAM_CREDIT).get(op.streamId) as
    { charged: string; slice_cost: string; pending_receipt_id: string | null } | undefined;
  if (!row || row.pending_receipt_id !== null || op.delta > toBigint(row.slice_cost, 'slice_cost')) return null;
  return toBigint(row.charged, 'charged');
}

function creditStream(stmts: StatementCache, op: Extract<WriteOp, { op: 'stream.credit' }>): boolean {
  const before = creditable(stmts, op);
  if (before === null) return false;
  const charged = before + op.delta;
  const args = [op.cumulative.toString(), charged.toString(), op.required.toString(), op.receiptId, op.at, op.streamId];
  return stmts.get(CREDIT_STREAM).run(...args).changes === 1;
}

function recordCatalog(stmts: StatementCache, op: Extract<WriteOp, { op: 'catalog.record' }>): void {
  const key = { resource: op.resource, payTo: op.payTo };
  const newPayer = stmts.get(INSERT_CATALOG_PAYER).run({ ...key, payer: op.payer, cap: MAX_COUNTED_PAYERS }).changes;
  stmts.get(UPSERT_CATALOG).run({
    ...key,
    accepts: catalogJsonText(op.accepts, 'accepts', 'array'),
    bazaar: catalogJsonText(op.bazaar, 'bazaar', 'object'),
    description: op.description,
    mimeType: op.mimeType,
    payments: op.payments,
    newPayer,
    at: op.at,
  });
}

/** Applies one call's ops in order; stops at the first failed precondition. */
export function applySqliteOps(stmts: StatementCache, ops: readonly WriteOp[]): WriteResult {
  const events: StoredEvent[] = [];
  for (const [i, op] of ops.entries()) {
    switch (op.op) {
      case 'channel.insert':
        insertChannel(stmts, op.channel);
        break;
      case 'channel.advance':
        if (!advance(stmts, op)) return { ok: false, reason: 'conflict', op: i };
        break;
      case 'channel.reserve':
        if (!reserve(stmts, op)) return { ok: false, reason: 'conflict', op: i };
        break;
      case 'channel.charge':
        if (!charge(stmts, op)) return { ok: false, reason: 'conflict', op: i };
        break;
      case 'channel.release':
        stmts.get(RELEASE).run(paddedId(op.channelId), op.fingerprint);
        break;
      case 'channel.refunded': {
        const args = [op.deposit.toString(), op.refundNonce, paddedId(op.channelId), op.refundNonce] as const;
        stmts.get(REFUNDED).run(...args);
        break;
      }
      case 'channel.ledger':
        updateLedgerFields(stmts, op.channelId, (f) => applyLedger(f, op));
        break;
      case 'channel.claimed':
        updateLedgerFields(stmts, op.channelId, (f) => applyClaimed(f, op));
        break;
      case 'event':
        events.push(insertEvent(stmts, op));
        break;
      case 'receipt':
        insertReceipt(stmts, op);
        break;
      case 'idempotency':
        if (stmts.get(INSERT_IDEMPOTENCY).run(op.key, op.fingerprint, op.response, op.at).changes === 0) {
          return { ok: false, reason: 'duplicate', op: i };
        }
        break;
      case 'payment.id':
        // The sweep first: a record of (payTo, id) that expired makes way for this one.
        stmts.get(SWEEP_PAYMENT_IDS).run(op.at);
        if (
          stmts.get(INSERT_PAYMENT_ID).run(op.payTo, op.id, op.fingerprint, op.response, op.at, op.expiresAt)
            .changes === 0
        )
          return { ok: false, reason: 'duplicate', op: i };
        break;
      case 'idempotency.take':
        if (stmts.get(TAKE_IDEMPOTENCY).run(op.key, op.fingerprint).changes !== 1)
          return { ok: false, reason: 'conflict', op: i };
        break;
      case 'meta.set':
        stmts.get(UPSERT_META).run(op.key, op.value);
        break;
      case 'meta.init':
        stmts.get(INIT_META).run(op.key, op.value);
        break;
      case 'stream.open': {
        const opened = openStream(stmts, op);
        if (opened !== 'ok') return { ok: false, reason: opened, op: i };
        break;
      }
      case 'stream.credit':
        if (!creditStream(stmts, op)) return { ok: false, reason: 'conflict', op: i };
        break;
      case 'stream.consume':
        if (stmts.get(CONSUME_STREAM).run(op.streamId, op.receiptId).changes !== 1)
          return { ok: false, reason: 'conflict', op: i };
        break;
      case 'stream.touch':
        stmts.get(TOUCH_STREAM).run(op.at, op.streamId);
        break;
      case 'stream.end':
        if (stmts.get(END_STREAM).run(op.reason, op.units, op.at, op.streamId).changes !== 1)
          return { ok: false, reason: 'conflict', op: i };
        break;
      case 'stream.units':
        stmts.get(STREAM_UNITS).run(op.units, op.streamId);
        break;
      case 'catalog.record':
        recordCatalog(stmts, op);
        break;
    }
  }
  return { ok: true, events };
}

const SELECT_IDEMPOTENCY_KEY = 'SELECT 1 FROM idempotency WHERE key = ?';
const SELECT_STREAM_STATE = 'SELECT status, pending_receipt_id FROM streams WHERE id = ?';
const PRECHECKABLE = new Set<WriteOp['op']>([
  'channel.advance',
  'channel.reserve',
  'channel.charge',
  'receipt',
  'event',
  'idempotency',
  'meta.set',
  'meta.init',
  'stream.credit',
  'stream.consume',
  'stream.touch',
  'stream.end',
  'stream.units',
  // No precondition, and nothing another op checks reads the catalog: the verifier's call (advance,
  // receipt, event, catalog.record, idempotency) keeps the fast path.
  'catalog.record',
]);
/**
 * Stream ops that a precheckable call may hold, one at most: each of them changes what the others
 * check (a credit sets the slice a consume takes, an end closes what a credit needs open). The
 * open is never precheckable: its limits count sessions, which other calls' ops change.
 */
const STREAM_OPS = new Set<WriteOp['op']>([
  'stream.credit',
  'stream.consume',
  'stream.touch',
  'stream.end',
  'stream.units',
]);

/**
 * Whether a call's preconditions can all be decided before any of its ops is applied: none of
 * its ops changes what another one checks (no insert or ledger update of a channel it advances,
 * reserves or charges, no second such op on one channel, no second use of one idempotency key, no
 * second stream op). The voucher call — advance or charge, receipt, event, catalog.record,
 * idempotency, and a stream's credit — and a reservation's call are of this kind.
 */
export function isPrecheckable(ops: readonly WriteOp[]): boolean {
  const channels = new Set<bigint>();
  const keys = new Set<string>();
  let streamOps = 0;
  for (const op of ops) {
    if (!PRECHECKABLE.has(op.op)) return false;
    if (op.op === 'channel.advance' || op.op === 'channel.reserve' || op.op === 'channel.charge') {
      // Each changes what the others check on its channel (charged, the reservation).
      if (channels.has(op.channelId)) return false;
      channels.add(op.channelId);
    } else if (op.op === 'idempotency') {
      if (keys.has(op.key)) return false;
      keys.add(op.key);
    } else if (STREAM_OPS.has(op.op) && ++streamOps > 1) {
      return false;
    }
  }
  return true;
}

/** What a consume's or an end's precondition reads: exactly the WHERE clauses of CONSUME/END_STREAM. */
function streamHolds(stmts: StatementCache, streamId: string, pendingReceiptId?: string): boolean {
  const row = stmts.get(SELECT_STREAM_STATE).get(streamId) as
    { status: string; pending_receipt_id: string | null } | undefined;
  return (
    row !== undefined &&
    row.status === 'open' &&
    (pendingReceiptId === undefined || row.pending_receipt_id === pendingReceiptId)
  );
}

/** The first failed precondition of a precheckable call, or null when all hold. */
export function precheck(stmts: StatementCache, ops: readonly WriteOp[]): WriteResult | null {
  for (const [i, op] of ops.entries()) {
    if (op.op === 'channel.advance' && !advanceHolds(paymentState(stmts, op.channelId), op)) {
      return { ok: false, reason: 'conflict', op: i };
    } else if (op.op === 'channel.reserve' && !reserveHolds(paymentState(stmts, op.channelId), op)) {
      return { ok: false, reason: 'conflict', op: i };
    } else if (op.op === 'channel.charge' && !chargeHolds(paymentState(stmts, op.channelId), op)) {
      return { ok: false, reason: 'conflict', op: i };
    } else if (op.op === 'idempotency' && stmts.get(SELECT_IDEMPOTENCY_KEY).get(op.key) !== undefined) {
      return { ok: false, reason: 'duplicate', op: i };
    } else if (op.op === 'stream.credit' && creditable(stmts, op) === null) {
      return { ok: false, reason: 'conflict', op: i };
    } else if (op.op === 'stream.end' && !streamHolds(stmts, op.streamId)) {
      return { ok: false, reason: 'conflict', op: i };
    } else if (op.op === 'stream.consume' && !streamHolds(stmts, op.streamId, op.receiptId)) {
      return { ok: false, reason: 'conflict', op: i };
    }
  }
  return null;
}
