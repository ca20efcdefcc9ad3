// The local ledger's HTTP wire format (PROTOCOL.md §9), declared once as zod schemas: the routes
// validate requests with them, HttpLedger parses replies with them. Amounts and channel ids are
// decimal strings on the wire and bigint in code.
import { z } from 'zod';
import { MAX_JSON_DEPTH, NETWORKS, jsonDepth, zAddress, zSignatureHex, zUnits } from '@svc/core';
import type { NetworkName } from '@svc/core';
import { zChannelIdArg } from './ops/args.js';
import type { AccountPolicy, LedgerAccount, LedgerChannel, LedgerInfo, LedgerEvent, SmartAccountState, TxResult } from './port.js';

/** The most events one page may hold (GET /events, Ledger.events). */
export const MAX_EVENTS_PAGE = 1000;
export const DEFAULT_EVENTS_PAGE = 100;

/** The envelope of POST /tx; the op's args are checked against the op's own schema. */
export const SignedTxSchema = z.strictObject({
  source: zAddress,
  seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  op: z.string().min(1).max(64),
  // Checked before anything walks it: canonicalising for the signature recurses.
  args: z.record(z.string(), z.unknown()).refine((args) => jsonDepth(args) < MAX_JSON_DEPTH, `args are nested deeper than ${MAX_JSON_DEPTH} levels`),
  signature: zSignatureHex,
});

export const FaucetRequestSchema = z.strictObject({ address: zAddress, amount: zUnits.optional() });

export const TxHashSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'a transaction hash: 64 hex characters')
  .transform((v) => v.toLowerCase());

export const EventsQuerySchema = z.object({
  cursor: z.string().regex(/^[0-9]{1,15}$/, 'the id of the last event seen').optional(),
  limit: z
    .string()
    .regex(/^[0-9]{1,7}$/, 'a positive integer')
    .transform(Number)
    .refine((n) => n >= 1, 'at least 1')
    .transform((n) => Math.min(n, MAX_EVENTS_PAGE))
    .optional(),
});

export const InfoSchema = z.object({
  network: z.enum(Object.keys(NETWORKS) as [NetworkName, ...NetworkName[]]),
  passphrase: z.string(),
  latestLedger: z.number().int(),
  ledgerSeconds: z.number().positive(),
  contracts: z.object({ channel: z.string(), asset: z.string(), creditPool: z.string().optional(), dex: z.string().optional(), xlm: z.string().optional() }),
  asset: z.object({ code: z.string(), decimals: z.number().int() }),
}) satisfies z.ZodType<LedgerInfo>;

export const EventSchema = z.object({
  id: z.string(),
  ledger: z.number().int(),
  tx: z.string(),
  ts: z.string(),
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
}) satisfies z.ZodType<LedgerEvent>;

export const EventsPageSchema = z.object({ events: z.array(EventSchema), cursor: z.string().nullable() });

export const TxResultSchema = z.object({
  hash: z.string(),
  status: z.enum(['SUCCESS', 'FAILED']),
  ledger: z.number().int(),
  source: z.string(),
  op: z.string(),
  result: z.record(z.string(), z.unknown()).optional(),
  code: z.number().int().optional(),
  message: z.string().optional(),
  events: z.array(EventSchema),
  ts: z.string(),
}) satisfies z.ZodType<TxResult>;

const zAmount = zUnits.transform((v) => BigInt(v));

export const ChannelWireSchema = z.object({
  id: zChannelIdArg,
  payer: z.string(),
  payee: z.string(),
  asset: z.string(),
  deposit: zAmount,
  claimed: zAmount,
  voucherKey: z.string(),
  expiryLedger: z.number().int(),
  open: z.boolean(),
});

/** A smart account's policy on the wire and in events: caps as decimal strings. */
export const PolicyWireSchema = z.object({
  agentKey: z.string(),
  perTxCap: zAmount,
  dailyCap: zAmount,
  payees: z.array(z.string()),
  expiresLedger: z.number().int(),
}) satisfies z.ZodType<AccountPolicy>;

export const SmartAccountWireSchema = z.object({
  owner: z.string(),
  policy: PolicyWireSchema.nullable(),
  frozen: z.boolean(),
  spentToday: zAmount,
  day: z.string().regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/, 'a UTC day, YYYY-MM-DD'),
}) satisfies z.ZodType<SmartAccountState>;

export const AccountWireSchema = z.object({
  address: z.string(),
  seq: z.number().int(),
  balances: z.array(z.object({ asset: z.string(), amount: zAmount })),
  /** Present for smart accounts only. */
  account: SmartAccountWireSchema.optional(),
});

export type ChannelWire = z.input<typeof ChannelWireSchema>;
export type AccountWire = z.input<typeof AccountWireSchema>;
export type PolicyWire = z.input<typeof PolicyWireSchema>;
export type SmartAccountWire = z.input<typeof SmartAccountWireSchema>;

export function policyToWire(policy: AccountPolicy | null): PolicyWire | null {
  if (!policy) return null;
  return { ...policy, payees: [...policy.payees], perTxCap: policy.perTxCap.toString(), dailyCap: policy.dailyCap.toString() };
}

export function smartAccountToWire(account: SmartAccountState): SmartAccountWire {
  return { owner: account.owner, policy: policyToWire(account.policy), frozen: account.frozen, spentToday: account.spentToday.toString(), day: account.day };
}

export function channelToWire(channel: LedgerChannel): ChannelWire {
  return { ...channel, id: channel.id.toString(), deposit: channel.deposit.toString(), claimed: channel.claimed.toString() };
}

export function accountToWire(account: LedgerAccount): AccountWire {
  const wire: AccountWire = { address: account.address, seq: account.seq, balances: account.balances.map((b) => ({ asset: b.asset, amount: b.amount.toString() })) };
  return account.account ? { ...wire, account: smartAccountToWire(account.account) } : wire;
}

/** A one-line summary of zod issues for an error message. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : 'value'}: ${issue.message}`)
    .join('; ');
}
