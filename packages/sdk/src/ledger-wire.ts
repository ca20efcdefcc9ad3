// The local ledger's replies as the buyer's client reads them (PROTOCOL.md §9), parsed with zod:
// amounts are decimal strings on the wire and bigint once parsed.
import { z } from 'zod';
import { zUnits } from '@svc/core';

const zAmount = zUnits.transform((v) => BigInt(v));

export const InfoSchema = z.object({
  network: z.string(),
  passphrase: z.string(),
  latestLedger: z.number().int(),
  ledgerSeconds: z.number(),
  /** `dex` and `xlm`: the local ledger's fixed-rate pool and its second test asset. */
  contracts: z.object({ channel: z.string(), asset: z.string(), dex: z.string().optional(), xlm: z.string().optional() }),
  asset: z.object({ code: z.string(), decimals: z.number().int() }),
});
export type LedgerInfoWire = z.infer<typeof InfoSchema>;

export const TxSchema = z.object({
  hash: z.string(),
  status: z.enum(['SUCCESS', 'FAILED']),
  ledger: z.number().int(),
  result: z.record(z.string(), z.unknown()).optional(),
  code: z.number().int().optional(),
  message: z.string().optional(),
});
export type TxResultWire = z.infer<typeof TxSchema>;

const PolicySchema = z.object({
  agentKey: z.string(),
  perTxCap: zAmount,
  dailyCap: zAmount,
  payees: z.array(z.string()),
  expiresLedger: z.number().int(),
});
/** A smart account's policy (PROTOCOL.md §7): what its agent key may do on its own. */
export type AccountPolicy = z.output<typeof PolicySchema>;

const SmartAccountSchema = z.object({
  owner: z.string(),
  policy: PolicySchema.nullable(),
  frozen: z.boolean(),
  /** What the agent spent on `day` (UTC, YYYY-MM-DD). */
  spentToday: zAmount,
  day: z.string(),
});
export type SmartAccountView = z.output<typeof SmartAccountSchema>;

export const AccountSchema = z.object({
  address: z.string(),
  seq: z.number().int(),
  balances: z.array(z.object({ asset: z.string(), amount: zAmount })),
  account: SmartAccountSchema.optional(),
});
/** GET /ledger/accounts/:address, amounts as bigint; `account` for smart accounts only. */
export type LedgerAccountView = z.output<typeof AccountSchema>;

export const ChannelSchema = z.object({
  id: z.string(),
  payer: z.string(),
  payee: z.string(),
  asset: z.string(),
  deposit: z.string(),
  claimed: z.string(),
  voucherKey: z.string(),
  expiryLedger: z.number().int(),
  open: z.boolean(),
});
export type LedgerChannelWire = z.infer<typeof ChannelSchema>;

/** A policy as the ops' args carry it: caps as decimal strings. */
export function policyArgs(policy: AccountPolicy | null): Record<string, unknown> | null {
  if (!policy) return null;
  return { agentKey: policy.agentKey, perTxCap: policy.perTxCap.toString(), dailyCap: policy.dailyCap.toString(), payees: [...policy.payees], expiresLedger: policy.expiresLedger };
}
