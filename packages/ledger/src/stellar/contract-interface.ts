// The Soroban channel contract as svc expects it (docs/channel-contract.md): its functions and how
// their arguments are encoded, where a channel lives in contract storage and how it is laid out,
// its events, and its return values. Decoding goes through the SDK's scValToNative and then a zod
// schema, so a contract that does not match the document is reported, never half-read.
import { Address, nativeToScVal, scValToNative, xdr } from '@stellar/stellar-sdk';
import { z } from 'zod';
import { fromHex, toHex } from '@svc/core';
import { LedgerUnavailable } from '../port.js';
import type { ClaimArgs, ClaimRow, LedgerChannel, RefundArgs } from '../port.js';

export const CHANNEL_FUNCTIONS = ['open', 'top_up', 'claim', 'claim_many', 'refund', 'close'] as const;
export type ChannelFunction = (typeof CHANNEL_FUNCTIONS)[number];

/** The contract's event name (first topic) → the port's event type (what the ledger watcher reads). */
export const EVENT_TYPES = {
  opened: 'channel.opened',
  topped_up: 'channel.topped_up',
  claimed: 'channel.claimed',
  refunded: 'channel.refunded',
  closed: 'channel.closed',
} as const;
type EventName = keyof typeof EVENT_TYPES;

/** Storage: `DataKey::Channel(u64)` in persistent storage, a `Channel` struct (a map by field name). */
export const CHANNEL_STORAGE_SYMBOL = 'Channel';

export function isChannelFunction(name: string): name is ChannelFunction {
  return (CHANNEL_FUNCTIONS as readonly string[]).includes(name);
}

/** The local ledger's op name for a contract function (`claim_many` → `channel.claim_many`). */
export function opName(fn: ChannelFunction): string {
  return `channel.${fn}`;
}

export function u64Val(value: bigint): xdr.ScVal {
  return nativeToScVal(value, { type: 'u64' });
}

export function i128Val(value: bigint): xdr.ScVal {
  return nativeToScVal(value, { type: 'i128' });
}

export function bytesVal(hex: string, length: number): xdr.ScVal {
  return xdr.ScVal.scvBytes(Buffer.from(fromHex(hex, length)));
}

/** `claim(channel_id: u64, cumulative: i128, signature: BytesN<64>) -> i128`. */
export function claimArgsVal(args: ClaimArgs): xdr.ScVal[] {
  return [u64Val(args.channelId), i128Val(args.cumulative), bytesVal(args.signature, 64)];
}

/** A `#[contracttype]` struct: a map keyed by its field names as symbols, sorted. */
function structVal(fields: Record<string, xdr.ScVal>): xdr.ScVal {
  return xdr.ScVal.scvMap(
    Object.keys(fields)
      .sort()
      .map((key) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(key), val: fields[key]! })),
  );
}

/** `claim_many(caller: Address, claims: Vec<ClaimRow>) -> Vec<i128>`. */
export function claimManyArgsVal(caller: string, rows: readonly ClaimRow[]): xdr.ScVal[] {
  const claims = rows.map((row) =>
    structVal({
      channel_id: u64Val(row.channelId),
      max_claimable: i128Val(row.maxClaimable),
      signature: bytesVal(row.signature, 64),
      total: i128Val(row.total),
    }),
  );
  return [new Address(caller).toScVal(), xdr.ScVal.scvVec(claims)];
}

/** `refund(caller: Address, channel_id: u64, amount: i128, nonce: u64) -> i128`. */
export function refundArgsVal(caller: string, args: RefundArgs): xdr.ScVal[] {
  return [new Address(caller).toScVal(), u64Val(args.channelId), i128Val(args.amount), u64Val(args.nonce)];
}

export function channelStorageKey(channelContract: string, id: bigint): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(channelContract).toScAddress(),
      key: xdr.ScVal.scvVec([xdr.ScVal.scvSymbol(CHANNEL_STORAGE_SYMBOL), u64Val(id)]),
      durability: xdr.ContractDataDurability.persistent(),
    }),
  );
}

const zBytes = (length: number) => z.instanceof(Uint8Array).refine((b) => b.length === length, `${length} bytes`);
const zU32 = z.number().int().nonnegative();

const zU64 = z.bigint().nonnegative();

const ChannelValSchema = z.object({
  payer: z.string(),
  payee: z.string(),
  deposit: z.bigint(),
  claimed: z.bigint(),
  voucher_key: zBytes(32),
  /** Option<Address>: None is Void, which reads as null. */
  receiver_authorizer: z.string().nullable(),
  expiry_ledger: zU32,
  refund_nonce: zU64,
  open: z.boolean(),
});

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || 'value'}: ${i.message}`)
      .join('; ');
    throw new LedgerUnavailable(`the channel contract's ${what} does not match docs/channel-contract.md (${issues})`);
  }
  return parsed.data;
}

