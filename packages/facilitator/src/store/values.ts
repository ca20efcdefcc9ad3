// Checks and conversions shared by both adapters. Money and channel ids cross into SQL as decimal
// text, never as a JS number or an int8 parameter: i128 does not fit int8 and a float would round.
import { I128_MAX, STREAM_END_REASONS, U64_MAX } from '@svc/core';
import type { ChannelRecord, EventQuery, StreamRecord, WriteOp } from './port.js';

const CHANNEL_ID_DIGITS = 20;
const HEX32_RE = /^[0-9a-f]{64}$/;
const STREAM_ID_RE = /^[0-9a-f]{32}$/;
const CHANNEL_STATUSES = new Set(['open', 'closed']);
const EVENT_SOURCES = new Set(['gateway', 'facilitator', 'ledger']);
const STREAM_UNITS = new Set(['token', 'second']);
const STREAM_STATUSES = new Set(['open', 'ended']);
const END_REASONS = new Set<string>(STREAM_END_REASONS);

/** Decimal text of a channel id, zero-padded so text order is numeric order (SQLite keys). */
export function paddedId(id: bigint): string {
  return id.toString().padStart(CHANNEL_ID_DIGITS, '0');
}

/** A stored decimal (padded or not) back to bigint; refuses anything that is not one. */
export function toBigint(text: unknown, column: string): bigint {
  if (typeof text !== 'string' || !/^-?[0-9]+$/.test(text)) throw new TypeError(`column ${column} holds no integer`);
  return BigInt(text);
}

export function toBigintOrNull(text: unknown, column: string): bigint | null {
  return text === null ? null : toBigint(text, column);
}

function checkChannelId(id: unknown): void {
  if (typeof id !== 'bigint' || id < 0n || id > U64_MAX) throw new RangeError('channel id must be a u64 bigint');
}

function checkAmount(value: unknown, name: string): void {
  if (typeof value !== 'bigint' || value < 0n || value > I128_MAX) throw new RangeError(`${name} must be a non-negative i128 bigint`);
}

function checkCount(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
}

function checkText(value: unknown, name: string): void {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
}

function checkTextOrNull(value: unknown, name: string): void {
  if (value !== null) checkText(value, name);
}

function checkStreamId(id: unknown): void {
  if (typeof id !== 'string' || !STREAM_ID_RE.test(id)) throw new TypeError('stream id must be 32 lowercase hex characters');
}

/** Receipt ids as the receipt op stores them, so a session can only be bound to a real receipt id. */
function checkReceiptId(id: unknown, name: string): void {
  if (typeof id !== 'string' || !HEX32_RE.test(id)) throw new TypeError(`${name} must be 64 lowercase hex characters`);
}

function checkEndReason(reason: unknown): void {
  if (typeof reason !== 'string' || !END_REASONS.has(reason)) throw new TypeError(`stream end reason must be one of ${STREAM_END_REASONS.join(', ')}`);
}

function checkUnitsOrNull(units: unknown): void {
  if (units !== null) checkCount(units, 'units');
}

/** Session limits: a limit of 0 would refuse every open, which is a configuration mistake. */
function checkLimitValue(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
}

function checkStream(st: StreamRecord): void {
  checkStreamId(st.id);
  checkChannelId(st.channelId);
  for (const k of ['payTo', 'resource', 'openedAt', 'lastActivityAt'] as const) checkText(st[k], k);
  checkTextOrNull(st.endedAt, 'endedAt');
  if (!STREAM_UNITS.has(st.unit)) throw new TypeError('stream unit must be token or second');
  for (const k of ['sliceCost', 'initialCharge', 'required', 'paid', 'charged'] as const) checkAmount(st[k], k);
  checkReceiptId(st.receiptId, 'receiptId');
  if (st.pendingReceiptId !== null) checkReceiptId(st.pendingReceiptId, 'pendingReceiptId');
  checkCount(st.vouchers, 'vouchers');
  if (!STREAM_STATUSES.has(st.status)) throw new TypeError('stream status must be open or ended');
  if (st.reason !== null) checkEndReason(st.reason);
  checkUnitsOrNull(st.units);
}

function checkChannel(c: ChannelRecord): void {
  checkChannelId(c.id);
  for (const k of ['network', 'channelContract', 'payer', 'payee', 'asset', 'createdAt'] as const) checkText(c[k], k);
  if (!HEX32_RE.test(c.voucherKey)) throw new TypeError('voucherKey must be 64 lowercase hex characters');
  checkAmount(c.deposit, 'deposit');
  checkAmount(c.claimed, 'claimed');
  checkAmount(c.lastAccepted, 'lastAccepted');
  if (c.refunded !== null) checkAmount(c.refunded, 'refunded');
  checkCount(c.expiryLedger, 'expiryLedger');
  checkCount(c.vouchers, 'vouchers');
  checkCount(c.vouchersClaimed, 'vouchersClaimed');
  if (!CHANNEL_STATUSES.has(c.status)) throw new TypeError('status must be open or closed');
}

