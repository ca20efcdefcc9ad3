// The write side of SqliteStore: one better-sqlite3 connection that applies whole batches —
// BEGIN IMMEDIATE, a SAVEPOINT per write() call, COMMIT. By default it runs on its own thread
// (sqlite-writer-thread.ts), so the COMMIT's fsync never stalls the event loop: the facilitator
// keeps verifying the next vouchers while the disk acknowledges the last ones.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openSqlite } from '@svc/ledger';
import type { CallOutcome } from '../group-commit.js';
import { migrateSqlite } from './migrations.js';
import type { WriteOp } from '../port.js';
import { applySqliteOps, isPrecheckable, precheck } from './sqlite-ops.js';
import { StatementCache } from './sqlite-statements.js';

export interface ConnectionOptions {
  file: string;
  busyTimeoutMs: number;
}

/**
 * A connection to the store's file. WAL with synchronous = FULL: COMMIT returns only once the WAL
 * is fsynced, so an acknowledged voucher survives kill -9 and a power cut.
 */
export function openConnection(options: ConnectionOptions): Database.Database {
  fs.mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
  const db = openSqlite(options.file);
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // Savepoint sub-journals in memory: on disk, the savepoint around each call cost more CPU
    // than the call itself. Crash recovery does not use them (the WAL does).
    db.pragma('temp_store = MEMORY');
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * WAL frames after which a commit checkpoints them into the database file (SQLite's default is
 * 1,000). Each checkpoint copies every page changed since the last one; a voucher's write touches
 * about eight pages, most of them hot (a channel's row and its index entries), so a checkpoint
 * every ~4,000 frames copies each hot page once where the default copied it four times: ~10 µs of
 * the writer's ~90 µs per voucher (bench/PROFILE.md). The WAL file then stays under ~16 MB.
 */
export const WAL_AUTOCHECKPOINT_FRAMES = 4_000;

/** A call failed after some of its ops were applied outside a savepoint: redo the batch safely. */
class UnisolatedFailure extends Error {}

export class SqliteWriter {
  readonly #db: Database.Database;
  readonly #stmts: StatementCache;

  constructor(options: ConnectionOptions) {
    this.#db = openConnection(options);
    this.#db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_FRAMES}`);
    this.#stmts = new StatementCache(this.#db);
  }

  migrate(): void {
    migrateSqlite(this.#db);
  }

  /**
   * Applies the calls in one transaction; throws when the transaction as a whole fails.
   * A call whose preconditions can be decided up front (isPrecheckable: the voucher's call) runs
   * without a savepoint: a savepoint copies every page the call touches into a sub-journal,
   * about a third of a voucher's write cost. Should such a call fail half-way (a statement error,
   * not a precondition), the whole batch is redone with a savepoint around every call.
   */
  commitBatch(calls: readonly (readonly WriteOp[])[]): CallOutcome[] {
    try {
      return this.#transaction(calls, true);
    } catch (error) {
      if (!(error instanceof UnisolatedFailure)) throw error;
      return this.#transaction(calls, false);
    }
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #transaction(calls: readonly (readonly WriteOp[])[], fast: boolean): CallOutcome[] {
    const stmts = this.#stmts;
    stmts.get('BEGIN IMMEDIATE').run();
    try {
      const outcomes = calls.map((ops) =>
        fast && isPrecheckable(ops) ? this.#applyPrechecked(ops) : this.#applyCall(ops),
      );
      stmts.get('COMMIT').run();
      return outcomes;
    } catch (error) {
      // A failed COMMIT (or statement) may leave the transaction open: end it, nothing applied.
      if (this.#db.inTransaction) stmts.get('ROLLBACK').run();
      throw error;
    }
  }

  #applyPrechecked(ops: readonly WriteOp[]): CallOutcome {
    const failed = precheck(this.#stmts, ops);
    if (failed) return { result: failed };
    try {
      const result = applySqliteOps(this.#stmts, ops);
      if (!result.ok) throw new Error('a precondition checked a moment ago failed');
      return { result };
    } catch (error) {
      throw new UnisolatedFailure('a call failed outside a savepoint', { cause: error });
    }
  }

  #applyCall(ops: readonly WriteOp[]): CallOutcome {
    const stmts = this.#stmts;
    stmts.get('SAVEPOINT write_call').run();
    try {
      const result = applySqliteOps(stmts, ops);
      if (!result.ok) stmts.get('ROLLBACK TO write_call').run();
      stmts.get('RELEASE write_call').run();
      return { result };
    } catch (error) {
      // Some errors (disk full, I/O) make SQLite abandon the whole transaction: then the batch
      // fails. Otherwise only this call is undone and rejected.
      if (!this.#db.inTransaction) throw error;
      stmts.get('ROLLBACK TO write_call').run();
      stmts.get('RELEASE write_call').run();
      return { error };
    }
  }
}
