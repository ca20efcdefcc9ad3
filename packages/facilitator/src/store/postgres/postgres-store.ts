// PostgresStore: the Store (port.ts) shared by several facilitator instances, on postgres.js.
//
//   const store = await PostgresStore.open({ url: process.env.DATABASE_URL, schema: 'svc' });
//   await store.migrate();
//
// Group commit: write() calls queue while the previous batch is in flight and go out together in
// one pipelined transaction, each call in its own SAVEPOINT (postgres-batch.ts); a failed
// precondition rolls back that call only. Promises settle after COMMIT; if the transaction fails,
// every call of the batch rejects.
// Reads use other pooled connections, so they only ever see committed data. A write is
// acknowledged only once durable: the writer's session turns synchronous_commit on where the
// server's default is off (durableCommits).
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
import { GroupCommit } from '../group-commit.js';
import { MIGRATION_LOCK_CLASS, appliedPostgresVersions, checkSchemaName, migratePostgres } from './migrations.js';
import type {
  CatalogEntry,
  CatalogQuery,
  ChannelFilter,
  ChannelRecord,
  EventQuery,
  IdempotentRecord,
  PaymentIdRecord,
  ReceiptQuery,
  Store,
  StoredEvent,
  StreamFilter,
  StreamRecord,
  WriteOp,
  WriteResult,
} from '../port.js';
import { PG_DRIVER_OPTIONS } from './driver.js';
import { PostgresWriter } from './postgres-batch.js';
import { ReplaceablePool } from './replaceable-pool.js';
import { isStoreUnavailable, reconnectBackoff } from '../faults.js';
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
/** A write batch's deadline beyond its lock waits: a batch that takes longer failed. */
const WRITE_DEADLINE_SLACK_MS = 2_000;
const WRITER_CONNECT_TIMEOUT_S = 5;

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
  get sharedSchema(): string {
    return this.schema;
  }
  readonly #reads: ReplaceablePool;
  readonly #writer: PostgresWriter;
  readonly #group: GroupCommit;

  private constructor(reads: ReplaceablePool, writer: PostgresWriter, schema: string, maxBatch: number) {
    this.#reads = reads;
    this.#writer = writer;
    this.schema = schema;
    // A store that is unavailable fails the calls queued behind the failed batch too: they
    // already waited for it, and would each wait the same lock or dead connection again.
    this.#group = new GroupCommit((calls) => this.#writer.run(calls), maxBatch, 1, isStoreUnavailable);
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
    // max_pipeline is a postgres.js 3.4 option its type declarations leave out; a variable
    // (not a literal) passes it through the type check.
    const settings = {
      ...PG_DRIVER_OPTIONS,
      max: options.max ?? DEFAULT_POOL_SIZE,
      max_pipeline: MAX_PIPELINE,
      backoff: reconnectBackoff,
      onnotice: () => undefined,
      connection: {
        application_name: 'svc-facilitator',
        search_path: schema,
        idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
        lock_timeout: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
      },
    };
    const sql = postgres(options.url, settings);
    // The first query also tells the connection works; a failure ends the pool it opened.
    let durable: { synchronous_commit?: string };
    try {
      durable = await durableCommits(sql);
    } catch (error) {
      await sql.end({ timeout: 0 });
      throw error;
    }
    const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    const writer = new PostgresWriter(
      options.url,
      {
        ...settings,
        connect_timeout: WRITER_CONNECT_TIMEOUT_S,
        connection: {
          ...settings.connection,
          application_name: 'svc-writer',
          ...durable,
        },
      },
      {
        lock: { lockClass: WRITE_LOCK_CLASS, lockName: schema },
        // The advisory lock and one call's row or table lock may each wait the lock timeout.
        deadlineMs: 2 * lockTimeoutMs + WRITE_DEADLINE_SLACK_MS,
      },
    );
    // A read never takes long; one that has waited as long as a whole write batch may is stuck.
    const reads = new ReplaceablePool(
      sql,
      () => postgres(options.url, settings),
      2 * lockTimeoutMs + WRITE_DEADLINE_SLACK_MS,
    );
    return new PostgresStore(reads, writer, schema, options.maxBatch ?? POSTGRES_MAX_BATCH);
  }

  migrate(): Promise<void> {
    return migratePostgres(this.#reads.sql, this.schema);
  }

  /** Schema versions recorded in the database. */
  appliedMigrations(): Promise<number[]> {
    return appliedPostgresVersions(this.#reads.sql, this.schema);
  }

  write(ops: WriteOp[]): Promise<WriteResult> {
    return this.#group.submit(ops);
  }

  getChannel(id: bigint): Promise<ChannelRecord | null> {
    return this.#reads.run((sql) => q.getChannel(sql, id));
  }

  listChannels(filter?: ChannelFilter): Promise<ChannelRecord[]> {
    return this.#reads.run((sql) => q.listChannels(sql, filter));
  }

  countChannels(filter?: ChannelFilter): Promise<number> {
    return this.#reads.run((sql) => q.countChannels(sql, filter));
  }

  events(query: EventQuery): Promise<StoredEvent[]> {
    return this.#reads.run((sql) => q.queryEvents(sql, query));
  }

  lastEventId(): Promise<number> {
    return this.#reads.run((sql) => q.lastEventId(sql));
  }

  getReceipt(id: string): Promise<Receipt | null> {
    return this.#reads.run((sql) => q.getReceipt(sql, id));
  }

  findReceipt(channelId: bigint, cumulative: bigint): Promise<Receipt | null> {
    return this.#reads.run((sql) => q.findReceipt(sql, channelId, cumulative));
  }

  listReceipts(query: ReceiptQuery): Promise<{ receipt: Receipt; position: number }[]> {
    return this.#reads.run((sql) => q.listReceipts(sql, query));
  }

  getIdempotent(key: string): Promise<IdempotentRecord | null> {
    return this.#reads.run((sql) => q.getIdempotent(sql, key));
  }

  getPaymentId(payTo: string, id: string, at: string): Promise<PaymentIdRecord | null> {
    return this.#reads.run((sql) => q.getPaymentId(sql, payTo, id, at));
  }

  getMeta(key: string): Promise<string | null> {
    return this.#reads.run((sql) => q.getMeta(sql, key));
  }

  getStream(id: string): Promise<StreamRecord | null> {
    return this.#reads.run((sql) => q.getStream(sql, id));
  }

  listStreams(filter?: StreamFilter): Promise<StreamRecord[]> {
    return this.#reads.run((sql) => q.listStreams(sql, filter));
  }

  countOpenStreams(channelId?: bigint): Promise<number> {
    return this.#reads.run((sql) => q.countOpenStreams(sql, channelId));
  }

  countOpenStreamsOf(party: { payer: string } | { payTo: string }): Promise<number> {
    return this.#reads.run((sql) => q.countOpenStreamsOf(sql, party));
  }

  listCatalog(query: CatalogQuery): Promise<{ items: CatalogEntry[]; total: number }> {
    return this.#reads.run((sql) => q.listCatalog(sql, query));
  }

  /** Commits what is queued, then closes the pool. */
  async close(): Promise<void> {
    await this.#group.close();
    await this.#writer.close(CLOSE_TIMEOUT_S);
    await this.#reads.end(CLOSE_TIMEOUT_S);
  }
}

/**
 * The writer's session setting that makes a commit durable before it is acknowledged. A server (or
 * database, or role) whose synchronous_commit is `off` acknowledges a commit before its WAL is
 * flushed, and a crash then loses the last acknowledged vouchers and claims: the writer turns it
 * on for its own session. Any other value (on, local, remote_write, remote_apply) is the
 * operator's choice and flushes locally; it is kept.
 */
async function durableCommits(sql: Sql): Promise<{ synchronous_commit?: string }> {
  const [row] = await sql<{ synchronous_commit: string }[]>`SHOW synchronous_commit`;
  return row?.synchronous_commit === 'off' ? { synchronous_commit: 'on' } : {};
}
