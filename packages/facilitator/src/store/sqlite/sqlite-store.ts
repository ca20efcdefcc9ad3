// SqliteStore: the embedded default Store (port.ts).
//
//   const store = await SqliteStore.open({ file: 'data/facilitator.sqlite' });
//   await store.migrate();
//
// Durability: WAL with synchronous = FULL, so COMMIT returns only after the WAL is fsynced and an
// accepted voucher survives kill -9 or a power cut once its receipt has left the process.
// Group commit: write() calls queue up until the next turn of the event loop (or until the batch
// cap) and are applied in ONE `BEGIN IMMEDIATE … COMMIT`, each call isolated from the others (by
// a SAVEPOINT, or by checking its preconditions first: see SqliteWriter), so one fsync
// acknowledges the whole group.
// Two connections: the writer applies batches on its own thread (SqliteWriter, unless `writer:
// 'inline'`), so the fsync of one batch never stalls the event loop while the next batch forms;
// reads use a second connection on this thread and, in WAL mode, see exactly what is committed —
// a write() has resolved only once its COMMIT has, so a caller always reads its own writes.
import type Database from 'better-sqlite3';
import type { Receipt } from '@svc/core';
import { DEFAULT_MAX_BATCH, GroupCommit } from '../group-commit.js';
import type { CallOutcome } from '../group-commit.js';
import { appliedSqliteVersions } from './migrations.js';
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
import { StatementCache } from './sqlite-statements.js';
import * as q from './sqlite-queries.js';
import { SqliteWriter, openConnection } from './sqlite-writer.js';
import { WriterThread } from './writer-thread.js';

export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

export interface SqliteStoreOptions {
  /** Path of the database file; its directory is created when missing. */
  file: string;
  /** How long a writer waits for another process's write lock before the batch fails. */
  busyTimeoutMs?: number;
  /** Most write() calls per transaction. */
  maxBatch?: number;
  /** 'thread' (default): batches commit on a worker thread; 'inline': on this thread. */
  writer?: 'thread' | 'inline';
}

interface Writer {
  batch(calls: readonly (readonly WriteOp[])[]): Promise<CallOutcome[]> | CallOutcome[];
  migrate(): Promise<void> | void;
  close(): Promise<void> | void;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly sharedSchema = null;
  readonly file: string;
  readonly #reader: Database.Database;
  readonly #stmts: StatementCache;
  readonly #writer: Writer;
  readonly #group: GroupCommit;

  private constructor(reader: Database.Database, writer: Writer, file: string, maxBatch: number, inFlight: number) {
    this.#reader = reader;
    this.file = file;
    this.#stmts = new StatementCache(reader);
    this.#writer = writer;
    this.#group = new GroupCommit((calls) => this.#writer.batch(calls), maxBatch, inFlight);
  }

  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    const connection = { file: options.file, busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS };
    // The writer first: it creates the file and puts it in WAL mode.
    let writer: Writer;
    if (options.writer === 'inline') {
      const inline = new SqliteWriter(connection);
      writer = {
        batch: (calls) => inline.commitBatch(calls),
        migrate: () => inline.migrate(),
        close: () => inline.close(),
      };
    } else {
      writer = await WriterThread.start(connection);
    }
    let reader: Database.Database;
    try {
      reader = openConnection(connection);
    } catch (error) {
      await writer.close();
      throw error;
    }
    // The writer thread applies batches in order; a second one queued keeps it from idling.
    return new SqliteStore(
      reader,
      writer,
      options.file,
      options.maxBatch ?? DEFAULT_MAX_BATCH,
      options.writer === 'inline' ? 1 : 2,
    );
  }

  async migrate(): Promise<void> {
    await this.#writer.migrate();
  }

  /** Schema versions recorded in the file. */
  appliedMigrations(): Promise<number[]> {
    return this.#read(() => appliedSqliteVersions(this.#reader));
  }

  write(ops: WriteOp[]): Promise<WriteResult> {
    return this.#group.submit(ops);
  }

  getChannel(id: bigint): Promise<ChannelRecord | null> {
    return this.#read(() => q.getChannel(this.#stmts, id));
  }

  listChannels(filter?: ChannelFilter): Promise<ChannelRecord[]> {
    return this.#read(() => q.listChannels(this.#stmts, filter));
  }

  countChannels(filter?: ChannelFilter): Promise<number> {
    return this.#read(() => q.countChannels(this.#stmts, filter));
  }

  events(query: EventQuery): Promise<StoredEvent[]> {
    return this.#read(() => q.queryEvents(this.#stmts, query));
  }

  lastEventId(): Promise<number> {
    return this.#read(() => q.lastEventId(this.#stmts));
  }

  getReceipt(id: string): Promise<Receipt | null> {
    return this.#read(() => q.getReceipt(this.#stmts, id));
  }

  findReceipt(channelId: bigint, cumulative: bigint): Promise<Receipt | null> {
    return this.#read(() => q.findReceipt(this.#stmts, channelId, cumulative));
  }

  listReceipts(query: ReceiptQuery): Promise<{ receipt: Receipt; position: number }[]> {
    return this.#read(() => q.listReceipts(this.#stmts, query));
  }

  getIdempotent(key: string): Promise<IdempotentRecord | null> {
    return this.#read(() => q.getIdempotent(this.#stmts, key));
  }

  getPaymentId(payTo: string, id: string, at: string): Promise<PaymentIdRecord | null> {
    return this.#read(() => q.getPaymentId(this.#stmts, payTo, id, at));
  }

  getMeta(key: string): Promise<string | null> {
    return this.#read(() => q.getMeta(this.#stmts, key));
  }

  getStream(id: string): Promise<StreamRecord | null> {
    return this.#read(() => q.getStream(this.#stmts, id));
  }

  listStreams(filter?: StreamFilter): Promise<StreamRecord[]> {
    return this.#read(() => q.listStreams(this.#stmts, filter));
  }

  countOpenStreams(channelId?: bigint): Promise<number> {
    return this.#read(() => q.countOpenStreams(this.#stmts, channelId));
  }

  countOpenStreamsOf(party: { payer: string } | { payTo: string }): Promise<number> {
    return this.#read(() => q.countOpenStreamsOf(this.#stmts, party));
  }

  listCatalog(query: CatalogQuery): Promise<{ items: CatalogEntry[]; total: number }> {
    return this.#read(() => q.listCatalog(this.#stmts, query));
  }

  /** Commits what is queued, then closes both connections. */
  async close(): Promise<void> {
    await this.#group.close();
    await this.#writer.close();
    if (this.#reader.open) this.#reader.close();
  }

  // Runs synchronously on the reader connection; a throw becomes a rejection.
  #read<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve) => resolve(fn()));
  }
}
