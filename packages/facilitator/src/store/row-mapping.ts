// Rows to port records, for both adapters. The two databases hand back slightly different shapes
// (SQLite: padded id text, JSON text columns; PostgreSQL: numeric and int8 as text, text[] and
// json parsed), so each mapper accepts either and always returns bigint for ids and amounts.
import type { Receipt, StreamEndReason } from '@svc/core';
import type {
  CatalogEntry,
  ChannelRecord,
  ChannelStatus,
  NewEvent,
  StoredEvent,
  StreamRecord,
  StreamScheme,
  StreamStatus,
} from './port.js';
import { toBigint, toBigintOrNull } from './op-checks.js';

export interface ChannelRow {
  id: string;
  network: string;
  channel_contract: string;
  payer: string;
  payee: string;
  asset: string;
  voucher_key: string;
  deposit: string;
  claimed: string;
  last_accepted: string;
  last_signature: string | null;
  charged: string;
  receiver_authorizer: string | null;
  refund_nonce: number | string;
  reserved_fingerprint: string | null;
  reserved_until: string | null;
  expiry_ledger: number | string;
  status: string;
  vouchers: number | string;
  vouchers_claimed: number | string;
  opened_at: string | null;
  last_voucher_at: string | null;
  closed_at: string | null;
  refunded: string | null;
  created_at: string;
}

export interface EventRow {
  id: number | string;
  type: string;
  source: string;
  ts: string;
  channel_id: string | null;
  account: string | null;
  accounts: string | string[];
  data: string | Record<string, unknown>;
}

export interface StreamRow {
  id: string;
  channel_id: string;
  payer: string;
  pay_to: string;
  resource: string;
  unit: string;
  slice_cost: string;
  initial_charge: string;
  receipt_id: string;
  required: string;
  paid: string;
  charged: string;
  vouchers: number | string;
  pending_receipt_id: string | null;
  status: string;
  reason: string | null;
  units: number | string | null;
  opened_at: string;
  last_activity_at: string;
  ended_at: string | null;
  scheme: string;
}

export interface CatalogRow {
  resource: string;
  pay_to: string;
  accepts: string | unknown[];
  bazaar: string | Record<string, unknown>;
  description: string;
  mime_type: string;
  payments: number | string;
  payers: number | string;
  first_seen: string;
  last_updated: string;
}

export interface ReceiptRow {
  position: number | string;
  body: string;
}

/** Counts (ledger numbers, voucher tallies) are far below 2^53; amounts never come through here. */
function count(value: number | string, column: string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new TypeError(`column ${column} holds no safe integer`);
  return n;
}

/** The ops write both reservation columns or neither; a row with only one of them holds none. */
function reservationFromRow(r: ChannelRow): ChannelRecord['reservation'] {
  if (r.reserved_fingerprint === null || r.reserved_until === null) return null;
  return { fingerprint: r.reserved_fingerprint, until: r.reserved_until };
}

export function channelFromRow(r: ChannelRow): ChannelRecord {
  return {
    id: toBigint(r.id, 'id'),
    network: r.network,
    channelContract: r.channel_contract,
    payer: r.payer,
    payee: r.payee,
    asset: r.asset,
    voucherKey: r.voucher_key,
    deposit: toBigint(r.deposit, 'deposit'),
    claimed: toBigint(r.claimed, 'claimed'),
    lastAccepted: toBigint(r.last_accepted, 'last_accepted'),
    lastSignature: r.last_signature,
    charged: toBigint(r.charged, 'charged'),
    receiverAuthorizer: r.receiver_authorizer,
    refundNonce: count(r.refund_nonce, 'refund_nonce'),
    reservation: reservationFromRow(r),
    expiryLedger: count(r.expiry_ledger, 'expiry_ledger'),
    status: r.status as ChannelStatus,
    vouchers: count(r.vouchers, 'vouchers'),
    vouchersClaimed: count(r.vouchers_claimed, 'vouchers_claimed'),
    openedAt: r.opened_at,
    lastVoucherAt: r.last_voucher_at,
    closedAt: r.closed_at,
    refunded: toBigintOrNull(r.refunded, 'refunded'),
    createdAt: r.created_at,
  };
}

