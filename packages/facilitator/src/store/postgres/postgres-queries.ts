// Reads for PostgresStore. They run on pooled connections outside any write transaction, so they
// only ever see committed data. Optional filters are postgres.js fragments; every value is a
// parameter.
import type { Receipt } from '@svc/core';
import type { Sql } from 'postgres';
import type {
  CatalogEntry,
  CatalogQuery,
  ChannelFilter,
  ChannelRecord,
  EventQuery,
  IdempotentRecord,
  PaymentIdRecord,
  ReceiptQuery,
  StoredEvent,
  StreamFilter,
  StreamRecord,
} from '../port.js';
import {
  catalogPage,
  channelFromRow,
  eventFromRow,
  positionedReceipt,
  receiptFromBody,
  streamFromRow,
} from '../row-mapping.js';
import type { CatalogPageRow, ChannelRow, EventRow, ReceiptRow, StreamRow } from '../row-mapping.js';
import { checkLimit, checkOffset, eventOrder } from '../op-checks.js';

// numeric comes back as text ("42"), never through a float; ids are cast to text explicitly.
// The casts shadow the column names in ORDER BY, so sort keys are written table-qualified.
const CHANNEL_COLUMNS = `id::text AS id, network, channel_contract, payer, payee, asset, voucher_key, deposit::text AS deposit,
  claimed::text AS claimed, last_accepted::text AS last_accepted, last_signature, charged::text AS charged,
  receiver_authorizer, refund_nonce, reserved_fingerprint, reserved_until, expiry_ledger, status, vouchers,
  vouchers_claimed, opened_at, last_voucher_at, closed_at, refunded::text AS refunded, created_at`;

const STREAM_COLUMNS = `id, channel_id::text AS channel_id, payer, pay_to, resource, unit, slice_cost::text AS slice_cost,
  initial_charge::text AS initial_charge, receipt_id, required::text AS required, paid::text AS paid, charged::text AS charged,
  vouchers, pending_receipt_id, status, reason, units, opened_at, last_activity_at, ended_at, scheme`;

export async function getChannel(sql: Sql, id: bigint): Promise<ChannelRecord | null> {
  const [row] = await sql<
    ChannelRow[]
  >`SELECT ${sql.unsafe(CHANNEL_COLUMNS)} FROM channels WHERE id = ${id.toString()}::numeric`;
  return row ? channelFromRow(row) : null;
}

export async function listChannels(sql: Sql, filter: ChannelFilter = {}): Promise<ChannelRecord[]> {
  const rows = await sql<ChannelRow[]>`
    SELECT ${sql.unsafe(CHANNEL_COLUMNS)} FROM channels WHERE true ${channelWhere(sql, filter)}
      ${filter.after === undefined ? sql`` : sql`AND (channels.created_at, channels.id) < (${filter.after.createdAt}, ${filter.after.id.toString()}::numeric)`}
    ORDER BY channels.created_at DESC, channels.id DESC
    ${filter.limit === undefined ? sql`` : sql`LIMIT ${checkLimit(filter.limit)}`}`;
  return rows.map(channelFromRow);
}

export async function countChannels(sql: Sql, filter: ChannelFilter = {}): Promise<number> {
  const [row] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM channels WHERE true ${channelWhere(sql, filter)}`;
  return Number(row?.n ?? 0);
}

function channelWhere(sql: Sql, filter: ChannelFilter) {
  return sql`
      ${filter.payer === undefined ? sql`` : sql`AND payer = ${filter.payer}`}
      ${filter.payee === undefined ? sql`` : sql`AND payee = ${filter.payee}`}
      ${filter.status === undefined ? sql`` : sql`AND status = ${filter.status}`}`;
}

export async function queryEvents(sql: Sql, query: EventQuery): Promise<StoredEvent[]> {
  const byAccount = query.account !== undefined;
  // With an account, walk that account's index rows (already in id order) and join the events.
  const from = byAccount ? sql`event_accounts a JOIN events e ON e.id = a.event_id` : sql`events e`;
  const id = byAccount ? sql`a.event_id` : sql`e.id`;
  const rows = await sql<EventRow[]>`
    SELECT e.id, e.type, e.source, e.ts, e.channel_id::text AS channel_id, e.account, array_to_json(e.accounts)::text AS accounts, e.data
    FROM ${from} WHERE true
      ${query.account === undefined ? sql`` : sql`AND a.account = ${query.account}`}
      ${query.after === undefined ? sql`` : sql`AND ${id} > ${query.after}`}
      ${query.before === undefined ? sql`` : sql`AND ${id} < ${query.before}`}
      ${query.channelId === undefined ? sql`` : sql`AND e.channel_id = ${query.channelId.toString()}::numeric`}
      ${query.types === undefined ? sql`` : sql`AND e.type IN (SELECT json_array_elements_text(${JSON.stringify(query.types)}::text::json))`}
    ORDER BY ${id} ${eventOrder(query) === 'desc' ? sql`DESC` : sql`ASC`}
    LIMIT ${checkLimit(query.limit)}`;
  return rows.map(eventFromRow);
}

export async function lastEventId(sql: Sql): Promise<number> {
  const [row] = await sql<{ id: string }[]>`SELECT COALESCE(MAX(id), 0) AS id FROM events`;
  return Number(row?.id ?? 0);
}

export async function getReceipt(sql: Sql, id: string): Promise<Receipt | null> {
  const [row] = await sql<{ body: string }[]>`SELECT body FROM receipts WHERE id = ${id}`;
  return row ? receiptFromBody(row.body) : null;
}

export async function findReceipt(sql: Sql, channelId: bigint, cumulative: bigint): Promise<Receipt | null> {
  const [row] = await sql<{ body: string }[]>`
    SELECT body FROM receipts WHERE channel_id = ${channelId.toString()}::numeric AND cumulative = ${cumulative.toString()}::numeric
    ORDER BY position LIMIT 1`;
  return row ? receiptFromBody(row.body) : null;
}

export async function listReceipts(sql: Sql, query: ReceiptQuery): Promise<{ receipt: Receipt; position: number }[]> {
  const rows = await sql<ReceiptRow[]>`
    SELECT position, body FROM receipts WHERE true
      ${query.payee === undefined ? sql`` : sql`AND payee = ${query.payee}`}
      ${query.channelId === undefined ? sql`` : sql`AND channel_id = ${query.channelId.toString()}::numeric`}
      ${query.before === undefined ? sql`` : sql`AND position < ${query.before}`}
    ORDER BY position DESC LIMIT ${checkLimit(query.limit)}`;
  return rows.map(positionedReceipt);
}

export async function getIdempotent(sql: Sql, key: string): Promise<IdempotentRecord | null> {
  const [row] = await sql<
    IdempotentRecord[]
  >`SELECT key, fingerprint, response, at FROM idempotency WHERE key = ${key}`;
  return row ? { key: row.key, fingerprint: row.fingerprint, response: row.response, at: row.at } : null;
}

export async function getPaymentId(sql: Sql, payTo: string, id: string, at: string): Promise<PaymentIdRecord | null> {
  const [row] = await sql<
    { pay_to: string; id: string; fingerprint: string; response: string; at: string; expires_at: string }[]
  >`SELECT pay_to, id, fingerprint, response, at, expires_at FROM payment_ids
    WHERE pay_to = ${payTo} AND id = ${id} AND expires_at > ${at}`;
  return row
    ? {
        payTo: row.pay_to,
        id: row.id,
        fingerprint: row.fingerprint,
        response: row.response,
        at: row.at,
        expiresAt: row.expires_at,
      }
    : null;
}

export async function getMeta(sql: Sql, key: string): Promise<string | null> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM meta WHERE key = ${key}`;
  return row ? row.value : null;
}

