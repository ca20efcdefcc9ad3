// What every section of the Store contract gets: the store under test, and a way to reopen it
// on the same database (durability).
import type { Store } from '../../src/store/index.js';

export interface StoreFixture {
  /** Opens a store on this fixture's database — the same database every time — and migrates it. */
  open: () => Promise<Store>;
  /** Removes the database; stores opened from it are closed first. */
  dispose: () => Promise<void>;
}

export interface StoreContractOptions {
  name: string;
  /** A fresh, empty database for one test. */
  create: () => Promise<StoreFixture>;
}

export interface ContractContext {
  store: Store;
  /** Closes the current store and opens the same database again. */
  reopen: () => Promise<Store>;
}

export type Section = (ctx: () => ContractContext) => void;
