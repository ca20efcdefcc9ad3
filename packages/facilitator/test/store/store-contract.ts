// The Store contract (docs/architecture.md#one-contract-suite-per-port): one suite pinning every semantic of port.ts, run against each
// adapter with a factory for fresh databases.
//
//   runStoreContract({ name: 'sqlite', create: async () => ({ open, dispose }) });
import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { catalogSection } from './contract-catalog.js';
import { channelSection } from './contract-channels.js';
import { chargeSection } from './contract-charges.js';
import type { ContractContext, StoreContractOptions, StoreFixture } from './contract-context.js';
import { eventSection } from './contract-events.js';
import { lifecycleSection } from './contract-lifecycle.js';
import { paymentIdSection } from './contract-payment-ids.js';
import { recordSection } from './contract-records.js';
import { streamSection } from './contract-streams.js';

export type { StoreContractOptions, StoreFixture } from './contract-context.js';

export function runStoreContract({ name, create }: StoreContractOptions): void {
  describe(`Store contract: ${name}`, () => {
    let fixture: StoreFixture;
    let store: Store | null = null;
    const extra: StoreFixture[] = [];

    beforeEach(async () => {
      fixture = await create();
      store = await fixture.open();
    });

    afterEach(async () => {
      await store?.close();
      store = null;
      await fixture.dispose();
      for (const other of extra.splice(0)) await other.dispose();
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
        legacy: async (version) => {
          const other = await create();
          extra.push(other);
          const old = await other.openAt(version);
          return {
            store: old,
            versions: () => other.versions(),
            exec: (statement) => other.exec(statement),
            upgrade: async () => {
              await old.close();
              return other.open();
            },
          };
        },
      };
    };

    channelSection(ctx);
    chargeSection(ctx);
    eventSection(ctx);
    recordSection(ctx);
    lifecycleSection(ctx);
    streamSection(ctx);
    catalogSection(ctx);
    paymentIdSection(ctx);
  });
}
