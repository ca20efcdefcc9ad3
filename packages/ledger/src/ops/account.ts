// The smart-account contract (docs/protocol.md#channels-and-records and #the-local-ledger): account.create, account.set_policy,
// account.freeze. A smart account is a `C…` address with its own seq and balances, an owner key
// (G…) and an optional policy for an agent key. What the agent may then do is enforced by the
// AgentGuard (agent-guard.ts); the owner is not limited.
//
// Who may change an account: the tx must be signed by the account's OWNER key, whichever way —
// the owner submitting as itself (source = owner, the sdk's way) or the smart account as source
// signed with the owner key. Anything else (the agent key, another account) fails with
// 1 BAD_SIGNATURE; an `account` that is not a smart account fails with 27.
import { policyToWire } from '@svc/core';
import type { PolicyArgSchema } from '@svc/core';
import type { z } from 'zod';
import { smartAccountAddress } from '../contracts.js';
import type { AccountPolicy } from '../port.js';
import type { StoredSmartAccount } from '../smart-account-store.js';
import type { OpContext } from './context.js';
import { fail } from './contract-error.js';
import { defineLedgerOp } from './registry.js';

/** The contract's own rules for a policy (27): what the types admit but makes no sense. */
function checkPolicy(ctx: OpContext, owner: string, policy: z.output<typeof PolicyArgSchema>): AccountPolicy | null {
  if (!policy) return null;
  // The owner key would verify first and act unlimited: an agent equal to the owner is no agent.
  if (policy.agentKey === owner) fail(27, 'agentKey must not be the owner key');
  if (policy.perTxCap < 0n || policy.dailyCap < 0n) fail(27, 'caps cannot be negative');
  if (policy.expiresLedger <= ctx.ledger)
    fail(27, `expiresLedger ${policy.expiresLedger} must be after the latest ledger ${ctx.ledger}`);
  return { ...policy, payees: [...new Set(policy.payees)] };
}

function ownedAccount(ctx: OpContext, address: string): StoredSmartAccount {
  const account = ctx.state.smartAccounts.get(address) ?? fail(27, `${address} is not a smart account`);
  if (ctx.signer.key !== account.owner)
    fail(1, `only the owner key of ${address} may change it (signed by ${ctx.signer.key})`);
  return account;
}

export const accountCreateOp = defineLedgerOp('account.create', (ctx, args) => {
  // Anyone may create an account for an owner: it gives the owner an account, and takes nothing.
  const policy = checkPolicy(ctx, args.owner, args.policy);
  const address = smartAccountAddress(args.owner, ctx.tx, ctx.env.passphrase);
  // Unreachable (tx hashes are unique), but an address must never be handed out twice.
  if (ctx.state.smartAccounts.get(address)) fail(27, `smart account ${address} already exists`);
  ctx.state.smartAccounts.insert(
    { address, owner: args.owner, policy, frozen: false, spentToday: 0n, day: ctx.day },
    ctx.tx,
  );
  ctx.emit('account.created', { account: address, owner: args.owner, policy: policyToWire(policy) });
  return { address };
});

export const accountSetPolicyOp = defineLedgerOp('account.set_policy', (ctx, args) => {
  const account = ownedAccount(ctx, args.account);
  const policy = checkPolicy(ctx, account.owner, args.policy);
  // Today's spend stays: a new daily cap applies to what the agent already spent today.
  ctx.state.smartAccounts.update({ ...account, policy });
  ctx.emit('account.policy_set', { account: account.address, policy: policyToWire(policy) });
  return undefined;
});

export const accountFreezeOp = defineLedgerOp('account.freeze', (ctx, args) => {
  const account = ownedAccount(ctx, args.account);
  ctx.state.smartAccounts.update({ ...account, frozen: args.frozen });
  ctx.emit('account.frozen', { account: account.address, frozen: args.frozen });
  return undefined;
});
