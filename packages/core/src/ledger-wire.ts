// The local ledger's HTTP wire format (docs/protocol.md#the-local-ledger), declared once as zod schemas: the ledger's
// routes validate requests with them, LedgerHttpClient (ledger-client.ts) parses replies with
// them, and the Ledger port's types are their outputs. Amounts and channel ids are decimal
// strings on the wire and bigint once parsed; `…ToWire` writes a parsed value back.
//
//   const channel: LedgerChannel = LedgerChannelSchema.parse(await res.json());
//   res.json(channelToWire(channel));
import { z } from 'zod';
import { U64_MAX } from './amount.js';
import { MAX_JSON_DEPTH, jsonDepth } from './json-depth.js';
import { NETWORKS } from './network.js';
import type { NetworkName } from './network.js';
import { zAddress, zSignatureHex, zUnits } from './schemas.js';

/** The most events one page may hold (GET /events, Ledger.events). */
export const MAX_LEDGER_EVENTS_PAGE = 1000;
export const DEFAULT_LEDGER_EVENTS_PAGE = 100;

const zAmount = zUnits.transform((v) => BigInt(v));

/** A u64 as the ledger carries it: a decimal string (JSON numbers lose precision above 2^53), bigint once parsed. */
function zDecimalU64(what: string) {
  return z
    .string()
    .regex(/^[0-9]{1,20}$/, what)
    .transform((v) => BigInt(v))
    .refine((v) => v <= U64_MAX, 'outside the u64 range');
}

/** A channel id as the ledger carries it: a decimal u64, bigint once parsed. */
export const zLedgerChannelId = zDecimalU64('a decimal u64 channel id');

/**
 * A channel's refund nonce (u64 on chain). A decimal string like the channel id rather than a
 * JSON number: the contract compares it for equality, and a nonce rounded to the nearest double
 * would be a different nonce.
 */
export const zLedgerRefundNonce = zDecimalU64('a decimal u64 refund nonce');

/** The envelope of POST /tx; the op's args are checked against the op's own schema. */
export const SignedLedgerTxSchema = z.strictObject({
  source: zAddress,
  seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  op: z.string().min(1).max(64),
  // Checked before anything walks it: canonicalising for the signature recurses.
  args: z
    .record(z.string(), z.unknown())
    .refine((args) => jsonDepth(args) < MAX_JSON_DEPTH, `args are nested deeper than ${MAX_JSON_DEPTH} levels`),
  signature: zSignatureHex,
});

export const LedgerFaucetRequestSchema = z.strictObject({ address: zAddress, amount: zUnits.optional() });

export const LedgerTxHashSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'a transaction hash: 64 hex characters')
  .transform((v) => v.toLowerCase());

export const LedgerEventsQuerySchema = z.object({
  cursor: z
    .string()
    .regex(/^[0-9]{1,15}$/, 'the id of the last event seen')
    .optional(),
  limit: z
    .string()
    .regex(/^[0-9]{1,7}$/, 'a positive integer')
    .transform(Number)
    .refine((n) => n >= 1, 'at least 1')
    .transform((n) => Math.min(n, MAX_LEDGER_EVENTS_PAGE))
    .optional(),
});

/** GET /info. */
export const LedgerInfoSchema = z.object({
  network: z.enum(Object.keys(NETWORKS) as [NetworkName, ...NetworkName[]]),
  passphrase: z.string(),
  latestLedger: z.number().int(),
  ledgerSeconds: z.number().positive(),
  /** `dex` and `xlm` (the DEX pool and its second test asset) exist on the local ledger only; `creditPool`: the float. */
  contracts: z.object({
    channel: z.string(),
    asset: z.string(),
    creditPool: z.string().optional(),
    dex: z.string().optional(),
    xlm: z.string().optional(),
  }),
  asset: z.object({ code: z.string(), decimals: z.number().int() }),
});
export type LedgerInfo = z.output<typeof LedgerInfoSchema>;

