// A store that cannot commit or answer right now — another process holds the SQLite write lock
// past the busy timeout, the disk is full or read-only, the PostgreSQL connection is gone — is a
// fault of the moment, not a bug. Nothing of the failed write was acknowledged (group-commit.ts:
// the whole batch rejects), so the HTTP layer answers 503 with Retry-After instead of a 500, and
// the client sends the same request again (PROTOCOL.md §6).

/** better-sqlite3 result codes (extended ones too: SQLITE_BUSY_TIMEOUT, SQLITE_IOERR_WRITE, …). */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|PROTOCOL)/;
/** postgres.js's own connection errors, and the socket errors it passes on. */
const PG_CONNECTION = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);
/**
 * SQLSTATE classes 08 (connection exception), 53 (insufficient resources: disk full, too many
 * connections), 57P (shutdown, terminated backend), and 55P03 (lock_not_available: a lock held
 * elsewhere past the store's lock_timeout).
 */
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P0[1-4]|55P03)$/;

/** Whether `error` (from a Store call) means the store is unavailable for now, not that the call was wrong. */
export function isStoreUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | null;
  if (typeof e?.code !== 'string') return false;
  // A FATAL PostgreSQL error ends the session itself (the database refuses connections, …).
  return SQLITE_UNAVAILABLE.test(e.code) || PG_CONNECTION.has(e.code) || PG_UNAVAILABLE.test(e.code) || e.severity === 'FATAL';
}
