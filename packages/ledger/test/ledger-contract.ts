// The contract suite of the Ledger port (docs/architecture.md#one-contract-suite-per-port): every adapter runs it. It pins the rules
// of docs/protocol.md#channels-and-records and §9: refusals have no effect, failures consume the seq and carry their
// code, money is conserved, events are complete and in order.
//
//   runLedgerContract({ name: 'LocalLedger', create: async () => ({ ledger, advance, close }) });
import { afterEach, beforeEach, describe } from 'vitest';
import { accountCases } from './contract/accounts.js';
import { channelBatchCases } from './contract/channel-batches.js';
import { channelCases } from './contract/channels.js';
import { dexCases } from './contract/dex.js';
import { ContractFixture } from './contract/fixture.js';
import type { CreateHarness } from './contract/fixture.js';
import { moneyAndEventCases } from './contract/money-events.js';
import { poolInvestorCases } from './contract/pool.js';
import { poolLineCases } from './contract/pool-lines.js';
import { smartAccountCases } from './contract/smart-accounts.js';
import { transactionCases } from './contract/transactions.js';

export type { CreateHarness, LedgerHarness } from './contract/fixture.js';

export interface LedgerContractOptions {
  name: string;
  /** A fresh, empty ledger with ledgerSeconds 5 and a fake clock (optionally other faucet limits or DEX reserves). */
  create: CreateHarness;
}

export function runLedgerContract({ name, create }: LedgerContractOptions): void {
  describe(`Ledger contract: ${name}`, () => {
    const f = new ContractFixture(create);
    beforeEach(() => f.setUp());
    afterEach(() => f.tearDown());

    accountCases(f);
    transactionCases(f);
    channelCases(f);
    channelBatchCases(f);
    moneyAndEventCases(f);
    smartAccountCases(f);
    dexCases(f);
    poolInvestorCases(f);
    poolLineCases(f);
  });
}
