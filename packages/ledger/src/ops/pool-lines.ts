// The credit pool's borrower side (docs/protocol.md#the-local-ledger): pool.open_line { account, limit } and
// pool.close_line { account }. The pool lends to smart accounts only, at most one open line each.
//
// open_line: the borrower asks, so the tx must be signed by the smart account's OWNER key (the
// owner as source, the sdk's way, or the account as source signed by its owner); an agent key may
// not borrow for its owner (26). The pool moves `limit` to the account and records
// debt = limit + fee (pool-book.ts). Checks, first failing deciding: `account` is a smart account
// (27), owner-signed (26), limit > 0, no open line, limit ≤ the pool's idle funds, and the account
// not liquidatable at once (27): with the borrowed funds in hand it must hold at least the
// liquidation threshold of its debt, so a borrower puts up about 12% of the limit of its own.
//
// close_line: repays the whole debt from the account's balance; signed by its owner key (either
// way, as above) or by its agent with the account as source — the policy then applies: freeze,
// expiry, caps 6/7 on the debt, but no payee check (repaying pays no third party). Checks: an open
// line (27), the signer (26), the balance (27). The pool's idle grows by principal + fee, so the
// share price rises by fee × 10^7 / totalShares.
import { I128_MAX } from '@svc/core';
import { POOL_LIQUIDATION_THRESHOLD_BPS } from '../contracts.js';
import type { StoredLine } from '../pool-store.js';
import type { OpContext } from './context.js';
import { accountValue, bookEventData, healthBps, isLiquidatable, lineFee, readBook } from './pool-book.js';
import { fail } from './contract-error.js';
import { defineLedgerOp } from './registry.js';

/** The open line of `account`, or 27. */
export function requireLine(ctx: OpContext, account: string): StoredLine {
  return ctx.state.pool.line(account) ?? fail(27, `${account} has no open credit line`);
}

export const poolOpenLineOp = defineLedgerOp('pool.open_line', (ctx, args) => {
  const account =
    ctx.state.smartAccounts.get(args.account) ??
    fail(27, `${args.account} is not a smart account: the pool lends to smart accounts only`);
  if (ctx.signer.key !== account.owner)
    fail(26, `only the owner key of ${account.address} may open a credit line for it (signed by ${ctx.signer.key})`);
  if (args.limit <= 0n) fail(27, 'limit must be positive');
  if (ctx.state.pool.line(account.address)) fail(27, `${account.address} already has an open credit line`);
  const book = readBook(ctx.state);
  if (args.limit > book.idle) fail(27, `the pool has ${book.idle} base units idle, ${args.limit} asked`);
  const fee = lineFee(args.limit);
  const debt = args.limit + fee;
  if (debt > I128_MAX) fail(27, 'the debt would exceed the i128 range');
  ctx.transfer(ctx.env.contracts.creditPool, account.address, args.limit);
  const value = accountValue(ctx.state, ctx.env.contracts, account.address);
  if (isLiquidatable(value, debt)) {
    fail(
      27,
      `with the line ${account.address} would hold ${value} against a debt of ${debt}: health ${healthBps(value, debt)} bps, below ${POOL_LIQUIDATION_THRESHOLD_BPS}`,
    );
  }
  ctx.state.pool.setTotals({ idle: book.idle - args.limit, totalShares: book.totalShares });
  ctx.state.pool.insertLine({
    account: account.address,
    principal: args.limit,
    debt,
    openedLedger: ctx.ledger,
    openedAt: ctx.ts,
    openedTx: ctx.tx,
  });
  ctx.emit('pool.line_opened', {
    account: account.address,
    limit: args.limit.toString(),
    fee: fee.toString(),
    debt: debt.toString(),
    ...bookEventData(readBook(ctx.state)),
  });
  return { limit: args.limit.toString(), fee: fee.toString(), debt: debt.toString() };
});

export const poolCloseLineOp = defineLedgerOp('pool.close_line', (ctx, args) => {
  const line = requireLine(ctx, args.account);
  const account = ctx.state.smartAccounts.get(line.account);
  // Unreachable: lines are opened to smart accounts only, and smart accounts are never deleted.
  if (!account) throw new Error(`the borrower ${line.account} is not a smart account`);
  const byAccount = ctx.source === account.address; // signed by its owner or its agent (verified)
  if (!byAccount && ctx.signer.key !== account.owner)
    fail(26, `only ${account.address} or its owner may repay its credit line`);
  ctx.transfer(account.address, ctx.env.contracts.creditPool, line.debt);
  const { idle, totalShares } = ctx.state.pool.totals();
  ctx.state.pool.setTotals({ idle: idle + line.debt, totalShares });
  ctx.state.pool.deleteLine(account.address);
  const fee = line.debt - line.principal;
  ctx.emit('pool.line_closed', {
    account: account.address,
    repaid: line.debt.toString(),
    principal: line.principal.toString(),
    fee: fee.toString(),
    ...bookEventData(readBook(ctx.state)),
  });
  return { repaid: line.debt.toString() };
});
