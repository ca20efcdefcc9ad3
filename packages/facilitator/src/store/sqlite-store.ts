// SqliteStore: the embedded default Store (port.ts), one better-sqlite3 connection per process.
//
//   const store = await SqliteStore.open({ file: 'data/facilitator.sqlite' });
//   await store.migrate();
//
// Durability: WAL with synchronous = FULL, so COMMIT returns only after the WAL is fsynced and an
// accepted voucher survives kill -9 or a power cut once its receipt has left the process.
// Group commit: write() calls queue up until the next turn of the event loop (or until the batch
// cap) and are applied in ONE `BEGIN IMMEDIATE … COMMIT`, each call in its own SAVEPOINT, so one
// fsync acknowledges the whole group.
// Reads use the same connection. They can never see a batch's uncommitted writes because a batch
// is one synchronous run — BEGIN, every savepoint, COMMIT, with no await in between — and
// JavaScript cannot run a read in the middle of it. Promises of the batch settle after COMMIT.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Receipt } from '@svc/core';
import { DEFAULT_MAX_BATCH, GroupCommit } from './group-commit.js';
import type { CallOutcome } from './group-commit.js';
import { appliedSqliteVersions, migrateSqlite } from './migrations/sqlite.js';
import type { ChannelFilter, ChannelRecord, EventQuery, IdempotentRecord, ReceiptQuery, Store, StoredEvent, WriteOp, WriteResult } from './port.js';
import { StatementCache, applySqliteOps } from './sqlite-ops.js';
import * as q from './sqlite-queries.js';

export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

export interface SqliteStoreOptions {
  /** Path of the database file; its directory is created when missing. */
  file: string;
  /** How long a writer waits for another process's write lock before the batch fails. */
  busyTimeoutMs?: number;
  /** Most write() calls per transaction. */
  maxBatch?: number;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly file: string;
  readonly #db: Database.Database;
  readonly #stmts: StatementCache;
  readonly #group: GroupCommit;

  private constructor(db: Database.Database, file: string, maxBatch: number) {
    this.#db = db;
    this.file = file;
    this.#stmts = new StatementCache(db);
    this.#group = new GroupCommit((calls) => this.#commitBatch(calls), maxBatch);
  }

  static open(options: SqliteStoreOptions): Promise<SqliteStore> {
    return new Promise((resolve) => {
      fs.mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
      const db = new Database(options.file);
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
        db.pragma('foreign_keys = ON');
        // Savepoint sub-journals in memory: on disk, the savepoint around each call cost more CPU
        // than the call itself. Crash recovery does not use them (the WAL does).
        db.pragma('temp_store = MEMORY');
      } catch (error) {
        db.close();
        throw error;
      }
      resolve(new SqliteStore(db, options.file, options.maxBatch ?? DEFAULT_MAX_BATCH));
    });
  }

  migrate(): Promise<void> {
    return this.#read(() => migrateSqlite(this.#db));
  }

  /** Schema versions recorded in the file. */
  appliedMigrations(): Promise<number[]> {
    return this.#read(() => appliedSqliteVersions(this.#db));
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

  getMeta(key: string): Promise<string | null> {
    return this.#read(() => q.getMeta(this.#stmts, key));
  }

  /** Commits what is queued, then closes the connection. */
  async close(): Promise<void> {
    await this.#group.close();
    if (this.#db.open) this.#db.close();
  }

  // Runs synchronously; a throw becomes a rejection. Never inside a batch (see the file comment),
  // which the assertion double-checks.
  #read<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve) => {
      if (this.#db.inTransaction) throw new Error('SqliteStore: read inside an open batch');
      resolve(fn());
    });
  }

  #commitBatch(calls: readonly (readonly WriteOp[])[]): CallOutcome[] {
    const s = this.#stmts;
    s.get('BEGIN IMMEDIATE').run();
    try {
      const outcomes = calls.map((ops) => this.#applyCall(ops));
      s.get('COMMIT').run();
      return outcomes;
    } catch (error) {
      // A failed COMMIT (or statement) may leave the transaction open: end it, nothing applied.
      if (this.#db.inTransaction) s.get('ROLLBACK').run();
      throw error;
    }
  }

  #applyCall(ops: readonly WriteOp[]): CallOutcome {
    const s = this.#stmts;
    s.get('SAVEPOINT write_call').run();
    try {
      const result = applySqliteOps(s, ops);
      if (!result.ok) s.get('ROLLBACK TO write_call').run();
      s.get('RELEASE write_call').run();
      return { result };
    } catch (error) {
      // Some errors (disk full, I/O) make SQLite abandon the whole transaction: then the batch
      // fails. Otherwise only this call is undone and rejected.
      if (!this.#db.inTransaction) throw error;
      s.get('ROLLBACK TO write_call').run();
      s.get('RELEASE write_call').run();
      return { error };
    }
  }
}
