// `svc backup <file> [--force]`: a consistent copy of the facilitator's SQLite store, taken while it
// runs. It reads DATA_DIR and DATABASE_URL as `svc start` does, and takes no lock on the data
// directory: it runs beside the facilitator that holds it.
import path from 'node:path';
import { loadConfig } from '../config.js';
import { SQLITE_FILE_NAME } from '../store/open-store.js';
import { BackupInputError, backupSqlite } from '../store/sqlite/sqlite-backup.js';
import type { BackupInputProblem, BackupProgress, SqliteBackup } from '../store/sqlite/sqlite-backup.js';
import { UsageError, readArgs } from './errors.js';

/** A large store's copy says how far it has got at least this often. */
const PROGRESS_EVERY_MS = 1_000;
const DOCS = 'docs/operating.md, "Backups and restoring"';
/** What the command line adds to the store's own words, by problem. */
const HINTS: Partial<Record<BackupInputProblem, string>> = {
  NO_STORE: ": set DATA_DIR to the facilitator's data directory",
  EXISTS: ' with --force',
};
const SHORT_USAGE = 'usage: svc backup <file> [--force] (svc backup --help says more)';

export const BACKUP_USAGE = `usage: [DATA_DIR=…] svc backup <file> [--force]

Writes a consistent copy of the facilitator's SQLite store (DATA_DIR/${SQLITE_FILE_NAME}) to <file>,
while the facilitator runs: one moment of the store, checked with SQLite's integrity_check. It
refuses to replace an existing file unless --force. Run it with the facilitator's DATA_DIR. To
restore: stop the facilitator, remove the old store's -wal and -shm files, put the copy in place
as DATA_DIR/${SQLITE_FILE_NAME} and start it (${DOCS}).
`;

export async function backupCommand(args: string[]): Promise<void> {
  if (args.length === 1 && ['--help', '-h', 'help'].includes(args[0]!)) return void console.log(BACKUP_USAGE);
  const { values, positionals } = readArgs(args, { force: { type: 'boolean' } }, 1, SHORT_USAGE);
  const file = positionals[0];
  if (!file) throw new UsageError(`backup needs the file to write; ${SHORT_USAGE}`);
  const source = storeFile();
  const copy = await backupSqlite({
    source,
    destination: file,
    overwrite: values['force'] === true,
    onProgress: progressPrinter(`svc backup: copying ${source} to ${path.resolve(file)}`),
  }).catch((err: unknown) => {
    if (!(err instanceof BackupInputError)) throw err;
    throw new UsageError(`${err.message}${HINTS[err.problem] ?? ''}`);
  });
  console.log(summary(copy));
}

/** DATA_DIR's store, read as `svc start` reads it; PostgreSQL is backed up with its own tools. */
function storeFile(): string {
  const config = loadConfig({ DATA_DIR: process.env['DATA_DIR'], DATABASE_URL: process.env['DATABASE_URL'] });
  if (config.DATABASE_URL !== undefined)
    throw new UsageError(
      `DATABASE_URL is set, so the store is PostgreSQL, which svc backup does not copy: use pg_dump (and pg_restore), or pg_basebackup with WAL archiving for point-in-time recovery (${DOCS})`,
    );
  return path.join(config.DATA_DIR, SQLITE_FILE_NAME);
}

/**
 * Prints `heading` once the copy has begun (the input was good), then the pages copied once a
 * second: a small store is copied before the first.
 */
function progressPrinter(heading: string): (progress: BackupProgress) => void {
  let last: number | null = null;
  return ({ copiedPages, totalPages }) => {
    const now = Date.now();
    if (last === null) {
      last = now;
      return void console.log(`${heading} (${totalPages} pages)`);
    }
    if (now - last < PROGRESS_EVERY_MS || copiedPages === totalPages) return;
    last = now;
    console.log(`  copied ${copiedPages} of ${totalPages} pages (${Math.floor((copiedPages * 100) / totalPages)}%)`);
  };
}

function summary(copy: SqliteBackup): string {
  return `backup written: ${copy.file} (${size(copy.bytes)}, integrity ok): ${copy.channels} channels, ${copy.receipts} receipts, ${copy.events} events; last event id ${copy.lastEventId}`;
}

function size(bytes: number): string {
  return bytes < 1_048_576 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1_048_576).toFixed(1)} MB`;
}