export async function getStream(sql: Sql, id: string): Promise<StreamRecord | null> {
  const [row] = await sql<StreamRow[]>`SELECT ${sql.unsafe(STREAM_COLUMNS)} FROM streams WHERE id = ${id}`;
  return row ? streamFromRow(row) : null;
}

// opened_at, last_activity_at and id are COLLATE "C": byte order, as in SQLite, and time order for ISO text.
export async function listStreams(sql: Sql, filter: StreamFilter = {}): Promise<StreamRecord[]> {
  const rows = await sql<StreamRow[]>`
    SELECT ${sql.unsafe(STREAM_COLUMNS)} FROM streams WHERE true
      ${filter.status === undefined ? sql`` : sql`AND status = ${filter.status}`}
      ${filter.channelId === undefined ? sql`` : sql`AND streams.channel_id = ${filter.channelId.toString()}::numeric`}
      ${filter.idleBefore === undefined ? sql`` : sql`AND last_activity_at < ${filter.idleBefore}`}
    ORDER BY streams.opened_at, streams.id`;
  return rows.map(streamFromRow);
}

export async function countOpenStreams(sql: Sql, channelId?: bigint): Promise<number> {
  const [row] = await sql<{ n: string }[]>`
    SELECT count(*) AS n FROM streams WHERE status = 'open'
      ${channelId === undefined ? sql`` : sql`AND channel_id = ${channelId.toString()}::numeric`}`;
  return Number(row?.n ?? 0);
}

export async function countOpenStreamsOf(sql: Sql, party: { payer: string } | { payTo: string }): Promise<number> {
  const [row] = await sql<{ n: string }[]>`
    SELECT count(*) AS n FROM streams WHERE status = 'open'
      ${'payer' in party ? sql`AND payer = ${party.payer}` : sql`AND pay_to = ${party.payTo}`}`;
  return Number(row?.n ?? 0);
}

/**
 * One statement gives the page and the total from one snapshot (two reads on the pool could see
 * different commits). The page is LEFT JOINed to the count, so an empty page still brings one row,
 * with the total and no listing. resource, pay_to and last_updated are COLLATE "C": byte order, as
 * in SQLite.
 */
export async function listCatalog(sql: Sql, query: CatalogQuery): Promise<{ items: CatalogEntry[]; total: number }> {
  const limit = checkLimit(query.limit);
  const offset = checkOffset(query.offset);
  const where = query.payTo === undefined ? sql`` : sql`WHERE pay_to = ${query.payTo}`;
  const rows = await sql<CatalogPageRow[]>`
    SELECT t.total, c.* FROM (SELECT count(*) AS total FROM catalog ${where}) t
    LEFT JOIN (
      SELECT resource, pay_to, accepts, bazaar, description, mime_type, payments, payers, first_seen, last_updated FROM catalog ${where}
      ORDER BY payments DESC, last_updated DESC, resource, pay_to LIMIT ${limit} OFFSET ${offset}
    ) c ON true
    ORDER BY c.payments DESC, c.last_updated DESC, c.resource, c.pay_to`;
  return catalogPage(rows);
}
