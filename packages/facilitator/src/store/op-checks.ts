// Checks and conversions shared by both adapters. Money and channel ids cross into SQL as decimal
// text, never as a JS number or an int8 parameter: i128 does not fit int8 and a float would round.
import { I128_MAX, PAYMENT_ID_RE, STREAM_END_REASONS, U64_MAX, isAddress } from '@svc/core';
import type { ChannelRecord, EventQuery, StreamRecord, WriteOp } from './port.js';

const CHANNEL_ID_DIGITS = 20;
const HEX32_RE = /^[0-9a-f]{64}$/;
const STREAM_ID_RE = /^[0-9a-f]{32}$/;
const CHANNEL_STATUSES = new Set(['open', 'closed']);
const EVENT_SOURCES = new Set(['gateway', 'facilitator', 'ledger']);
const STREAM_UNITS = new Set(['token', 'second']);
const STREAM_STATUSES = new Set(['open', 'ended']);
const END_REASONS = new Set<string>(STREAM_END_REASONS);
// The catalog's bounds. The resource is measured in UTF-8 bytes, not characters: it is a key of
// PostgreSQL btree indexes, whose entries must stay under 2704 bytes (resource + payTo + payer).
const RESOURCE_MAX_BYTES = 2048;
const CATALOG_JSON_MAX_BYTES = 16 * 1024;
const DESCRIPTION_MAX = 1024;
const MIME_TYPE_MAX = 128;
const FINGERPRINT_MAX = 512;
// Exactly Date.prototype.toISOString(): one format, so byte order is time order (lastUpdated sorts).
const ISO_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Distinct payers counted per catalog listing. Past it a listing's count stays at the cap ("at
 * least this many") and no more payers are stored for it, so the payers table holds at most this
 * many rows per listing however many accounts pay.
 */
export const MAX_COUNTED_PAYERS = 1_000;

/**
 * A channel as stored: claimed ≤ charged ≤ lastAccepted. What the ledger shows claimed is the
 * floor of what was charged and accepted (a store that lost or never saw the vouchers behind a
 * claim must not take them again), and the signature of a voucher below that floor no longer
 * names `lastAccepted`.
 */
export function flooredChannel(c: ChannelRecord): ChannelRecord {
  const charged = c.claimed > c.charged ? c.claimed : c.charged;
  if (charged <= c.lastAccepted) return charged === c.charged ? c : { ...c, charged };
  return { ...c, charged, lastAccepted: charged, lastSignature: null };
}

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
  if (typeof value !== 'bigint' || value < 0n || value > I128_MAX)
    throw new RangeError(`${name} must be a non-negative i128 bigint`);
}

function checkCount(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative integer`);
}

function checkText(value: unknown, name: string): void {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
}

function checkTextOrNull(value: unknown, name: string): void {
  if (value !== null) checkText(value, name);
}

function checkStreamId(id: unknown): void {
  if (typeof id !== 'string' || !STREAM_ID_RE.test(id))
    throw new TypeError('stream id must be 32 lowercase hex characters');
}

/** Receipt ids as the receipt op stores them, so a session can only be bound to a real receipt id. */
function checkReceiptId(id: unknown, name: string): void {
  if (typeof id !== 'string' || !HEX32_RE.test(id)) throw new TypeError(`${name} must be 64 lowercase hex characters`);
}

function checkEndReason(reason: unknown): void {
  if (typeof reason !== 'string' || !END_REASONS.has(reason))
    throw new TypeError(`stream end reason must be one of ${STREAM_END_REASONS.join(', ')}`);
}

function checkUnitsOrNull(units: unknown): void {
  if (units !== null) checkCount(units, 'units');
}

/** Session limits: a limit of 0 would refuse every open, which is a configuration mistake. */
function checkLimitValue(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer`);
}