export function streamFromRow(r: StreamRow): StreamRecord {
  return {
    id: r.id,
    channelId: toBigint(r.channel_id, 'channel_id'),
    payer: r.payer,
    payTo: r.pay_to,
    resource: r.resource,
    unit: r.unit as StreamRecord['unit'],
    sliceCost: toBigint(r.slice_cost, 'slice_cost'),
    initialCharge: toBigint(r.initial_charge, 'initial_charge'),
    receiptId: r.receipt_id,
    required: toBigint(r.required, 'required'),
    paid: toBigint(r.paid, 'paid'),
    charged: toBigint(r.charged, 'charged'),
    vouchers: count(r.vouchers, 'vouchers'),
    pendingReceiptId: r.pending_receipt_id,
    status: r.status as StreamStatus,
    reason: r.reason as StreamEndReason | null,
    units: r.units === null ? null : count(r.units, 'units'),
    openedAt: r.opened_at,
    lastActivityAt: r.last_activity_at,
    endedAt: r.ended_at,
    scheme: r.scheme as StreamScheme,
  };
}

/** accepts and bazaar come back as SQLite JSON text or as PostgreSQL json already parsed. */
export function catalogFromRow(r: CatalogRow): CatalogEntry {
  return {
    resource: r.resource,
    payTo: r.pay_to,
    accepts: typeof r.accepts === 'string' ? (JSON.parse(r.accepts) as unknown[]) : r.accepts,
    bazaar: typeof r.bazaar === 'string' ? (JSON.parse(r.bazaar) as Record<string, unknown>) : r.bazaar,
    description: r.description,
    mimeType: r.mime_type,
    payments: count(r.payments, 'payments'),
    payers: count(r.payers, 'payers'),
    firstSeen: r.first_seen,
    lastUpdated: r.last_updated,
  };
}

/** A row of a catalog page query: the total, and one listing or, for an empty page, none. */
export type CatalogPageRow = { total: number | string } & (CatalogRow | { resource: null });

export function catalogPage(rows: readonly CatalogPageRow[]): { items: CatalogEntry[]; total: number } {
  const items = rows.flatMap((r) => (r.resource === null ? [] : [catalogFromRow(r)]));
  return { items, total: rows[0] === undefined ? 0 : count(rows[0].total, 'total') };
}

export function eventFromRow(r: EventRow): StoredEvent {
  const accounts = typeof r.accounts === 'string' ? (JSON.parse(r.accounts) as string[]) : r.accounts;
  const data = typeof r.data === 'string' ? (JSON.parse(r.data) as Record<string, unknown>) : r.data;
  return {
    id: count(r.id, 'events.id'),
    type: r.type,
    source: r.source as StoredEvent['source'],
    ts: r.ts,
    channelId: toBigintOrNull(r.channel_id, 'channel_id'),
    account: r.account,
    accounts,
    data,
  };
}

/** The stored text is the receipt exactly as issued, so parsing it gives back the same fields in the same order. */
export function receiptFromBody(body: string): Receipt {
  return JSON.parse(body) as Receipt;
}

export function positionedReceipt(r: ReceiptRow): { receipt: Receipt; position: number } {
  return { receipt: receiptFromBody(r.body), position: count(r.position, 'position') };
}

/**
 * An event as write() reports it, equal to what events() later reads: `account` is the first of
 * `accounts`, and `data` is the stored JSON text parsed back (so an `undefined` field is gone in both).
 */
export function storedEvent(id: number, event: NewEvent, dataText: string): StoredEvent {
  const accounts = [...(event.accounts ?? [])];
  return {
    id,
    type: event.type,
    source: event.source,
    ts: event.ts,
    channelId: event.channelId ?? null,
    account: accounts[0] ?? null,
    accounts,
    data: JSON.parse(dataText) as Record<string, unknown>,
  };
}
