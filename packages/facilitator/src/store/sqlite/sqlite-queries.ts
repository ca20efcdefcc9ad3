// Reads for SqliteStore, synchronous. Queries with optional filters are built from a fixed set of
// fragments, so the statement cache holds a bounded number of shapes.
import type { Receipt } from '@svc/core';
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
import type { StatementCache } from './sqlite-statements.js';
import { checkLimit, checkOffset, eventOrder, paddedId } from '../op-checks.js';

const EVENT_COLUMNS = 'e.id, e.type, e.source, e.ts, e.channel_id, e.account, e.accounts, e.data';

export function getChannel(stmts: StatementCache, id: bigint): ChannelRecord | null {
  const row = stmts.get('SELECT * FROM channels WHERE id = ?').get(paddedId(id)) as ChannelRow | undefined;
  return row ? channelFromRow(row) : null;
}

export function listChannels(stmts: StatementCache, filter: ChannelFilter = {}): ChannelRecord[] {
  const { clause, args } = channelWhere(filter, true);
  const limit = filter.limit === undefined ? [] : [checkLimit(filter.limit)];
  const rows = stmts
    .get(`SELECT * FROM channels ${clause} ORDER BY created_at DESC, id DESC${limit.length ? ' LIMIT ?' : ''}`)
    .all(...args, ...limit) as ChannelRow[];
  return rows.map(channelFromRow);
}

export function countChannels(stmts: StatementCache, filter: ChannelFilter = {}): number {
  const { clause, args } = channelWhere(filter, false);
  return (stmts.get(`SELECT COUNT(*) AS n FROM channels ${clause}`).get(...args) as { n: number }).n;
}

function channelWhere(filter: ChannelFilter, paged: boolean): { clause: string; args: string[] } {
  const where: string[] = [];
  const args: string[] = [];
  for (const key of ['payer', 'payee', 'status'] as const) {
    const value = filter[key];
    if (value === undefined) continue;
    where.push(`${key} = ?`);
    args.push(value);
  }
  if (paged && filter.after) {
    // A row value, so the (…, created_at, id) indexes seek straight to the page.
    where.push('(created_at, id) < (?, ?)');
    args.push(filter.after.createdAt, paddedId(filter.after.id));
  }
  return { clause: where.length ? `WHERE ${where.join(' AND ')}` : '', args };
}

