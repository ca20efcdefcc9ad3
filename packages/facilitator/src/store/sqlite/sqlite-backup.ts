// An online copy of the SQLite store, taken beside a running facilitator (`svc backup`):
//
//   const copy = await backupSqlite({ source: 'data/facilitator.sqlite', destination: 'backup.sqlite' });
//   // copy: { file, bytes, channels, receipts, events, lastEventId }
//
// The copy is one moment of the store. SQLite's online backup copies a few pages per step; a step
// that opens its own read sees the facilitator's latest commits and starts the copy over from the
// first page, so under steady payments it may never finish. Here the source connection holds one
// read transaction for the whole copy instead: every step reads the same snapshot (WAL mode lets
// the facilitator keep committing meanwhile; the WAL grows until the read ends). The copy is
// written under a temporary name beside the destination, checked with integrity_check, synced, and
// only then renamed into place.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openSqlite } from '@svc/ledger';
import { StatementCache } from './sqlite-statements.js';
import * as q from './sqlite-queries.js';

/** Pages per backup step (4 MB of 4 KB pages): one step per turn of the event loop. */
const PAGES_PER_STEP = 1_000;
const BUSY_TIMEOUT_MS = 5_000;
/** Tables every version of the store has: a file without them is not a facilitator's store. */
const STORE_TABLES = ['channels', 'receipts', 'events'] as const;
/** The files SQLite keeps beside a database: a stale one would be read as the new file's. */
const SIDE_FILES = ['-wal', '-shm', '-journal'] as const;

export interface BackupProgress {
  copiedPages: number;
  totalPages: number;
}

export interface SqliteBackupOptions {
  /** The store's file (DATA_DIR/facilitator.sqlite); a facilitator may be writing to it. */
  source: string;
  /** The file to write. */
  destination: string;
  /** Replace an existing destination (default false: refused). */
  overwrite?: boolean;
  /** Called after every step of the copy. */
  onProgress?: (progress: BackupProgress) => void;
}

/** What was written: the copy's size and rows, counted in the copy itself. */
export interface SqliteBackup {
  file: string;
  bytes: number;
  channels: number;
  receipts: number;
  events: number;
  lastEventId: number;
}

export type BackupInputProblem = 'NO_STORE' | 'NOT_A_STORE' | 'DESTINATION' | 'EXISTS';

/** The input is wrong (nothing was written): the message says what to change. */
export class BackupInputError extends Error {
  constructor(
    readonly problem: BackupInputProblem,
    message: string,
  ) {
    super(message);
    this.name = 'BackupInputError';
  }
}

export async function backupSqlite(options: SqliteBackupOptions): Promise<SqliteBackup> {
  const source = path.resolve(options.source);
  const destination = path.resolve(options.destination);
  checkDestination(source, destination, options.overwrite === true);
  const db = openSnapshot(source);
  const partial = `${destination}.partial-${process.pid}`;
  try {
    await copyPages(db, partial, options.onProgress);
    db.close();
    const counts = checkCopy(partial);
    sync(partial, 'r+');
    place(partial, destination, options.overwrite === true);
    return { file: destination, bytes: fs.statSync(destination).size, ...counts };
  } catch (error) {
    if (db.open) db.close();
    for (const suffix of ['', ...SIDE_FILES]) fs.rmSync(`${partial}${suffix}`, { force: true });
    throw error;
  }
}

function checkDestination(source: string, destination: string, overwrite: boolean): void {
  const dir = path.dirname(destination);
  if (!isDirectory(dir)) throw new BackupInputError('DESTINATION', `${dir} is not a directory: create it first`);
  if (isDirectory(destination))
    throw new BackupInputError(
      'DESTINATION',
      `${destination} is a directory: name the file to write, e.g. ${path.join(destination, 'facilitator-backup.sqlite')}`,
    );
  const real = path.join(fs.realpathSync(dir), path.basename(destination));
  const store = fs.existsSync(source) ? fs.realpathSync(source) : source;
  if (['', ...SIDE_FILES].some((suffix) => real === `${store}${suffix}`))
    throw new BackupInputError('DESTINATION', `${destination} is the store itself: write the copy to another file`);
  if (!overwrite && ['', ...SIDE_FILES].some((suffix) => fs.existsSync(`${destination}${suffix}`)))
    throw new BackupInputError('EXISTS', `${destination} exists: name another file, or replace it`);
}

function isDirectory(file: string): boolean {
  return fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** The store opened read-only, inside a read transaction that pins the snapshot the copy reads. */
function openSnapshot(source: string): Database.Database {
  const stat = fs.statSync(source, { throwIfNoEntry: false });
  if (!stat?.isFile()) throw new BackupInputError('NO_STORE', `there is no store at ${source}`);
  let db: Database.Database;
  try {
    db = openSqlite(source, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new Error(`cannot open the store ${source}: ${(error as Error).message}`);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec('BEGIN');
    // The first read starts the transaction: from here on this connection sees one version.
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    const missing = STORE_TABLES.filter((name) => !tables.includes(name));
    if (missing.length)
      throw new BackupInputError(
        'NOT_A_STORE',
        `${source} is not a facilitator's store (no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''})`,
      );
    return db;
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code === 'SQLITE_NOTADB')
      throw new BackupInputError('NOT_A_STORE', `${source} is not an SQLite database`);
    throw error;
  }
}

async function copyPages(
  db: Database.Database,
  file: string,
  onProgress: ((progress: BackupProgress) => void) | undefined,
): Promise<void> {
  const report = ({ totalPages, remainingPages }: { totalPages: number; remainingPages: number }) => {
    onProgress?.({ copiedPages: totalPages - remainingPages, totalPages });
    return PAGES_PER_STEP;
  };
  report(await db.backup(file, { progress: report }));
}

/** integrity_check on the copy, then its rows; opening it read-write lets SQLite tidy its WAL away on close. */
function checkCopy(file: string): Omit<SqliteBackup, 'file' | 'bytes'> {
  const copy = openSqlite(file, { fileMustExist: true });
  try {
    const problems = copy.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
    const first = problems[0]?.integrity_check;
    if (problems.length !== 1 || first !== 'ok')
      throw new Error(`the copy failed SQLite's integrity_check: ${problems.map((p) => p.integrity_check).join('; ')}`);
    const stmts = new StatementCache(copy);
    const count = (table: string) => (stmts.get(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return {
      channels: q.countChannels(stmts),
      receipts: count('receipts'),
      events: count('events'),
      lastEventId: q.lastEventId(stmts),
    };
  } finally {
    copy.close();
  }
}

/** fsync: a file opened for writing ('r+'), a directory for reading ('r', as Linux requires). */
function sync(file: string, flags: 'r+' | 'r'): void {
  const fd = fs.openSync(file, flags);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Renames the copy into place; a replaced file's WAL and shared memory go first, as they were its own. */
function place(partial: string, destination: string, overwrite: boolean): void {
  if (!overwrite && ['', ...SIDE_FILES].some((suffix) => fs.existsSync(`${destination}${suffix}`)))
    throw new BackupInputError(
      'EXISTS',
      `${destination} appeared while the copy was written: name another file, or replace it`,
    );
  for (const suffix of SIDE_FILES) fs.rmSync(`${destination}${suffix}`, { force: true });
  fs.renameSync(partial, destination);
  // The rename is durable once the directory is synced; not every platform can open a directory
  // to sync it, and the copy's own bytes are synced already.
  try {
    sync(path.dirname(destination), 'r');
  } catch {
    // the rename stands; only its durability in a power cut is up to the file system
  }
}
