// A store that cannot commit or answer right now — another process holds the SQLite write lock
// past the busy timeout, the disk is full or read-only, the PostgreSQL connection is gone — is a
// fault of the moment, not a bug. Nothing of the failed write was acknowledged (group-commit.ts:
// the whole batch rejects), so the HTTP layer answers 503 with Retry-After instead of a 500, and
// the client sends the same request again (docs/protocol.md#errors).

/** better-sqlite3 result codes (extended ones too: SQLITE_BUSY_TIMEOUT, SQLITE_IOERR_WRITE, …). */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|PROTOCOL)/;
/** postgres.js's own connection errors, the socket errors it passes on, and a write batch or a read past its deadline. */
const PG_CONNECTION = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'WRITE_STALLED',
  'READ_STALLED',
]);
/** SQLSTATE classes 08 (connection exception) and 57P (shutdown, terminated backend): the session is gone. */
const PG_SESSION_GONE = /^(08[0-9A-Z]{3}|57P0[1-4])$/;
/** SQLSTATE class 53 (insufficient resources: disk full, too many connections). */
const PG_RESOURCES = /^53[0-9A-Z]{3}$/;
/** lock_not_available: a lock held elsewhere past the store's lock_timeout. */
const PG_LOCK_TIMEOUT = '55P03';

interface Coded {
  code?: unknown;
  severity?: unknown;
}

/** Whether `error` (from a Store call) means the store is unavailable for now, not that the call was wrong. */
export function isStoreUnavailable(error: unknown): boolean {
  const e = error as Coded | null;
  if (typeof e?.code !== 'string') return false;
  return (
    SQLITE_UNAVAILABLE.test(e.code) ||
    isConnectionLost(error) ||
    PG_RESOURCES.test(e.code) ||
    e.code === PG_LOCK_TIMEOUT
  );
}

/** Whether the PostgreSQL connection that raised `error` is gone (or must not be trusted again). */
export function isConnectionLost(error: unknown): boolean {
  const e = error as Coded | null;
  if (typeof e?.code !== 'string') return false;
  // A FATAL PostgreSQL error ends the session itself (the database refuses connections, …).
  return PG_CONNECTION.has(e.code) || PG_SESSION_GONE.test(e.code) || e.severity === 'FATAL';
}

/** A lock waited for past the lock timeout (PostgreSQL's lock_timeout). */
export function isLockTimeout(error: unknown): boolean {
  return (error as Coded | null)?.code === PG_LOCK_TIMEOUT;
}

/** The error of a write batch that did not finish within its deadline: nothing of it is acknowledged. */
export function writeStalled(ms: number): Error {
  return Object.assign(new Error(`the database did not finish the write within ${ms} ms`), { code: 'WRITE_STALLED' });
}

/**
 * Seconds before reconnecting after `retries` failed attempts: 0.1 s doubling to 1 s. postgres.js's
 * own grows as 3^retries / 100 up to 20 s, so after a few seconds without the database an
 * instance waited seconds more once it was back.
 */
export function reconnectBackoff(retries: number): number {
  return Math.min(1, 0.1 * 2 ** Math.max(0, retries - 1));
}
