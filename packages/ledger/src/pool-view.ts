// The credit pool as the Ledger port reads it (PoolState, docs/protocol.md#channels-and-records): the books, every open
// line valued live against the account's current holdings, and every investor's position. Read
// only; the numbers follow ops/pool-book.ts.
import { POOL_LIQUIDATION_THRESHOLD_BPS } from './contracts.js';
import type { LocalContracts } from './contracts.js';
import type { LedgerState } from './ledger-state.js';
import {
  accountValue,
  amountFor,
  bpsNumber,
  healthBps,
  isLiquidatable,
  readBook,
  sharePrice,
  utilizationBps,
} from './ops/pool-book.js';
import type { CreditLine, PoolState } from './port.js';

export function poolState(state: LedgerState, contracts: LocalContracts): PoolState {
  const book = readBook(state);
  const lines = state.pool.lines().map((line): CreditLine => {
    const value = accountValue(state, contracts, line.account);
    return {
      account: line.account,
      debt: line.debt,
      value,
      healthBps: bpsNumber(healthBps(value, line.debt)),
      liquidatable: isLiquidatable(value, line.debt),
      openedAt: line.openedAt,
    };
  });
  return {
    address: contracts.creditPool,
    size: book.size,
    idle: book.idle,
    lent: book.lent,
    totalShares: book.totalShares,
    sharePrice: sharePrice(book),
    utilizationBps: bpsNumber(utilizationBps(book)),
    liquidationThresholdBps: bpsNumber(POOL_LIQUIDATION_THRESHOLD_BPS),
    lines,
    // A position is worth what withdrawing it pays (were the funds idle): ⌊shares × size / totalShares⌋.
    positions: state.pool
      .positions()
      .map(({ address, shares }) => ({ address, shares, value: amountFor(book, shares) })),
  };
}
