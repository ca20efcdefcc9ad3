// What the `channel` and `batch-settlement` scheme servers do alike with a seller's route: the
// price as an x402 AssetAmount, the asset checked against the one the facilitator settles in, and
// the minimum deposit asked of a new channel.
import { ASSET_DECIMALS, formatUnits, isUnits } from '@svc/core';
import type { AssetAmount, Price } from '@x402/core/types';
import { priceToUnits } from './price.js';

/** extra.minDeposit defaults to 1000 × the price, as for svc's own sellers. */
export const DEFAULT_MIN_DEPOSIT_UNITS = 1000n;

/** Base units: a bigint or a base-unit string; "$0.0005" or "0.0005 USDC" in asset units. The asset is the facilitator's. */
export function assetAmountOf(price: Price, symbol: string): AssetAmount {
  const amount = formatUnits(priceToUnits(price, { decimals: ASSET_DECIMALS, symbol }));
  if (typeof price === 'object') return { amount, asset: price.asset, ...(price.extra ? { extra: price.extra } : {}) };
  return { amount, asset: '' };
}

/** The facilitator's asset, when the route names none, it, or its ticker; throws for another one. */
export function facilitatorAsset(given: string, kind: { asset: string; assetCode: string }): string {
  const named = given.trim();
  if (named !== '' && named !== kind.asset && named.toUpperCase() !== kind.assetCode.toUpperCase())
    throw new Error(`the facilitator settles in ${kind.asset} (${kind.assetCode}), not ${named}`);
  return kind.asset;
}

/** The route's extra.minDeposit (base units), else `units` × the price. */
export function minDepositOf(routeMinDeposit: unknown, price: bigint, units: bigint | undefined): string {
  if (routeMinDeposit === undefined) return formatUnits(price * (units ?? DEFAULT_MIN_DEPOSIT_UNITS));
  if (!isUnits(routeMinDeposit)) throw new Error('extra.minDeposit must be a decimal string of base units');
  return routeMinDeposit;
}
