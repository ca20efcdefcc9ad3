// Money is bigint in code and a decimal string of integer base units on the wire (docs/protocol.md
// intro). Amounts are Soroban i128; the asset has 7 decimals.

export const ASSET_DECIMALS = 7;
export const I128_MAX = (1n << 127n) - 1n;
export const I128_MIN = -(1n << 127n);
export const U64_MAX = (1n << 64n) - 1n;

const UNSIGNED_RE = /^[0-9]{1,39}$/;
const SIGNED_RE = /^-?[0-9]{1,39}$/;
const DISPLAY_RE = /^(-)?([0-9]+)(?:\.([0-9]+))?$/;

export class AmountError extends RangeError {}

/** Parses a non-negative amount in base units ("135000"); refuses anything outside i128. */
export function parseUnits(text: string): bigint {
  if (typeof text !== 'string' || !UNSIGNED_RE.test(text))
    throw new AmountError('amount must be a decimal string of base units');
  const value = BigInt(text);
  if (value > I128_MAX) throw new AmountError('amount exceeds the i128 range');
  return value;
}

/** Parses a signed i128 amount in base units. */
export function parseSignedUnits(text: string): bigint {
  if (typeof text !== 'string' || !SIGNED_RE.test(text))
    throw new AmountError('amount must be a decimal string of base units');
  const value = BigInt(text);
  if (value > I128_MAX || value < I128_MIN) throw new AmountError('amount exceeds the i128 range');
  return value;
}

export function isUnits(text: unknown): text is string {
  return typeof text === 'string' && UNSIGNED_RE.test(text) && BigInt(text) <= I128_MAX;
}

export function fitsI128(value: bigint): boolean {
  return value >= I128_MIN && value <= I128_MAX;
}

/** Base units as the wire's decimal string. */
export function formatUnits(value: bigint): string {
  if (!fitsI128(value)) throw new AmountError('amount exceeds the i128 range');
  return value.toString(10);
}

/** Base units shown in asset units with all 7 decimals: 5000n → "0.0005000". */
export function displayAmount(value: bigint, decimals = ASSET_DECIMALS): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals);
  return `${negative ? '-' : ''}${whole}${decimals > 0 ? `.${frac}` : ''}`;
}

/** Asset units ("1.5") to base units (15000000n); refuses more precision than the asset has. */
export function parseDisplayAmount(text: string, decimals = ASSET_DECIMALS): bigint {
  const m = DISPLAY_RE.exec(text.trim());
  if (!m) throw new AmountError(`not an amount: ${text}`);
  const frac = m[3] ?? '';
  if (frac.length > decimals) throw new AmountError(`at most ${decimals} decimals`);
  const value = BigInt((m[2] ?? '0') + frac.padEnd(decimals, '0')) * (m[1] ? -1n : 1n);
  if (!fitsI128(value)) throw new AmountError('amount exceeds the i128 range');
  return value;
}

/** Ceiling division for non-negative bigints. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new AmountError('divisor must be positive');
  return (a + b - 1n) / b;
}
