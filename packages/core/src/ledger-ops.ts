// The local ledger's operations and their arguments (docs/protocol.md#the-local-ledger POST /tx `op` and `args`),
// declared once: the ledger's ops validate with these schemas, and the sdk's LocalLedgerClient
// builds its args as their input types (LedgerOpArgsWire), so a client cannot drift from the
// ledger it talks to.
//
// The line between a refused tx and a FAILED one follows what a real transaction could even
// encode: an arg of the wrong JSON type, an amount that is not a decimal i128, a malformed StrKey,
// hex of the wrong length, a ledger number outside u32 or an unknown field cannot be built into a
// contract call, so such a tx is refused (400, no effect, seq not consumed). A value the types
// admit but the contract refuses (an amount ≤ 0, a voucher key that is not a strict ed25519 point,
// an expiry in the past, too small a balance) is decided by the contract: FAILED with code 27
// INVALID_ARGUMENT, seq consumed.
//
//   const args: LedgerOpArgsWire<'transfer'> = { to: payee, amount: '5000' };
//   LEDGER_OP_ARGS['transfer'].parse(args).amount === 5000n
import { z } from 'zod';
import { fitsI128 } from './amount.js';
import { zLedgerChannelId, zLedgerRefundNonce } from './ledger-wire.js';
import { isAccountAddress, isAddress } from './strkey.js';

const U32_MAX = 2 ** 32 - 1;

/** Any i128, zero and negatives included (the contract decides whether it wants them). */
export const zAmountArg = z
  .string()
  .regex(/^-?[0-9]{1,39}$/, 'a decimal string of base units (i128)')
  .transform((v) => BigInt(v))
  .refine(fitsI128, 'outside the i128 range');

export const zAddressArg = z.string().max(56).refine(isAddress, 'a G… or C… address');

/** A key's account (an owner, an agent key): only a G… address has a key that signs. */
export const zAccountArg = z.string().max(56).refine(isAccountAddress, 'a G… account address');

/** A ledger sequence number (u32, as on Stellar). */
export const zLedgerArg = z.number().int().min(0).max(U32_MAX);

/** 32 bytes as hex; case is normalised so stored keys compare equal. */
export const zKeyHexArg = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, '32 bytes of hex')
  .transform((v) => v.toLowerCase());

export const zSignatureArg = z
  .string()
  .regex(/^[0-9a-fA-F]{128}$/, '64 bytes of hex')
  .transform((v) => v.toLowerCase());

/** More payees than a policy entry on a real network could reasonably hold. */
export const MAX_PAYEES = 64;

/** A policy as account.create and account.set_policy take it (null: no agent). */
export const PolicyArgSchema = z
  .strictObject({
    agentKey: zAccountArg,
    perTxCap: zAmountArg,
    dailyCap: zAmountArg,
    payees: z.array(zAddressArg).max(MAX_PAYEES),
    expiresLedger: zLedgerArg,
  })
  .nullable();

/**
 * One row of `channel.claim_many`: the payer's voucher for `maxClaimable` (a ceiling) and the
 * `total` the caller claims under it (≤ maxClaimable; below it only for the channel's receiver
 * authorizer).
 */
export const ClaimRowArgSchema = z.strictObject({
  channelId: zLedgerChannelId,
  maxClaimable: zAmountArg,
  signature: zSignatureArg,
  total: zAmountArg,
});

/** Every op of the local ledger, by name, with the schema of its args. */
export const LEDGER_OP_ARGS = {
  transfer: z.strictObject({ to: zAddressArg, amount: zAmountArg }),
  'account.create': z.strictObject({ owner: zAccountArg, policy: PolicyArgSchema }),
  'account.set_policy': z.strictObject({ account: zAddressArg, policy: PolicyArgSchema }),
  'account.freeze': z.strictObject({ account: zAddressArg, frozen: z.boolean() }),
  'channel.open': z.strictObject({
    payee: zAddressArg,
    deposit: zAmountArg,
    voucherKey: zKeyHexArg,
    expiryLedger: zLedgerArg,
    /** Who may claim less than a voucher's whole amount and refund: the facilitator's account. */
    receiverAuthorizer: zAccountArg.optional(),
  }),
  'channel.top_up': z.strictObject({
    channelId: zLedgerChannelId,
    amount: zAmountArg,
    expiryLedger: zLedgerArg.optional(),
  }),
  'channel.claim': z.strictObject({ channelId: zLedgerChannelId, cumulative: zAmountArg, signature: zSignatureArg }),
  /** The transaction's source is the caller (the contract's `caller.require_auth()`). */
  'channel.claim_many': z.strictObject({ claims: z.array(ClaimRowArgSchema) }),
  'channel.refund': z.strictObject({ channelId: zLedgerChannelId, amount: zAmountArg, nonce: zLedgerRefundNonce }),
  'channel.close': z.strictObject({ channelId: zLedgerChannelId }),
  'dex.swap': z.strictObject({ sell: zAddressArg, amount: zAmountArg }),
  'pool.deposit': z.strictObject({ amount: zAmountArg }),
  'pool.withdraw': z.strictObject({ shares: zAmountArg }),
  'pool.open_line': z.strictObject({ account: zAddressArg, limit: zAmountArg }),
  'pool.close_line': z.strictObject({ account: zAddressArg }),
  'pool.liquidate': z.strictObject({ account: zAddressArg }),
} as const;

export type LedgerOpName = keyof typeof LEDGER_OP_ARGS;
/** An op's args as a transaction carries them: amounts and ids as decimal strings. */
export type LedgerOpArgsWire<K extends LedgerOpName> = z.input<(typeof LEDGER_OP_ARGS)[K]>;
/** An op's args once parsed: amounts and ids as bigint. */
export type LedgerOpArgs<K extends LedgerOpName> = z.output<(typeof LEDGER_OP_ARGS)[K]>;
