// Wire primitives as zod schemas: the one source of truth for parsing and for the OpenAPI
// document (docs/architecture.md#one-source-for-wire-shapes). Amounts stay decimal strings here; code converts with parseUnits.
import { z } from 'zod';
import { U64_MAX, isUnits } from './amount.js';
import { isAccountAddress, isAddress, isContractAddress } from './strkey.js';

export const UNITS = ['request', 'token', 'second'] as const;
export type Unit = (typeof UNITS)[number];

const UNITS_DIGITS = /^[0-9]{1,39}$/;

export const zUnits = z
  .string()
  .regex(UNITS_DIGITS, 'a decimal string of base units')
  // zod runs refinements even after the regex failed: say only what is wrong.
  .refine((v) => !UNITS_DIGITS.test(v) || isUnits(v), 'exceeds the i128 range')
  .meta({ description: 'Amount in base units of the asset (7 decimals), as a decimal string.', example: '5000' });

export const zChannelId = z
  .string()
  .regex(/^[0-9]{1,20}$/, 'a decimal u64')
  // zod runs refinements even after the regex failed: never BigInt() an unchecked string.
  .refine((v) => /^[0-9]{1,20}$/.test(v) && BigInt(v) <= U64_MAX, 'exceeds u64')
  .meta({ description: 'Channel id (u64) as a decimal string.', example: '42' });

export const zSignatureHex = z
  .string()
  .regex(/^[0-9a-fA-F]{128}$/, '64 bytes of hex')
  .meta({ description: 'ed25519 signature, 128 hex characters.' });

export const zHex32 = z.string().regex(/^[0-9a-f]{64}$/, '32 bytes of lowercase hex');

export const zAccount = z
  .string()
  .max(56)
  .refine(isAccountAddress, 'a G… account address')
  .meta({ description: 'Stellar account address (G…).' });

export const zContract = z
  .string()
  .max(56)
  .refine(isContractAddress, 'a C… contract address')
  .meta({ description: 'Stellar contract address (C…).' });

export const zAddress = z
  .string()
  .max(56)
  .refine(isAddress, 'a G… or C… address')
  .meta({ description: 'Stellar account (G…) or contract (C…) address.' });

export const zNetwork = z
  .string()
  .regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/, 'a CAIP-2 network id')
  .meta({ description: 'CAIP-2 network id.', example: 'stellar:local' });

export const zUnit = z.enum(UNITS);

/** A time in the facilitator's answers, as it writes them (toISOString()); not checked on reading. */
export const zIsoTime = z.string().meta({ description: 'ISO 8601 time, UTC.' });

export const zHttpUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'an http(s) URL');
