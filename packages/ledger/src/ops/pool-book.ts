// The credit pool's arithmetic (packages/ledger/docs/credit-pool.md), in bigint only and
// rounded in the pool's favour, so no sequence of deposits and withdrawals takes out more than
// went in:
//
//   size        = idle + lent, where lent = Σ principal of the open lines. A line's fee is counted
//                 when it is repaid, not when the line opens: the pool's investors earn it only
//                 once it is paid (closing a line raises the share price), and a liquidation that
//                 recovers less than the principal lowers it.
//   share price = size × 10^7 / totalShares (base units per whole share; a share has 7 decimals
//                 like the asset); 10^7 (1.0) while there are no shares.
//   deposit     mints amount while there are no shares (at 1.0), else ⌊amount × totalShares / size⌋.
//   withdraw    pays ⌊shares × size / totalShares⌋, from idle funds only.
//   fee         ⌈limit × POOL_LINE_FEE_BPS / 10000⌉: a line never costs less than its rate.
//   value       the account's USDC plus its XLM at the DEX rate, rounded down (what selling it buys).
//   health      ⌊value × 10000 / debt⌋ basis points; liquidatable below the threshold.
//
// `idle` is the pool's own book of what it holds for its investors, not its token balance: a
// transfer straight to the pool's address is a stray gift that mints no share and moves no price
// (so nobody can inflate the share price by donating to it).
import { ASSET_UNIT, POOL_LINE_FEE_BPS, POOL_LIQUIDATION_THRESHOLD_BPS } from '../contracts.js';
import type { LocalContracts } from '../contracts.js';
import type { LedgerState } from '../ledger-state.js';
import { quote } from './dex-rate.js';

export const BPS = 10_000n;

export interface PoolBook {
  idle: bigint;
  lent: bigint;
  size: bigint;
  totalShares: bigint;
}

export function readBook(state: LedgerState): PoolBook {
  const { idle, totalShares } = state.pool.totals();
  const lent = state.pool.lines().reduce((sum, line) => sum + line.principal, 0n);
  return { idle, lent, size: idle + lent, totalShares };
}

export function sharePrice(book: PoolBook): bigint {
  return book.totalShares === 0n ? ASSET_UNIT : (book.size * ASSET_UNIT) / book.totalShares;
}

/** Shares a deposit of `amount` mints; null when the pool holds nothing while shares exist (no price). */
export function sharesFor(book: PoolBook, amount: bigint): bigint | null {
  if (book.totalShares === 0n) return amount;
  if (book.size === 0n) return null;
  return (amount * book.totalShares) / book.size;
}

/** What burning `shares` pays (0 while there are no shares). */
export function amountFor(book: PoolBook, shares: bigint): bigint {
  return book.totalShares === 0n ? 0n : (shares * book.size) / book.totalShares;
}

export function lineFee(limit: bigint): bigint {
  return (limit * POOL_LINE_FEE_BPS + BPS - 1n) / BPS;
}

/** The account's holdings in base units of the pool's asset: USDC plus XLM at the DEX rate. */
export function accountValue(state: LedgerState, contracts: LocalContracts, account: string): bigint {
  const xlm = state.balance(account, contracts.xlm);
  return state.balance(account, contracts.asset) + (quote(contracts, contracts.xlm, xlm)?.bought ?? 0n);
}

/** ⌊value × 10000 / debt⌋; null for a line that owes nothing (it has no health to lose). */
export function healthBps(value: bigint, debt: bigint): bigint | null {
  return debt <= 0n ? null : (value * BPS) / debt;
}

export function isLiquidatable(value: bigint, debt: bigint): boolean {
  const health = healthBps(value, debt);
  return health !== null && health < POOL_LIQUIDATION_THRESHOLD_BPS;
}

/**
 * Basis points as a JSON number. Only ratios pass through here, never amounts; a health so large
 * that it would lose precision as a double (value over 10^11 times the debt) reads as the largest
 * safe integer, which says the same thing: nowhere near liquidation.
 */
export function bpsNumber(bps: bigint | null): number {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  return Number(bps === null || bps > max ? max : bps);
}

export function utilizationBps(book: PoolBook): bigint {
  return book.size === 0n ? 0n : (book.lent * BPS) / book.size;
}

/** The pool as it stands after an op, for that op's event (decimal strings). */
export function bookEventData(book: PoolBook): { size: string; totalShares: string; sharePrice: string } {
  return {
    size: book.size.toString(),
    totalShares: book.totalShares.toString(),
    sharePrice: sharePrice(book).toString(),
  };
}