function checkStream(st: StreamRecord): void {
  checkStreamId(st.id);
  checkChannelId(st.channelId);
  for (const k of ['payTo', 'resource', 'openedAt', 'lastActivityAt'] as const) checkText(st[k], k);
  if (typeof st.payer !== 'string') throw new TypeError('stream payer must be a string');
  checkTextOrNull(st.endedAt, 'endedAt');
  if (!STREAM_UNITS.has(st.unit)) throw new TypeError('stream unit must be token or second');
  for (const k of ['sliceCost', 'initialCharge', 'required', 'paid', 'charged'] as const) checkAmount(st[k], k);
  checkReceiptId(st.receiptId, 'receiptId');
  if (st.pendingReceiptId !== null) checkReceiptId(st.pendingReceiptId, 'pendingReceiptId');
  checkCount(st.vouchers, 'vouchers');
  if (!STREAM_STATUSES.has(st.status)) throw new TypeError('stream status must be open or ended');
  if (st.reason !== null) checkEndReason(st.reason);
  checkUnitsOrNull(st.units);
  if (st.scheme !== 'channel' && st.scheme !== 'batch-settlement')
    throw new TypeError('stream scheme must be channel or batch-settlement');
}

/** Bounded text without NUL (PostgreSQL text cannot hold it, SQLite can: the adapters would differ). */
function checkBoundedText(value: unknown, name: string, max: number): void {
  checkText(value, name);
  const text = value as string;
  if (text.length > max) throw new RangeError(`${name} must be at most ${max} characters`);
  if (text.includes('\0')) throw new TypeError(`${name} must not contain NUL`);
}

function checkHttpUrl(value: unknown, name: string): void {
  checkBoundedText(value, name, RESOURCE_MAX_BYTES);
  const text = value as string;
  if (Buffer.byteLength(text, 'utf8') > RESOURCE_MAX_BYTES)
    throw new RangeError(`${name} must be at most ${RESOURCE_MAX_BYTES} bytes of UTF-8`);
  let protocol: string;
  try {
    protocol = new URL(text).protocol;
  } catch {
    throw new TypeError(`${name} must be an http(s) URL`);
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new TypeError(`${name} must be an http(s) URL`);
}

function checkAddress(value: unknown, name: string): void {
  if (!isAddress(value)) throw new TypeError(`${name} must be a G… or C… address`);
}

function checkIsoTime(value: unknown, name: string): void {
  if (typeof value !== 'string' || !ISO_MS_RE.test(value) || Number.isNaN(Date.parse(value))) {
    throw new TypeError(`${name} must be an ISO 8601 UTC time with milliseconds`);
  }
}

/** JSON text of an `accepts` array or a `bazaar` object, bounded; JSON.stringify refuses a bigint or a cycle. */
export function catalogJsonText(value: unknown, name: string, kind: 'array' | 'object'): string {
  const ok =
    kind === 'array' ? Array.isArray(value) : value !== null && typeof value === 'object' && !Array.isArray(value);
  if (!ok) throw new TypeError(`${name} must be a JSON ${kind}`);
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text, 'utf8') > CATALOG_JSON_MAX_BYTES)
    throw new RangeError(`${name} must be at most ${CATALOG_JSON_MAX_BYTES} bytes of JSON`);
  return text;
}

/** Payments one catalog record may stand for (a recorder's batch). */
export const CATALOG_PAYMENTS_MAX = 1_000_000_000;

function checkCatalogRecord(op: Extract<WriteOp, { op: 'catalog.record' }>): void {
  checkHttpUrl(op.resource, 'resource');
  checkAddress(op.payTo, 'payTo');
  checkAddress(op.payer, 'payer');
  if (!Number.isSafeInteger(op.payments) || op.payments < 1 || op.payments > CATALOG_PAYMENTS_MAX)
    throw new RangeError(`payments must be a whole number from 1 to ${CATALOG_PAYMENTS_MAX}`);
  catalogJsonText(op.accepts, 'accepts', 'array');
  catalogJsonText(op.bazaar, 'bazaar', 'object');
  checkBoundedText(op.description, 'description', DESCRIPTION_MAX);
  checkBoundedText(op.mimeType, 'mimeType', MIME_TYPE_MAX);
  checkIsoTime(op.at, 'at');
}

/** A reservation's fingerprint: compared for equality only, so any bounded text (a hash, typically). */
function checkFingerprint(value: unknown): void {
  checkBoundedText(value, 'fingerprint', FINGERPRINT_MAX);
  if (value === '') throw new TypeError('fingerprint must not be empty');
}

