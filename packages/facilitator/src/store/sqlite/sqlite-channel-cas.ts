// The compare-and-set ops of a channel on SQLite: the `channel` voucher's advance, and the
// batch-settlement reservation and charge. Each reads the channel's payment state, decides in JS
// (amounts as bigint, never as text; ISO times as text, whose order is time order) and writes by
// id: the batch holds the write lock, so nothing changes the row in between. The writer's fast
// path (sqlite-ops.ts precheck) decides with these very predicates, so it is exact.
import type { WriteOp } from '../port.js';
import { paddedId, toBigint } from '../op-checks.js';
import type { StatementCache } from './sqlite-statements.js';

const SELECT_PAYMENT_STATE =
  'SELECT status, last_accepted, charged, reserved_fingerprint, reserved_until FROM channels WHERE id = ?';
// One statement, as advanceHolds decides it (the hot path: no read before the write). Amounts are
// canonical decimal text, so text equality is numeric equality; ISO times compare as text.
const ADVANCE = `UPDATE channels SET last_accepted = ?, charged = ?, last_signature = ?, vouchers = vouchers + 1, last_voucher_at = ?
WHERE id = ? AND status = 'open' AND last_accepted = ? AND charged = ? AND (reserved_until IS NULL OR reserved_until <= ?)`;
const RESERVE = 'UPDATE channels SET reserved_fingerprint = ?, reserved_until = ? WHERE id = ?';
const CHARGE = `UPDATE channels SET charged = ?, vouchers = vouchers + 1, last_voucher_at = ?, reserved_fingerprint = NULL,
  reserved_until = NULL WHERE id = ?`;
// A charge whose ceiling is above every voucher accepted so far: its voucher is the one to claim.
const CHARGE_RAISING = `UPDATE channels SET charged = ?, last_accepted = ?, last_signature = ?, vouchers = vouchers + 1,
  last_voucher_at = ?, reserved_fingerprint = NULL, reserved_until = NULL WHERE id = ?`;

type AdvanceOp = Extract<WriteOp, { op: 'channel.advance' }>;
type ReserveOp = Extract<WriteOp, { op: 'channel.reserve' }>;
type ChargeOp = Extract<WriteOp, { op: 'channel.charge' }>;

interface PaymentState {
  open: boolean;
  lastAccepted: bigint;
  charged: bigint;
  reservation: { fingerprint: string; until: string } | null;
}

export function paymentState(stmts: StatementCache, channelId: bigint): PaymentState | null {
  const row = stmts.get(SELECT_PAYMENT_STATE).get(paddedId(channelId)) as
    | {
        status: string;
        last_accepted: string;
        charged: string;
        reserved_fingerprint: string | null;
        reserved_until: string | null;
      }
    | undefined;
  if (!row) return null;
  const { reserved_fingerprint: fingerprint, reserved_until: until } = row;
  return {
    open: row.status === 'open',
    lastAccepted: toBigint(row.last_accepted, 'last_accepted'),
    charged: toBigint(row.charged, 'charged'),
    reservation: fingerprint === null || until === null ? null : { fingerprint, until },
  };
}

/** No reservation is live at `at`, unless it is `fingerprint`'s own (ISO times: text order is time order). */
function freeFor(s: PaymentState, at: string, fingerprint?: string): boolean {
  const r = s.reservation;
  return r === null || r.until <= at || r.fingerprint === fingerprint;
}

export function advanceHolds(s: PaymentState | null, op: AdvanceOp): boolean {
  return (
    s !== null &&
    s.open &&
    op.cumulative > op.expected &&
    s.lastAccepted === op.expected &&
    s.charged === (op.expectedCharged ?? op.expected) &&
    freeFor(s, op.at)
  );
}

export function reserveHolds(s: PaymentState | null, op: ReserveOp): boolean {
  return s !== null && s.open && s.charged === op.expectedCharged && freeFor(s, op.at, op.fingerprint);
}

export function chargeHolds(s: PaymentState | null, op: ChargeOp): s is PaymentState {
  return (
    s !== null &&
    s.open &&
    s.charged === op.expectedCharged &&
    op.expectedCharged + op.charge <= op.ceiling &&
    freeFor(s, op.at, op.fingerprint)
  );
}

export function advance(stmts: StatementCache, op: AdvanceOp): boolean {
  if (op.cumulative <= op.expected) return false;
  const cumulative = op.cumulative.toString();
  const expected = op.expected.toString();
  const expectedCharged = (op.expectedCharged ?? op.expected).toString();
  const args = [cumulative, cumulative, op.signature, op.at, paddedId(op.channelId), expected, expectedCharged, op.at];
  return stmts.get(ADVANCE).run(...args).changes === 1;
}

export function reserve(stmts: StatementCache, op: ReserveOp): boolean {
  if (!reserveHolds(paymentState(stmts, op.channelId), op)) return false;
  stmts.get(RESERVE).run(op.fingerprint, op.until, paddedId(op.channelId));
  return true;
}

export function charge(stmts: StatementCache, op: ChargeOp): boolean {
  const s = paymentState(stmts, op.channelId);
  if (!chargeHolds(s, op)) return false;
  const id = paddedId(op.channelId);
  const charged = (op.expectedCharged + op.charge).toString();
  if (op.ceiling > s.lastAccepted) {
    stmts.get(CHARGE_RAISING).run(charged, op.ceiling.toString(), op.signature, op.at, id);
  } else {
    stmts.get(CHARGE).run(charged, op.at, id);
  }
  return true;
}
