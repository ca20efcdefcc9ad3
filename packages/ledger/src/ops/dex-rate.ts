// The DEX pool's fixed rate (dex.ts): what a swap buys, and what an amount of either asset is
// worth in the ledger's asset. Plain arithmetic, apart from the op: the agent's caps (agent-guard.ts)
// and the lending pool's book (pool-book.ts) price with it too.
import { DEX_RATE } from '../contracts.js';
import type { LocalContracts } from '../contracts.js';

type PoolContracts = Pick<LocalContracts, 'asset' | 'xlm'>;

/** What selling `amount` of `sell` buys, and of which asset; null when the pool does not trade `sell`. */
export function quote(contracts: PoolContracts, sell: string, amount: bigint): { buy: string; bought: bigint } | null {
  if (sell === contracts.asset) return { buy: contracts.xlm, bought: amount * DEX_RATE };
  if (sell === contracts.xlm) return { buy: contracts.asset, bought: amount / DEX_RATE };
  return null;
}

/**
 * `amount` of `asset` in base units of the ledger's asset, for a smart account's caps: the XLM
 * counts at the pool rate, rounded up so that no rounding lets an agent past a cap.
 */
export function assetValue(contracts: PoolContracts, asset: string, amount: bigint): bigint {
  return asset === contracts.xlm ? (amount + DEX_RATE - 1n) / DEX_RATE : amount;
}
