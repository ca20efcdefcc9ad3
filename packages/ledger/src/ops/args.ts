// Arg schemas shared by the ops. The line between a refused tx and a FAILED one follows what a
// real transaction could even encode: an arg of the wrong JSON type, an amount that is not a
// decimal i128, a malformed StrKey, hex of the wrong length, a ledger number outside u32 or an
// unknown field cannot be built into a contract call, so such a tx is refused (400, no effect,
// seq not consumed). A value the types admit but the contract refuses (an amount ≤ 0, a voucher
// key that is not a strict ed25519 point, an expiry in the past, too small a balance) is decided
// by the contract: FAILED with code 27 INVALID_ARGUMENT, seq consumed.
import { z } from 'zod';
import { isAccountAddress, isAddress, U64_MAX, fitsI128 } from '@svc/core';

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

export const zChannelIdArg = z
  .string()
  .regex(/^[0-9]{1,20}$/, 'a decimal u64 channel id')
  .transform((v) => BigInt(v))
  .refine((v) => v <= U64_MAX, 'outside the u64 range');

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
