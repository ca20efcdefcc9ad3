// One process per data directory's state: a local ledger's file, or a facilitator's SQLite store,
// is written by one process, which assumes nobody else does (its clock, its caches, its claims).
// The lock is an exclusive SQLite lock on `<name>.lock`, held for the process's lifetime: the
// kernel drops it when the process ends, however it ends, so a lock is never stale — no pid to
// check after a kill -9, a reboot or a container's new pid namespace. Who holds it is written
// beside it in `<name>.lock.json`, for the message a second process prints.
//
//   const lock = lockDataDir('./data', 'ledger', 'the local ledger (ledger.sqlite)');
//   …
//   lock.release();
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlite } from './sqlite-open.js';

/** The longest command line kept in the holder's description. */
const COMMAND_MAX = 120;

export interface DataDirHolder {
  pid: number;
  host: string;
  /** The holder's command line, shortened (e.g. `svc start`). */
  command: string;
  /** When it took the lock (ISO 8601). */
  startedAt: string;
}

/** The data directory is held by another process (or by another owner in this one). */
export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder | null,
    what: string,
  ) {
    const by = holder
      ? `process ${holder.pid} (${holder.command} on ${holder.host}, started ${holder.startedAt})`
      : 'another process';
    super(
      `DATA_DIR ${dataDir} is in use by ${by}: ${what} belongs to one process. Stop that process, or give this one another DATA_DIR.`,
    );
    this.name = 'DataDirInUse';
  }
}

export interface DataDirLock {
  /** The lock file. */
  readonly file: string;
  /** Lets the directory go (idempotent). */
  release(): void;
}

/**
 * Takes `<dataDir>/<name>.lock` for this process, or throws DataDirInUse naming its holder.
 * `what` says what the lock guards, for that message.
 */
export function lockDataDir(dataDir: string, name: string, what: string): DataDirLock {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.lock`);
  const holderFile = `${file}.json`;
  // timeout 0: a held lock answers SQLITE_BUSY at once rather than after a wait.
  const db = openSqlite(file, { timeout: 0 });
  try {
    // In exclusive locking mode the lock a write takes is kept until the connection closes; the
    // file holds nothing, so its journal need not be one more file beside it.
    db.pragma('journal_mode = MEMORY');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') throw new DataDirInUse(dir, readHolder(holderFile), what);
    throw err;
  }
  writeHolder(holderFile);
  let held = true;
  return {
    file,
    release() {
      if (!held) return;
      held = false;
      // The description goes first, while the lock still keeps every other process out.
      fs.rmSync(holderFile, { force: true });
      db.close();
    },
  };
}

function writeHolder(file: string): void {
  const holder: DataDirHolder = {
    pid: process.pid,
    host: os.hostname(),
    command: commandLine(),
    startedAt: new Date().toISOString(),
  };
  // Written whole, then renamed: a reader sees the previous description or this one, never half.
  const partial = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(partial, `${JSON.stringify(holder)}\n`);
  fs.renameSync(partial, file);
}

function readHolder(file: string): DataDirHolder | null {
  try {
    const h = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DataDirHolder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string') return null;
    return {
      pid: h.pid,
      host: h.host,
      command: typeof h.command === 'string' ? h.command : 'unknown command',
      startedAt: typeof h.startedAt === 'string' ? h.startedAt : 'at an unknown time',
    };
  } catch {
    return null;
  }
}

/** `svc start` for `node …/bin/svc.cjs start`: the script's name without its extension, and its arguments. */
function commandLine(): string {
  const script = process.argv[1] ? path.basename(process.argv[1]).replace(/\.[cm]?[jt]s$/, '') : process.argv0;
  const line = [script, ...process.argv.slice(2)].join(' ');
  return line.length > COMMAND_MAX ? `${line.slice(0, COMMAND_MAX - 1)}…` : line;
}