export function queryEvents(stmts: StatementCache, query: EventQuery): StoredEvent[] {
  const where: string[] = [];
  const args: (string | number)[] = [];
  // With an account, walk that account's index rows (already in id order) and join the events.
  const from = query.account === undefined ? 'events e' : 'event_accounts a JOIN events e ON e.id = a.event_id';
  const idColumn = query.account === undefined ? 'e.id' : 'a.event_id';
  if (query.account !== undefined) {
    where.push('a.account = ?');
    args.push(query.account);
  }
  if (query.after !== undefined) {
    where.push(`${idColumn} > ?`);
    args.push(query.after);
  }
  if (query.before !== undefined) {
    where.push(`${idColumn} < ?`);
    args.push(query.before);
  }
  if (query.channelId !== undefined) {
    where.push('e.channel_id = ?');
    args.push(paddedId(query.channelId));
  }
  if (query.types !== undefined) {
    // json_each keeps one statement shape whatever the number of types.
    where.push('e.type IN (SELECT value FROM json_each(?))');
    args.push(JSON.stringify(query.types));
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const order = eventOrder(query) === 'desc' ? 'DESC' : 'ASC';
  const sql = `SELECT ${EVENT_COLUMNS} FROM ${from} ${clause} ORDER BY ${idColumn} ${order} LIMIT ?`;
  const rows = stmts.get(sql).all(...args, checkLimit(query.limit)) as EventRow[];
  return rows.map(eventFromRow);
}

export function lastEventId(stmts: StatementCache): number {
  const row = stmts.get('SELECT COALESCE(MAX(id), 0) AS id FROM events').get() as { id: number };
  return row.id;
}

export function getReceipt(stmts: StatementCache, id: string): Receipt | null {
  const row = stmts.get('SELECT body FROM receipts WHERE id = ?').get(id) as { body: string } | undefined;
  return row ? receiptFromBody(row.body) : null;
}

export function findReceipt(stmts: StatementCache, channelId: bigint, cumulative: bigint): Receipt | null {
  const sql = 'SELECT body FROM receipts WHERE channel_id = ? AND cumulative = ? ORDER BY position LIMIT 1';
  const row = stmts.get(sql).get(paddedId(channelId), cumulative.toString()) as { body: string } | undefined;
  return row ? receiptFromBody(row.body) : null;
}

export function listReceipts(stmts: StatementCache, query: ReceiptQuery): { receipt: Receipt; position: number }[] {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (query.payee !== undefined) {
    where.push('payee = ?');
    args.push(query.payee);
  }
  if (query.channelId !== undefined) {
    where.push('channel_id = ?');
    args.push(paddedId(query.channelId));
  }
  if (query.before !== undefined) {
    where.push('position < ?');
    args.push(query.before);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const rows = stmts
    .get(`SELECT position, body FROM receipts ${clause} ORDER BY position DESC LIMIT ?`)
    .all(...args, checkLimit(query.limit)) as ReceiptRow[];
  return rows.map(positionedReceipt);
}

export function getIdempotent(stmts: StatementCache, key: string): IdempotentRecord | null {
  const row = stmts.get('SELECT key, fingerprint, response, at FROM idempotency WHERE key = ?').get(key) as
    IdempotentRecord | undefined;
  return row ?? null;
}

export function getPaymentId(stmts: StatementCache, payTo: string, id: string, at: string): PaymentIdRecord | null {
  const row = stmts
    .get(
      `SELECT pay_to, id, fingerprint, response, at, expires_at FROM payment_ids
       WHERE pay_to = ? AND id = ? AND expires_at > ?`,
    )
    .get(payTo, id, at) as PaymentIdRow | undefined;
  return row ? paymentIdOf(row) : null;
}

interface PaymentIdRow {
  pay_to: string;
  id: string;
  fingerprint: string;
  response: string;
  at: string;
  expires_at: string;
}

function paymentIdOf(row: PaymentIdRow): PaymentIdRecord {
  return {
    payTo: row.pay_to,
    id: row.id,
    fingerprint: row.fingerprint,
    response: row.response,
    at: row.at,
    expiresAt: row.expires_at,
  };
}

export function getMeta(stmts: StatementCache, key: string): string | null {
  const row = stmts.get('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row ? row.value : null;
}

export function getStream(stmts: StatementCache, id: string): StreamRecord | null {
  const row = stmts.get('SELECT * FROM streams WHERE id = ?').get(id) as StreamRow | undefined;
  return row ? streamFromRow(row) : null;
}

export function listStreams(stmts: StatementCache, filter: StreamFilter = {}): StreamRecord[] {
  const where: string[] = [];
  const args: string[] = [];
  if (filter.status !== undefined) {
    where.push('status = ?');
    args.push(filter.status);
  }
  if (filter.channelId !== undefined) {
    where.push('channel_id = ?');
    args.push(paddedId(filter.channelId));
  }
  if (filter.idleBefore !== undefined) {
    // ISO text in one format: byte order is time order.
    where.push('last_activity_at < ?');
    args.push(filter.idleBefore);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const rows = stmts.get(`SELECT * FROM streams ${clause} ORDER BY opened_at, id`).all(...args) as StreamRow[];
  return rows.map(streamFromRow);
}

export function countOpenStreams(stmts: StatementCache, channelId?: bigint): number {
  const row =
    channelId === undefined
      ? (stmts.get("SELECT COUNT(*) AS n FROM streams WHERE status = 'open'").get() as { n: number })
      : (stmts
          .get("SELECT COUNT(*) AS n FROM streams WHERE channel_id = ? AND status = 'open'")
          .get(paddedId(channelId)) as { n: number });
  return row.n;
}

export function countOpenStreamsOf(stmts: StatementCache, party: { payer: string } | { payTo: string }): number {
  const [column, value] = 'payer' in party ? ['payer', party.payer] : ['pay_to', party.payTo];
  return (
    stmts.get(`SELECT COUNT(*) AS n FROM streams WHERE ${column} = ? AND status = 'open'`).get(value) as { n: number }
  ).n;
}

const CATALOG_ORDER = 'payments DESC, last_updated DESC, resource, pay_to';

/**
 * One statement gives the page and the total from one snapshot (a commit of the writer thread
 * could otherwise land between two reads). The page is LEFT JOINed to the count, so an empty page
 * still brings one row, with the total and no listing.
 */
function catalogSql(where: string): string {
  return `SELECT t.total, c.* FROM (SELECT COUNT(*) AS total FROM catalog ${where}) t
LEFT JOIN (SELECT * FROM catalog ${where} ORDER BY ${CATALOG_ORDER} LIMIT @limit OFFSET @offset) c ON true
ORDER BY c.payments DESC, c.last_updated DESC, c.resource, c.pay_to`;
}

const LIST_CATALOG = catalogSql('');
const LIST_CATALOG_BY_PAY_TO = catalogSql('WHERE pay_to = @payTo');

export function listCatalog(stmts: StatementCache, query: CatalogQuery): { items: CatalogEntry[]; total: number } {
  const page = { limit: checkLimit(query.limit), offset: checkOffset(query.offset) };
  const rows =
    query.payTo === undefined
      ? stmts.get(LIST_CATALOG).all(page)
      : stmts.get(LIST_CATALOG_BY_PAY_TO).all({ ...page, payTo: query.payTo });
  return catalogPage(rows as CatalogPageRow[]);
}
