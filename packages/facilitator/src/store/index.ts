// The facilitator's Store port and its two adapters.
export type * from './port.js';
export { SqliteStore, DEFAULT_BUSY_TIMEOUT_MS } from './sqlite-store.js';
export type { SqliteStoreOptions } from './sqlite-store.js';
export { PostgresStore, POSTGRES_MAX_BATCH } from './postgres-store.js';
export type { PostgresStoreOptions } from './postgres-store.js';
export { openStore, SQLITE_FILE_NAME } from './open-store.js';
export type { OpenStoreOptions } from './open-store.js';
export { DEFAULT_MAX_BATCH } from './group-commit.js';
export { SQLITE_MIGRATIONS } from './migrations/sqlite.js';
export { POSTGRES_MIGRATIONS } from './migrations/postgres.js';
export type { Migration } from './migrations/migration.js';
