// PostgresStore: the Store (port.ts) shared by several facilitator instances, on postgres.js.
//
//   const store = await PostgresStore.open({ url: process.env.DATABASE_URL, schema: 'svc' });
//   await store.migrate();
//
// Group commit: write() calls queue while the previous batch is in flight and go out together in
// one pipelined transaction, each call in its own SAVEPOINT (postgres-batch.ts); a failed
// precondition rolls back that call only. Promises settle after COMMIT; if the transaction fails,
// every call of the batch rejects.
// Reads use other pooled connections, so they only ever see committed data.
//
// Event ids in store order, across processes: an identity column hands out ids before commit, and
// concurrent transactions can commit in the other order, so a feed reading `id > last` could skip
// an event that commits late with a smaller id. Every write transaction therefore first takes a
// transaction-scoped advisory lock (one per schema): write batches — and the ids they allocate —
// are serialised across all instances, and the lock is released only after the commit is
// visible. Batching makes this cheap (one lock per batch, not per voucher), and it also means
// two batches can never deadlock on channel rows locked in opposite orders.
import postgres from 'postgres';
import type { Sql } from 'postgres';
import type { Receipt } from '@svc/core';
import { GroupCommit } from './group-commit.js';
import type { CallOutcome } from './group-commit.js';
import { MIGRATION_LOCK_CLASS, appliedPostgresVersions, checkSchemaName, migratePostgres } from './migrations/postgres.js';
import type {
  CatalogEntry,
  CatalogQuery,
  ChannelFilter,
  ChannelRecord,
  EventQuery,
  IdempotentRecord,
  ReceiptQuery,
  Store,
  StoredEvent,
  StreamFilter,
  StreamRecord,
  WriteOp,
  WriteResult,
} from './port.js';
import { runPostgresBatch } from './postgres-batch.js';
import * as q from './postgres-queries.js';

/** Second advisory lock class, next to the migrations' ("svc\x02"). */
export const WRITE_LOCK_CLASS = MIGRATION_LOCK_CLASS + 1;
/**
 * Each call's savepoint that writes takes a subtransaction id; past 64 per transaction
 * (PGPROC_MAX_CACHED_SUBXIDS) other sessions' snapshots overflow to pg_subtrans lookups.
 */
export const POSTGRES_MAX_BATCH = 64;
const DEFAULT_POOL_SIZE = 10;
const DEFAULT_SCHEMA = 'public';
/** A write transaction holds the advisory lock: never let a stalled client hold it for long. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_S = 5;
/**
 * How long a statement waits for a lock (a row, a table, the write lock of another instance's
 * batch) before it fails: the same 5 s as SQLite's busy timeout. The failed write acknowledged
 * nothing and answers 503 with Retry-After (store/faults.ts) instead of hanging the request.
 */
export const DEFAULT_LOCK_TIMEOUT_MS = 5_000;
/**
 * Statements in flight per connection. postgres.js defaults to 100 and past that sends one
 * statement per round trip; a pipelined batch of 64 calls is a few hundred statements.
 */
const MAX_PIPELINE = 1_000;

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// URL. */
  url: string;
  /** Schema holding the tables (created by migrate()); default `public`. */
  schema?: string;
  /** Pool size; one connection at a time carries the write batch. */
  max?: number;
  /** Most write() calls per transaction. */
  maxBatch?: number;
  /** lock_timeout of every statement (default DEFAULT_LOCK_TIMEOUT_MS). */
  lockTimeoutMs?: number;
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly schema: string;
  readonly #sql: Sql;
  readonly #group: GroupCommit;

  private constructor(sql: Sql, schema: string, maxBatch: number) {
    this.#sql = sql;
    this.schema = schema;
    this.#group = new GroupCommit((calls) => this.#commitBatch(calls), maxBatch);
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
    // max_pipeline is a postgres.js 3.4 option its type declarations leave out; a variable
    // (not a literal) passes it through the type check.
    const settings = {
      max: options.max ?? DEFAULT_POOL_SIZE,
      max_pipeline: MAX_PIPELINE,
      onnotice: () => undefined,
      connection: {
        application_name: 'svc-facilitator',
        search_path: schema,
        idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
        lock_timeout: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
      },
    };
    const sql = postgres(options.url, settings);
    try {
      await sql`SELECT 1`;
    } catch (error) {
      await sql.end({ timeout: 0 });
      throw error;
    }
    return new PostgresStore(sql, schema, options.maxBatch ?? POSTGRES_MAX_BATCH);
  }

  migrate(): Promise<void> {
    return migratePostgres(this.#sql, this.schema);
  }

  /** Schema versions recorded in the database. */
  appliedMigrations(): Promise<number[]> {
    return appliedPostgresVersions(this.#sql, this.schema);
  }

  write(ops: WriteOp[]): Promise<WriteResult> {
    return this.#group.submit(ops);
  }

  getChannel(id: bigint): Promise<ChannelRecord | null> {
    return q.getChannel(this.#sql, id);
  }

  listChannels(filter?: ChannelFilter): Promise<ChannelRecord[]> {
    return q.listChannels(this.#sql, filter);
  }

  countChannels(filter?: ChannelFilter): Promise<number> {
    return q.countChannels(this.#sql, filter);
  }

  events(query: EventQuery): Promise<StoredEvent[]> {
    return q.queryEvents(this.#sql, query);
  }

  lastEventId(): Promise<number> {
    return q.lastEventId(this.#sql);
  }

  getReceipt(id: string): Promise<Receipt | null> {
    return q.getReceipt(this.#sql, id);
  }

  findReceipt(channelId: bigint, cumulative: bigint): Promise<Receipt | null> {
    return q.findReceipt(this.#sql, channelId, cumulative);
  }

  listReceipts(query: ReceiptQuery): Promise<{ receipt: Receipt; position: number }[]> {
    return q.listReceipts(this.#sql, query);
  }

  getIdempotent(key: string): Promise<IdempotentRecord | null> {
    return q.getIdempotent(this.#sql, key);
  }

  getMeta(key: string): Promise<string | null> {
    return q.getMeta(this.#sql, key);
  }

  getStream(id: string): Promise<StreamRecord | null> {
    return q.getStream(this.#sql, id);
  }

  listStreams(filter?: StreamFilter): Promise<StreamRecord[]> {
    return q.listStreams(this.#sql, filter);
  }

  countOpenStreams(channelId?: bigint): Promise<number> {
    return q.countOpenStreams(this.#sql, channelId);
  }

  countOpenStreamsOf(party: { payer: string } | { payTo: string }): Promise<number> {
    return q.countOpenStreamsOf(this.#sql, party);
  }

  listCatalog(query: CatalogQuery): Promise<{ items: CatalogEntry[]; total: number }> {
    return q.listCatalog(this.#sql, query);
  }

  /** Commits what is queued, then closes the pool. */
  async close(): Promise<void> {
    await this.#group.close();
    await this.#sql.end({ timeout: CLOSE_TIMEOUT_S });
  }

  #commitBatch(calls: readonly (readonly WriteOp[])[]): Promise<CallOutcome[]> {
    return runPostgresBatch(this.#sql, { lockClass: WRITE_LOCK_CLASS, lockName: this.schema }, calls);
  }
}
