// The Store contract (STYLE.md 3): one suite pinning every semantic of port.ts, run against each
// adapter with a factory for fresh databases.
//
//   runStoreContract({ name: 'sqlite', create: async () => ({ open, dispose }) });
import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { channelSection } from './contract-channels.js';
import type { ContractContext, StoreContractOptions, StoreFixture } from './contract-context.js';
import { eventSection } from './contract-events.js';
import { lifecycleSection } from './contract-lifecycle.js';
import { recordSection } from './contract-records.js';

export type { StoreContractOptions, StoreFixture } from './contract-context.js';

export function runStoreContract({ name, create }: StoreContractOptions): void {
  describe(`Store contract: ${name}`, () => {
    let fixture: StoreFixture;
    let store: Store | null = null;

    beforeEach(async () => {
      fixture = await create();
      store = await fixture.open();
    });

    afterEach(async () => {
      await store?.close();
      store = null;
      await fixture.dispose();
    });

    const ctx = (): ContractContext => {
      if (!store) throw new Error('no store open');
      const current = store;
      return {
        store: current,
        reopen: async () => {
          await current.close();
          store = await fixture.open();
          return store;
        },
      };
    };

    channelSection(ctx);
    eventSection(ctx);
    recordSection(ctx);
    lifecycleSection(ctx);
  });
}
