// What every section of the Store contract gets: the store under test, and a way to reopen it
// on the same database (durability).
import type { Store } from '../../src/store/index.js';

export interface StoreFixture {
  /** Opens a store on this fixture's database — the same database every time — and migrates it. */
  open: () => Promise<Store>;
  /** Opens a store on this fixture's database migrated only up to `version`, as an older build left it. */
  openAt: (version: number) => Promise<Store>;
  /** Schema versions recorded in this fixture's database. */
  versions: () => Promise<number[]>;
  /** Runs one SQL statement on this fixture's database (in its schema): rows as an older build wrote them. */
  exec: (statement: string) => Promise<void>;
  /** Removes the database; stores opened from it are closed first. */
  dispose: () => Promise<void>;
}

export interface StoreContractOptions {
  name: string;
  /** A fresh, empty database for one test. */
  create: () => Promise<StoreFixture>;
}

/** A second database, as an older build left it. */
export interface LegacyDatabase {
  /** A store open on it, not migrated past the version asked for. */
  store: Store;
  /** Closes that store and opens the database with this build, which migrates it. */
  upgrade: () => Promise<Store>;
  versions: () => Promise<number[]>;
  /** Writes rows in the old schema, with SQL both databases read alike (builders.ts legacyChannelSql). */
  exec: (statement: string) => Promise<void>;
}

export interface ContractContext {
  store: Store;
  /** Closes the current store and opens the same database again. */
  reopen: () => Promise<Store>;
  /** A fresh database migrated only up to `version` (removed after the test). */
  legacy: (version: number) => Promise<LegacyDatabase>;
}

export type Section = (ctx: () => ContractContext) => void;
