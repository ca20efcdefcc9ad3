// pool.liquidate { account } (docs/protocol.md#the-local-ledger): anyone may liquidate a line whose health is below
// the threshold (27 otherwise, or when there is no open line); it is how the pool stops a loss
// from growing, and it can only pay the pool. The pool seizes what the account holds, up to the
// debt: its USDC first, then its XLM, which the pool sells at once to the DEX pool at the fixed
// rate (only whole base units of USDC: XLM worth less stays with the account, as does XLM the
// DEX's reserve cannot buy). Whatever the account holds beyond the debt stays its own. The line
// closes either way; the pool's idle grows by what was seized, so the share price moves by
// (seized − principal) × 10^7 / totalShares: down when less than the principal came back.
import { DEX_RATE } from '../contracts.js';
import type { OpContext } from './context.js';
import { accountValue, bookEventData, healthBps, isLiquidatable, readBook } from './pool-book.js';
import { requireLine } from './pool-lines.js';
import { fail } from './contract-error.js';
import { defineLedgerOp } from './registry.js';

function min(...values: bigint[]): bigint {
  return values.reduce((a, b) => (b < a ? b : a));
}

/** Takes the account's XLM worth up to `owed` and sells it for the pool; returns the USDC it bought. */
function seizeXlm(ctx: OpContext, account: string, owed: bigint): bigint {
  const { asset, xlm, dex, creditPool } = ctx.env.contracts;
  const bought = min(ctx.balance(account, xlm) / DEX_RATE, owed, ctx.balance(dex, asset));
  if (bought === 0n) return 0n;
  const sold = bought * DEX_RATE;
  ctx.transfer(account, creditPool, sold, xlm);
  ctx.transfer(creditPool, dex, sold, xlm);
  ctx.transfer(dex, creditPool, bought, asset);
  ctx.emit('dex.swapped', {
    account: creditPool,
    sold: sold.toString(),
    soldAsset: xlm,
    bought: bought.toString(),
    boughtAsset: asset,
  });
  return bought;
}

export const poolLiquidateOp = defineLedgerOp('pool.liquidate', (ctx, args) => {
  const line = requireLine(ctx, args.account);
  const { asset, creditPool } = ctx.env.contracts;
  const value = accountValue(ctx.state, ctx.env.contracts, line.account);
  if (!isLiquidatable(value, line.debt))
    fail(27, `the line of ${line.account} is healthy: ${healthBps(value, line.debt)} bps is not below the threshold`);
  const usdc = min(ctx.balance(line.account, asset), line.debt);
  ctx.transfer(line.account, creditPool, usdc);
  const seized = usdc + seizeXlm(ctx, line.account, line.debt - usdc);
  const { idle, totalShares } = ctx.state.pool.totals();
  ctx.state.pool.setTotals({ idle: idle + seized, totalShares });
  ctx.state.pool.deleteLine(line.account);
  const shortfall = line.debt - seized;
  ctx.emit('pool.liquidated', {
    account: line.account,
    liquidator: ctx.source,
    debt: line.debt.toString(),
    principal: line.principal.toString(),
    seized: seized.toString(),
    shortfall: shortfall.toString(),
    ...bookEventData(readBook(ctx.state)),
  });
  return { seized: seized.toString(), shortfall: shortfall.toString() };
});
