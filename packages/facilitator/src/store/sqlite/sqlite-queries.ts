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
import type { StatementCache } from './sqlite-ops.js';
import { checkLimit, checkOffset, eventOrder, paddedId } from '../op-checks.js';

const EVENT_COLUMNS = 'e.id, e.type, e.source, e.ts, e.channel_id, e.account, e.accounts, e.data';

export function getChannel(s: StatementCache, id: bigint): ChannelRecord | null {
  const row = s.get('SELECT * FROM channels WHERE id = ?').get(paddedId(id)) as ChannelRow | undefined;
  return row ? channelFromRow(row) : null;
}

export function listChannels(s: StatementCache, filter: ChannelFilter = {}): ChannelRecord[] {
  const { clause, args } = channelWhere(filter, true);
  const limit = filter.limit === undefined ? [] : [checkLimit(filter.limit)];
  const rows = s
    .get(`SELECT * FROM channels ${clause} ORDER BY created_at DESC, id DESC${limit.length ? ' LIMIT ?' : ''}`)
    .all(...args, ...limit) as ChannelRow[];
  return rows.map(channelFromRow);
}

export function countChannels(s: StatementCache, filter: ChannelFilter = {}): number {
  const { clause, args } = channelWhere(filter, false);
  return (s.get(`SELECT COUNT(*) AS n FROM channels ${clause}`).get(...args) as { n: number }).n;
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

export function queryEvents(s: StatementCache, q: EventQuery): StoredEvent[] {
  const where: string[] = [];
  const args: (string | number)[] = [];
  // With an account, walk that account's index rows (already in id order) and join the events.
  const from = q.account === undefined ? 'events e' : 'event_accounts a JOIN events e ON e.id = a.event_id';
  const idColumn = q.account === undefined ? 'e.id' : 'a.event_id';
  if (q.account !== undefined) {
    where.push('a.account = ?');
    args.push(q.account);
  }
  if (q.after !== undefined) {
    where.push(`${idColumn} > ?`);
    args.push(q.after);
  }
  if (q.before !== undefined) {
    where.push(`${idColumn} < ?`);
    args.push(q.before);
  }
  if (q.channelId !== undefined) {
    where.push('e.channel_id = ?');
    args.push(paddedId(q.channelId));
  }
  if (q.types !== undefined) {
    // json_each keeps one statement shape whatever the number of types.
    where.push('e.type IN (SELECT value FROM json_each(?))');
    args.push(JSON.stringify(q.types));
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const order = eventOrder(q) === 'desc' ? 'DESC' : 'ASC';
  const sql = `SELECT ${EVENT_COLUMNS} FROM ${from} ${clause} ORDER BY ${idColumn} ${order} LIMIT ?`;
  const rows = s.get(sql).all(...args, checkLimit(q.limit)) as EventRow[];
  return rows.map(eventFromRow);
}

export function lastEventId(s: StatementCache): number {
  const row = s.get('SELECT COALESCE(MAX(id), 0) AS id FROM events').get() as { id: number };
  return row.id;
}

export function getReceipt(s: StatementCache, id: string): Receipt | null {
  const row = s.get('SELECT body FROM receipts WHERE id = ?').get(id) as { body: string } | undefined;
  return row ? receiptFromBody(row.body) : null;
}

export function findReceipt(s: StatementCache, channelId: bigint, cumulative: bigint): Receipt | null {
  const sql = 'SELECT body FROM receipts WHERE channel_id = ? AND cumulative = ? ORDER BY position LIMIT 1';
  const row = s.get(sql).get(paddedId(channelId), cumulative.toString()) as { body: string } | undefined;
  return row ? receiptFromBody(row.body) : null;
}

export function listReceipts(s: StatementCache, q: ReceiptQuery): { receipt: Receipt; position: number }[] {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (q.payee !== undefined) {
    where.push('payee = ?');
    args.push(q.payee);
  }
  if (q.channelId !== undefined) {
    where.push('channel_id = ?');
    args.push(paddedId(q.channelId));
  }
  if (q.before !== undefined) {
    where.push('position < ?');
    args.push(q.before);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const rows = s
    .get(`SELECT position, body FROM receipts ${clause} ORDER BY position DESC LIMIT ?`)
    .all(...args, checkLimit(q.limit)) as ReceiptRow[];
  return rows.map(positionedReceipt);
}

export function getIdempotent(s: StatementCache, key: string): IdempotentRecord | null {
  const row = s.get('SELECT key, fingerprint, response, at FROM idempotency WHERE key = ?').get(key) as
    IdempotentRecord | undefined;
  return row ?? null;
}

export function getMeta(s: StatementCache, key: string): string | null {
  const row = s.get('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row ? row.value : null;
}

export function getStream(s: StatementCache, id: string): StreamRecord | null {
  const row = s.get('SELECT * FROM streams WHERE id = ?').get(id) as StreamRow | undefined;
  return row ? streamFromRow(row) : null;
}

export function listStreams(s: StatementCache, filter: StreamFilter = {}): StreamRecord[] {
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
  const rows = s.get(`SELECT * FROM streams ${clause} ORDER BY opened_at, id`).all(...args) as StreamRow[];
  return rows.map(streamFromRow);
}

export function countOpenStreams(s: StatementCache, channelId?: bigint): number {
  const row =
    channelId === undefined
      ? (s.get("SELECT COUNT(*) AS n FROM streams WHERE status = 'open'").get() as { n: number })
      : (s
          .get("SELECT COUNT(*) AS n FROM streams WHERE channel_id = ? AND status = 'open'")
          .get(paddedId(channelId)) as { n: number });
  return row.n;
}

export function countOpenStreamsOf(s: StatementCache, party: { payer: string } | { payTo: string }): number {
  const [column, value] = 'payer' in party ? ['payer', party.payer] : ['pay_to', party.payTo];
  return (
    s.get(`SELECT COUNT(*) AS n FROM streams WHERE ${column} = ? AND status = 'open'`).get(value) as { n: number }
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

export function listCatalog(s: StatementCache, q: CatalogQuery): { items: CatalogEntry[]; total: number } {
  const page = { limit: checkLimit(q.limit), offset: checkOffset(q.offset) };
  const rows =
    q.payTo === undefined
      ? s.get(LIST_CATALOG).all(page)
      : s.get(LIST_CATALOG_BY_PAY_TO).all({ ...page, payTo: q.payTo });
  return catalogPage(rows as CatalogPageRow[]);
}
