// Picks the Store from the environment: no DATABASE_URL → the embedded SQLite file in the data
// directory (one process); a PostgreSQL URL → the shared database (several instances).
import path from 'node:path';
import type { Store } from './port.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

export const SQLITE_FILE_NAME = 'facilitator.sqlite';
const POSTGRES_URL_RE = /^postgres(ql)?:\/\//i;

export interface OpenStoreOptions {
  /** DATABASE_URL; empty or absent means SQLite. */
  databaseUrl?: string;
  /** Data directory for the SQLite file; created when missing. */
  dataDir: string;
  /** PostgreSQL only: how long a statement waits for a lock (PostgresStore's default when absent). */
  lockTimeoutMs?: number;
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
}

/** Opens the configured Store, migrated and ready. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const url = options.databaseUrl?.trim();
  let store: Store;
  if (!url) {
    store = await SqliteStore.open({ file: path.join(options.dataDir, SQLITE_FILE_NAME) });
  } else if (POSTGRES_URL_RE.test(url)) {
    store = await PostgresStore.open({
      url,
      ...(options.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: options.lockTimeoutMs }),
    });
  } else {
    throw new Error('DATABASE_URL must be a postgres:// or postgresql:// URL, or unset for the embedded SQLite store');
  }
  if (options.migrate === false) return store;
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
