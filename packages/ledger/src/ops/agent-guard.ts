// The smart account's policy (docs/protocol.md#channels-and-records and #the-local-ledger) as it binds the AGENT key. A transaction whose
// source is a smart account and that its agent key signed runs these checks, in this order, the
// first failing one deciding the code:
//
//   before the op runs (admit)    3 ACCOUNT_FROZEN, 2 POLICY_EXPIRED (ledger > expiresLedger),
//                                 1 BAD_SIGNATURE if the account has no policy (unreachable in
//                                 practice: with no policy there is no agent key to sign)
//   in the op, after its own argument checks (27)
//     owner-only ops              1 BAD_SIGNATURE (account.set_policy, account.freeze: after
//                                 27 for an `account` that is not a smart account)
//     requirePayee                5 PAYEE_NOT_ALLOWED (transfer `to`, channel.open `payee`,
//                                 channel.top_up: the channel's payee)
//     charge, per amount out      6 PER_TX_CAP_EXCEEDED (the tx's total out), then
//                                 7 DAILY_CAP_EXCEEDED (spentToday + amount), then the
//                                 balance (27)
//
// `charge` runs inside the token transfer, so every amount leaving the account under the agent
// key counts whichever op moves it: transfers, channel deposits and top-ups, swaps. Caps are in
// base units of the ledger's asset; the DEX's second asset counts at the pool rate, rounded up.
// The day is the UTC date of the ledger's time: spend from an earlier day is forgotten on the
// first charge of a new day. Owner-signed transactions skip all of this, freeze included: the
// freeze is the owner's brake on the agent, and the owner must stay able to move the funds and
// lift it. Ops that move nothing out of the account (channel.claim, channel.close, account.create)
// pass the first group only. A failed check fails the whole tx (seq consumed, nothing else kept).
import type { LocalContracts } from '../contracts.js';
import type { LedgerState } from '../ledger-state.js';
import type { StoredSmartAccount } from '../smart-account-store.js';
import type { AccountPolicy } from '../port.js';
import { assetValue } from './dex-rate.js';
import { fail } from './contract-error.js';

/**
 * What the guard reads of the transaction it guards: the op's context (context.ts) is one, which
 * makes the guard, so the guard names only these parts of it rather than importing it.
 */
export interface GuardedTx {
  readonly env: { readonly contracts: Pick<LocalContracts, 'asset' | 'xlm'> };
  readonly state: Pick<LedgerState, 'smartAccounts'>;
  /** The smart account its agent key signed for. */
  readonly source: string;
  readonly ledger: number;
  /** The UTC day of the tx (YYYY-MM-DD). */
  readonly day: string;
}

export class AgentGuard {
  /** What this tx has moved out so far, for the per-transaction cap. */
  #spentInTx = 0n;

  constructor(private readonly ctx: GuardedTx) {}

  /** The checks every agent-signed tx passes before its op runs. */
  admit(): void {
    const account = this.#account();
    if (account.frozen) fail(3, `smart account ${account.address} is frozen: its agent key may not act`);
    const policy = this.#policy(account);
    if (this.ctx.ledger > policy.expiresLedger)
      fail(
        2,
        `the policy of ${account.address} expired after ledger ${policy.expiresLedger} (latest is ${this.ctx.ledger})`,
      );
  }

  requirePayee(payee: string): void {
    const account = this.#account();
    if (!this.#policy(account).payees.includes(payee))
      fail(5, `${payee} is not a payee of the policy of ${account.address}`);
  }

  /** Counts `amount` of `asset` leaving the account against the caps, and records the spend. */
  charge(asset: string, amount: bigint): void {
    const account = this.#account();
    const policy = this.#policy(account);
    const value = assetValue(this.ctx.env.contracts, asset, amount);
    const inTx = this.#spentInTx + value;
    if (inTx > policy.perTxCap)
      fail(6, `${inTx} exceeds the per-transaction cap ${policy.perTxCap} of ${account.address}`);
    const today = (account.day === this.ctx.day ? account.spentToday : 0n) + value;
    if (today > policy.dailyCap)
      fail(7, `${today} spent on ${this.ctx.day} would exceed the daily cap ${policy.dailyCap} of ${account.address}`);
    this.#spentInTx = inTx;
    this.ctx.state.smartAccounts.update({ ...account, spentToday: today, day: this.ctx.day });
  }

  #account(): StoredSmartAccount {
    const account = this.ctx.state.smartAccounts.get(this.ctx.source);
    // The ledger made this guard because the source verified as a smart account's agent.
    if (!account) throw new Error(`the agent's account ${this.ctx.source} does not exist`);
    return account;
  }

  #policy(account: StoredSmartAccount): AccountPolicy {
    return account.policy ?? fail(1, `smart account ${account.address} has no policy: only its owner key may sign`);
  }
}