function checkReservation(r: ChannelRecord['reservation']): void {
  if (r === null) return;
  if (typeof r !== 'object') throw new TypeError('reservation must be an object or null');
  checkFingerprint(r.fingerprint);
  checkIsoTime(r.until, 'reservation until');
}

function checkChannel(c: ChannelRecord): void {
  checkChannelId(c.id);
  for (const k of ['network', 'channelContract', 'payer', 'payee', 'asset', 'createdAt'] as const) checkText(c[k], k);
  if (!HEX32_RE.test(c.voucherKey)) throw new TypeError('voucherKey must be 64 lowercase hex characters');
  checkAmount(c.deposit, 'deposit');
  checkAmount(c.claimed, 'claimed');
  checkAmount(c.lastAccepted, 'lastAccepted');
  checkAmount(c.charged, 'charged');
  if (c.receiverAuthorizer !== null) checkAddress(c.receiverAuthorizer, 'receiverAuthorizer');
  checkCount(c.refundNonce, 'refundNonce');
  checkReservation(c.reservation);
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
      if (op.expectedCharged !== undefined) checkAmount(op.expectedCharged, 'expectedCharged');
      checkAmount(op.cumulative, 'cumulative');
      checkText(op.signature, 'signature');
      return checkText(op.at, 'at');
    case 'channel.reserve':
      checkChannelId(op.channelId);
      checkAmount(op.expectedCharged, 'expectedCharged');
      checkFingerprint(op.fingerprint);
      checkIsoTime(op.until, 'until');
      return checkIsoTime(op.at, 'at');
    case 'channel.charge':
      checkChannelId(op.channelId);
      checkAmount(op.expectedCharged, 'expectedCharged');
      checkAmount(op.charge, 'charge');
      checkAmount(op.ceiling, 'ceiling');
      checkText(op.signature, 'signature');
      checkFingerprint(op.fingerprint);
      return checkIsoTime(op.at, 'at');
    case 'channel.release':
      checkChannelId(op.channelId);
      return checkFingerprint(op.fingerprint);
    case 'channel.refunded':
      checkChannelId(op.channelId);
      checkCount(op.refundNonce, 'refundNonce');
      return checkAmount(op.deposit, 'deposit');
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
      if (!EVENT_SOURCES.has(op.event.source))
        throw new TypeError('event source must be gateway, facilitator or ledger');
      if (op.event.channelId !== undefined) checkChannelId(op.event.channelId);
      if (op.event.accounts?.some((a) => typeof a !== 'string')) throw new TypeError('event accounts must be strings');
      eventDataText(op.event.data);
      return;
    case 'receipt':
      if (!HEX32_RE.test(op.receipt.id)) throw new TypeError('receipt id must be 64 lowercase hex characters');
      checkChannelId(receiptChannelId(op.receipt.channelId));
      return checkAmount(receiptCumulative(op.receipt.cumulative), 'receipt cumulative');
    case 'payment.id':
      checkBoundedText(op.payTo, 'payTo', 128);
      if (typeof op.id !== 'string' || !PAYMENT_ID_RE.test(op.id))
        throw new TypeError('payment id must be 16–128 characters of [A-Za-z0-9_-]');
      checkFingerprint(op.fingerprint);
      checkText(op.response, 'response');
      checkIsoTime(op.at, 'at');
      return checkIsoTime(op.expiresAt, 'expiresAt');
    case 'idempotency':
    case 'idempotency.take':
    case 'meta.set':
    case 'meta.init':
      return checkText(op.key, 'key');
    case 'stream.open':
      checkStream(op.stream);
      for (const k of ['maxPerChannel', 'maxPerPayer', 'maxPerPayee', 'maxTotal'] as const) checkLimitValue(op[k], k);
      return;
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
    case 'catalog.record':
      return checkCatalogRecord(op);
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
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new TypeError('event data must be a JSON object');
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

export function checkOffset(offset: number): number {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError('offset must be a non-negative integer');
  return offset;
}
