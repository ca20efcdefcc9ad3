// A seller's price → base units of the asset (7 decimals). Money is never a float: a bigint or a
// string of base units ("5000") is taken as is; asset units need an explicit marker ("$0.0005",
// "0.0005 USDC"), since "5000" and "5000.0" would otherwise differ by a factor of 10^7. JavaScript
// numbers are refused outright (is 1 one base unit or one dollar?).
import { ASSET_DECIMALS, AmountError, I128_MAX, parseDisplayAmount, parseUnits } from '@svc/core';

export class PriceError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'PriceError';
  }
}

const BASE_UNITS_RE = /^[0-9]+$/;
const DOLLARS_RE = /^\$\s*([0-9]+(?:\.[0-9]+)?)$/;
const SYMBOL_RE = /^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z][A-Za-z0-9]{0,11})$/;

/** An asset amount given as `{ amount, asset }`: the amount is always in base units. */
export interface PricedAsset {
  amount: string;
  asset: string;
  extra?: Record<string, unknown>;
}

/**
 * Base units for a price: a bigint, a base-unit string, "$x.y" or "x.y <symbol>" (at most
 * `decimals` decimals), or `{ amount, asset }` with a base-unit amount. Refuses numbers,
 * negative, zero and out-of-range amounts.
 */
export function priceToUnits(price: unknown, options: { decimals?: number; symbol?: string } = {}): bigint {
  const decimals = options.decimals ?? ASSET_DECIMALS;
  const symbol = (options.symbol ?? 'USDC').toUpperCase();
  let value: bigint;
  if (typeof price === 'bigint') {
    value = price;
  } else if (typeof price === 'number') {
    throw new PriceError(
      `a price must be a bigint or a string, not the number ${price}: write "${price}" for base units or "$${price}" for asset units`,
    );
  } else if (typeof price === 'string') {
    value = fromString(price.trim(), decimals, symbol);
  } else if (isPricedAsset(price)) {
    if (!BASE_UNITS_RE.test(price.amount))
      throw new PriceError(`an asset amount must be a decimal string of base units, not "${price.amount}"`);
    value = guarded(() => parseUnits(price.amount));
  } else {
    throw new PriceError('a price must be a bigint, a string or { amount, asset }');
  }
  if (value <= 0n) throw new PriceError(`a price must be positive, not ${value}`);
  if (value > I128_MAX) throw new PriceError('the price exceeds the i128 range');
  return value;
}

function fromString(text: string, decimals: number, symbol: string): bigint {
  if (BASE_UNITS_RE.test(text)) return guarded(() => parseUnits(text));
  const dollars = DOLLARS_RE.exec(text);
  if (dollars?.[1] !== undefined) return guarded(() => parseDisplayAmount(dollars[1]!, decimals));
  const withSymbol = SYMBOL_RE.exec(text);
  if (withSymbol?.[1] !== undefined && withSymbol[2]?.toUpperCase() === symbol)
    return guarded(() => parseDisplayAmount(withSymbol[1]!, decimals));
  if (text.startsWith('-')) throw new PriceError(`a price must be positive, not "${text}"`);
  if (/^[0-9]*\.[0-9]+$/.test(text)) {
    throw new PriceError(
      `"${text}" is ambiguous: write base units without a point, or asset units as "$${text}" or "${text} ${symbol}"`,
    );
  }
  throw new PriceError(`not a price: "${text}"`);
}

function guarded(parse: () => bigint): bigint {
  try {
    return parse();
  } catch (err) {
    if (err instanceof AmountError) throw new PriceError(err.message);
    throw err;
  }
}

function isPricedAsset(price: unknown): price is PricedAsset {
  return (
    typeof price === 'object' &&
    price !== null &&
    typeof (price as PricedAsset).amount === 'string' &&
    typeof (price as PricedAsset).asset === 'string'
  );
}