function native(value: xdr.ScVal): unknown {
  return scValToNative(value) as unknown;
}

/** A channel record read from the contract's storage (the value of `DataKey::Channel(id)`). */
export function decodeChannel(id: bigint, value: xdr.ScVal, asset: string): LedgerChannel {
  const c = parse(ChannelValSchema, native(value), `record of channel ${id}`);
  return {
    id,
    payer: c.payer,
    payee: c.payee,
    asset,
    deposit: c.deposit,
    claimed: c.claimed,
    voucherKey: toHex(c.voucher_key),
    receiverAuthorizer: c.receiver_authorizer,
    expiryLedger: c.expiry_ledger,
    refundNonce: c.refund_nonce,
    open: c.open,
  };
}

const EVENT_DATA = {
  opened: z.object({
    payer: z.string(),
    payee: z.string(),
    deposit: z.bigint(),
    expiry_ledger: zU32,
    voucher_key: zBytes(32),
    receiver_authorizer: z.string().nullable(),
  }),
  topped_up: z.object({ amount: z.bigint(), deposit: z.bigint(), expiry_ledger: zU32 }),
  claimed: z.object({ payee: z.string(), amount: z.bigint(), cumulative: z.bigint() }),
  refunded: z.object({ amount: z.bigint(), deposit: z.bigint(), refund_nonce: zU64 }),
  closed: z.object({ refunded: z.bigint(), claimed: z.bigint() }),
} as const;

export interface DecodedEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * A channel contract event (topics `[name: Symbol, channel_id: u64]`, data a map) in the port's
 * shape: amounts and ids as decimal strings, expiryLedger a number, voucherKey lowercase hex.
 * Events of other names are not the port's business: null.
 */
export function decodeChannelEvent(topics: xdr.ScVal[], value: xdr.ScVal, asset: string): DecodedEvent | null {
  const [nameVal, idVal] = topics;
  if (nameVal?.switch() !== xdr.ScValType.scvSymbol()) return null;
  const name = nameVal.sym().toString();
  if (!Object.hasOwn(EVENT_TYPES, name)) return null;
  const event = name as EventName;
  const channelId = parse(z.bigint(), idVal ? native(idVal) : undefined, `${event} event's channel id`).toString();
  const type = EVENT_TYPES[event];
  switch (event) {
    case 'opened': {
      const d = parse(EVENT_DATA.opened, native(value), 'opened event');
      return {
        type,
        data: {
          channelId,
          payer: d.payer,
          payee: d.payee,
          asset,
          deposit: d.deposit.toString(),
          expiryLedger: d.expiry_ledger,
          voucherKey: toHex(d.voucher_key),
          receiverAuthorizer: d.receiver_authorizer,
        },
      };
    }
    case 'topped_up': {
      const d = parse(EVENT_DATA.topped_up, native(value), 'topped_up event');
      return {
        type,
        data: { channelId, amount: d.amount.toString(), deposit: d.deposit.toString(), expiryLedger: d.expiry_ledger },
      };
    }
    case 'claimed': {
      const d = parse(EVENT_DATA.claimed, native(value), 'claimed event');
      return {
        type,
        data: { channelId, payee: d.payee, amount: d.amount.toString(), cumulative: d.cumulative.toString() },
      };
    }
    case 'refunded': {
      const d = parse(EVENT_DATA.refunded, native(value), 'refunded event');
      return {
        type,
        data: {
          channelId,
          amount: d.amount.toString(),
          deposit: d.deposit.toString(),
          refundNonce: d.refund_nonce.toString(),
        },
      };
    }
    case 'closed': {
      const d = parse(EVENT_DATA.closed, native(value), 'closed event');
      return { type, data: { channelId, refunded: d.refunded.toString(), claimed: d.claimed.toString() } };
    }
  }
}

/** A function's return value as the local ledger's `result` (docs/protocol.md#the-local-ledger table). */
export function decodeReturn(
  fn: ChannelFunction,
  value: xdr.ScVal | undefined,
): Record<string, string | number | string[]> | undefined {
  if (value === undefined) return undefined;
  switch (fn) {
    case 'open':
      return { channelId: parse(z.bigint(), native(value), 'open return value').toString() };
    case 'top_up': {
      const c = parse(
        ChannelValSchema.pick({ deposit: true, expiry_ledger: true }),
        native(value),
        'top_up return value',
      );
      return { deposit: c.deposit.toString(), expiryLedger: c.expiry_ledger };
    }
    case 'claim':
      return { amount: parse(z.bigint(), native(value), 'claim return value').toString() };
    case 'claim_many':
      return { amounts: parse(z.array(z.bigint()), native(value), 'claim_many return value').map(String) };
    case 'refund':
      return { refunded: parse(z.bigint(), native(value), 'refund return value').toString() };
    case 'close':
      return { refunded: parse(z.bigint(), native(value), 'close return value').toString() };
  }
}