function checkOp(op: WriteOp): void {
  switch (op.op) {
    case 'channel.insert':
      return checkChannel(op.channel);
    case 'channel.advance':
      checkChannelId(op.channelId);
      checkAmount(op.expected, 'expected');
      checkAmount(op.cumulative, 'cumulative');
      checkText(op.signature, 'signature');
      return checkText(op.at, 'at');
    case 'channel.ledger':
      checkChannelId(op.channelId);
      if (op.deposit !== undefined) checkAmount(op.deposit, 'deposit');
      if (op.claimed !== undefined) checkAmount(op.claimed, 'claimed');
      if (op.expiryLedger !== undefined) checkCount(op.expiryLedger, 'expiryLedger');
      if (op.closed !== undefined) checkAmount(op.closed.refunded, 'refunded');
      return;
    case 'channel.claimed':
      checkChannelId(op.channelId);
      checkAmount(op.cumulative, 'cumulative');
      return checkCount(op.vouchersClaimed, 'vouchersClaimed');
    case 'event':
      if (!EVENT_SOURCES.has(op.event.source)) throw new TypeError('event source must be gateway, facilitator or ledger');
      if (op.event.channelId !== undefined) checkChannelId(op.event.channelId);
      if (op.event.accounts?.some((a) => typeof a !== 'string')) throw new TypeError('event accounts must be strings');
      eventDataText(op.event.data);
      return;
    case 'receipt':
      if (!HEX32_RE.test(op.receipt.id)) throw new TypeError('receipt id must be 64 lowercase hex characters');
      checkChannelId(receiptChannelId(op.receipt.channelId));
      return checkAmount(receiptCumulative(op.receipt.cumulative), 'receipt cumulative');
    case 'idempotency':
    case 'meta.set':
      return checkText(op.key, 'key');
    case 'stream.open':
      checkStream(op.stream);
      checkLimitValue(op.maxPerChannel, 'maxPerChannel');
      return checkLimitValue(op.maxTotal, 'maxTotal');
    case 'stream.credit':
      checkStreamId(op.streamId);
      checkAmount(op.cumulative, 'cumulative');
      checkAmount(op.delta, 'delta');
      checkAmount(op.required, 'required');
      checkReceiptId(op.receiptId, 'receiptId');
      return checkText(op.at, 'at');
    case 'stream.consume':
      checkStreamId(op.streamId);
      checkReceiptId(op.receiptId, 'receiptId');
      return checkText(op.at, 'at');
    case 'stream.touch':
      checkStreamId(op.streamId);
      return checkText(op.at, 'at');
    case 'stream.end':
      checkStreamId(op.streamId);
      checkEndReason(op.reason);
      checkUnitsOrNull(op.units);
      return checkText(op.at, 'at');
    case 'stream.units':
      checkStreamId(op.streamId);
      return checkCount(op.units, 'units');
    default:
      throw new TypeError(`unknown write op ${JSON.stringify((op as { op?: unknown }).op)}`);
  }
}

/** Refuses malformed ops before they reach a batch, so one bad call cannot cost others a transaction. */
export function checkOps(ops: readonly WriteOp[]): void {
  if (!Array.isArray(ops)) throw new TypeError('write() takes an array of ops');
  ops.forEach(checkOp);
}

export function receiptChannelId(text: string): bigint {
  if (!/^[0-9]{1,20}$/.test(text)) throw new RangeError('receipt channelId must be a decimal u64');
  return BigInt(text);
}

export function receiptCumulative(text: string): bigint {
  if (!/^[0-9]{1,39}$/.test(text)) throw new RangeError('receipt cumulative must be decimal base units');
  return BigInt(text);
}

/** Accounts for the event index: the same account named twice is indexed once. */
export function distinctAccounts(accounts: readonly string[] | undefined): string[] {
  return [...new Set(accounts ?? [])];
}

/** JSON text of event data; refuses what JSON cannot carry (a bigint, a non-object). */
export function eventDataText(data: Record<string, unknown>): string {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new TypeError('event data must be a JSON object');
  return JSON.stringify(data);
}

/** An explicit order wins; otherwise `before` alone pages backwards (newest first), all else ascends. */
export function eventOrder(q: EventQuery): 'asc' | 'desc' {
  return q.order ?? (q.before !== undefined && q.after === undefined ? 'desc' : 'asc');
}

export function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
  return limit;
}
