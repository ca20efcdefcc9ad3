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
  /** `dex` and `xlm`: the local ledger's fixed-rate pool and its second test asset; `creditPool`: the float. */
  contracts: z.object({ channel: z.string(), asset: z.string(), creditPool: z.string().optional(), dex: z.string().optional(), xlm: z.string().optional() }),
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

const CreditLineSchema = z.object({
  account: z.string(),
  /** What the smart account owes the pool: the line's limit plus its fee. */
  debt: zAmount,
  /** What the account holds, valued in the pool's asset (its USDC plus its XLM at the DEX rate). */
  value: zAmount,
  /** value × 10000 / debt, rounded down. */
  healthBps: z.number().int(),
  liquidatable: z.boolean(),
  openedAt: z.string(),
});
export type CreditLineView = z.output<typeof CreditLineSchema>;

const PoolPositionSchema = z.object({ address: z.string(), shares: zAmount, value: zAmount });
export type PoolPositionView = z.output<typeof PoolPositionSchema>;

/** GET /ledger/pool: the credit pool (the float), amounts as bigint. */
export const PoolSchema = z.object({
  address: z.string(),
  /** idle + lent. */
  size: zAmount,
  idle: zAmount,
  lent: zAmount,
  totalShares: zAmount,
  /** Base units of the asset per whole share (shares have 7 decimals like the asset). */
  sharePrice: zAmount,
  utilizationBps: z.number().int(),
  liquidationThresholdBps: z.number().int(),
  lines: z.array(CreditLineSchema),
  positions: z.array(PoolPositionSchema),
});
export type PoolView = z.output<typeof PoolSchema>;

/** A policy as the ops' args carry it: caps as decimal strings. */
export function policyArgs(policy: AccountPolicy | null): Record<string, unknown> | null {
  if (!policy) return null;
  return { agentKey: policy.agentKey, perTxCap: policy.perTxCap.toString(), dailyCap: policy.dailyCap.toString(), payees: [...policy.payees], expiresLedger: policy.expiresLedger };
}