/** One entry of the ledger's ordered event log. Amounts in `data` are decimal strings. */
export const LedgerEventSchema = z.object({
  /** Unique and opaque (the local ledger counts 1, 2, 3…; Soroban has paging tokens). */
  id: z.string(),
  ledger: z.number().int(),
  tx: z.string(),
  ts: z.string(),
  /** `asset.minted`, `channel.claimed`, `account.policy_set`…: the Ledger port's LedgerEventType. */
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type LedgerEvent = z.output<typeof LedgerEventSchema>;

/**
 * A page of events and the cursor that continues after it. An empty page keeps the cursor (local
 * ledger) or moves it past ledgers scanned without events (Soroban); either is a valid place to go
 * on from, and persisting it spares rescanning. A page shorter than the limit means caught up.
 */
export const LedgerEventsPageSchema = z.object({ events: z.array(LedgerEventSchema), cursor: z.string().nullable() });
export type EventsPage = z.output<typeof LedgerEventsPageSchema>;

/** What POST /tx, POST /faucet and GET /tx/:hash answer. */
export const LedgerTxResultSchema = z.object({
  hash: z.string(),
  status: z.enum(['SUCCESS', 'FAILED']),
  ledger: z.number().int(),
  source: z.string(),
  op: z.string(),
  result: z.record(z.string(), z.unknown()).optional(),
  /** Contract error code when FAILED (docs/protocol.md#channels-and-records: 20–27 channel, 1–7 smart account). */
  code: z.number().int().optional(),
  /** Why the contract refused it, in English (FAILED only). */
  message: z.string().optional(),
  events: z.array(LedgerEventSchema),
  ts: z.string(),
});
export type TxResult = z.output<typeof LedgerTxResultSchema>;
export type TxStatus = TxResult['status'];

/** A successful `channel.claim_many`'s result: what each row paid its payee, in the rows' order. */
export const LedgerClaimManyResultSchema = z.object({ amounts: z.array(zAmount) });
export type LedgerClaimManyResult = z.output<typeof LedgerClaimManyResultSchema>;

/** The channel contract's own record (docs/protocol.md#the-local-ledger GET /ledger/channels/:id). */
export const LedgerChannelSchema = z.object({
  id: zLedgerChannelId,
  payer: z.string(),
  payee: z.string(),
  asset: z.string(),
  deposit: zAmount,
  claimed: zAmount,
  /** 64 lowercase hex characters. */
  voucherKey: z.string(),
  /** The account whose claims may take less than a voucher's whole amount, and which may refund (G…); null when none. */
  receiverAuthorizer: z.string().nullable(),
  expiryLedger: z.number().int(),
  /** The nonce the next refund must carry; each refund moves it up by one. */
  refundNonce: zLedgerRefundNonce,
  open: z.boolean(),
});
export type LedgerChannel = z.output<typeof LedgerChannelSchema>;
/** A channel as the wire carries it: id and amounts as decimal strings. */
export type LedgerChannelWire = z.input<typeof LedgerChannelSchema>;

/** A smart account's spending policy (docs/protocol.md#channels-and-records): what its agent key may do unsupervised. */
export const AccountPolicySchema = z.object({
  /** G… address of the agent key. */
  agentKey: z.string(),
  /** Most the agent may move in one transaction (transfer amount, channel deposit, top-up). */
  perTxCap: zAmount,
  /** Most the agent may move per UTC day (ledger close time). */
  dailyCap: zAmount,
  /** Addresses the agent may pay (transfer to, open a channel to). */
  payees: z.array(z.string()),
  /** The agent's authority ends after this ledger. */
  expiresLedger: z.number().int(),
});
export type AccountPolicy = z.output<typeof AccountPolicySchema>;
/** A policy on the wire, in events and in ops' args: caps as decimal strings. */
export type AccountPolicyWire = z.input<typeof AccountPolicySchema>;

/** A smart account's state (a `C…` address made by `account.create`). */
export const SmartAccountSchema = z.object({
  owner: z.string(),
  policy: AccountPolicySchema.nullable(),
  frozen: z.boolean(),
  /** What the agent spent on `day` (UTC, YYYY-MM-DD). */
  spentToday: zAmount,
  day: z.string().regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/, 'a UTC day, YYYY-MM-DD'),
});
export type SmartAccountState = z.output<typeof SmartAccountSchema>;
export type SmartAccountWire = z.input<typeof SmartAccountSchema>;

/** GET /accounts/:address. */
export const LedgerAccountSchema = z.object({
  address: z.string(),
  /** The sequence number of the account's last transaction (0 for a new account). */
  seq: z.number().int(),
  balances: z.array(z.object({ asset: z.string(), amount: zAmount })),
  /** Present for smart accounts only. */
  account: SmartAccountSchema.optional(),
});
export type LedgerAccount = z.output<typeof LedgerAccountSchema>;
export type LedgerBalance = LedgerAccount['balances'][number];
export type LedgerAccountWire = z.input<typeof LedgerAccountSchema>;

/** A policy as the wire, the events and the ops' args carry it (null: no agent). */
export function policyToWire(policy: AccountPolicy | null): AccountPolicyWire | null {
  if (!policy) return null;
  return {
    agentKey: policy.agentKey,
    perTxCap: policy.perTxCap.toString(),
    dailyCap: policy.dailyCap.toString(),
    payees: [...policy.payees],
    expiresLedger: policy.expiresLedger,
  };
}

export function smartAccountToWire(account: SmartAccountState): SmartAccountWire {
  return {
    owner: account.owner,
    policy: policyToWire(account.policy),
    frozen: account.frozen,
    spentToday: account.spentToday.toString(),
    day: account.day,
  };
}

export function channelToWire(channel: LedgerChannel): LedgerChannelWire {
  return {
    ...channel,
    id: channel.id.toString(),
    deposit: channel.deposit.toString(),
    claimed: channel.claimed.toString(),
    refundNonce: channel.refundNonce.toString(),
  };
}

export function accountToWire(account: LedgerAccount): LedgerAccountWire {
  const wire: LedgerAccountWire = {
    address: account.address,
    seq: account.seq,
    balances: account.balances.map((b) => ({ asset: b.asset, amount: b.amount.toString() })),
  };
  return account.account ? { ...wire, account: smartAccountToWire(account.account) } : wire;
}
