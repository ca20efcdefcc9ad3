// The facilitator's Store port and its two adapters: sqlite/ and postgres/ hold each one's code (its store,
// its operations and queries, its migrations), this folder what both share (the port, the group
// commit, op checks, row mapping, fault classes).
export type * from './port.js';
export { SqliteStore, DEFAULT_BUSY_TIMEOUT_MS } from './sqlite/sqlite-store.js';
export type { SqliteStoreOptions } from './sqlite/sqlite-store.js';
export { PostgresStore, POSTGRES_MAX_BATCH } from './postgres/postgres-store.js';
export type { PostgresStoreOptions } from './postgres/postgres-store.js';
export { openStore, SQLITE_FILE_NAME } from './open-store.js';
export type { OpenStoreOptions } from './open-store.js';
export { DEFAULT_MAX_BATCH } from './group-commit.js';
export { SQLITE_MIGRATIONS } from './sqlite/migrations.js';
export { POSTGRES_MIGRATIONS } from './postgres/migrations.js';
export type { Migration } from './migration.js';
