// The credit pool's investor side (docs/protocol.md#the-local-ledger): pool.deposit { amount } → { shares },
// pool.withdraw { shares } → { amount }. Any account invests as the tx's source, a smart account
// too (under its agent key a deposit counts against the policy's caps like any amount leaving the
// account; the pool is not a payee: the shares stay the account's). The share math is in
// pool-book.ts. Checks, first failing deciding, all 27: the amount is positive, it mints at least
// one share (and the pool has a price: it is not emptied by losses while shares remain), the new
// total fits i128, the depositor's balance; for a withdrawal: shares positive and held, they pay
// something, and the pool's idle funds cover it (lent funds come back only as lines close).
import { I128_MAX } from '@svc/core';
import type { OpContext } from './context.js';
import { amountFor, bookEventData, readBook, sharePrice, sharesFor } from './pool-book.js';
import { fail } from './contract-error.js';
import { defineLedgerOp } from './registry.js';

function setPosition(ctx: OpContext, investor: string, shares: bigint, idle: bigint, totalShares: bigint): void {
  ctx.state.pool.setShares(investor, shares);
  ctx.state.pool.setTotals({ idle, totalShares });
}

export const poolDepositOp = defineLedgerOp('pool.deposit', (ctx, args) => {
  if (args.amount <= 0n) fail(27, 'amount must be positive');
  const book = readBook(ctx.state);
  const shares =
    sharesFor(book, args.amount) ??
    fail(27, 'the pool holds nothing while shares remain: they have no price to mint at');
  if (shares === 0n) fail(27, `${args.amount} base units buy no share at ${sharePrice(book)} base units per share`);
  const totalShares = book.totalShares + shares;
  if (totalShares > I128_MAX || book.idle + args.amount > I128_MAX) fail(27, 'the pool would exceed the i128 range');
  const pool = ctx.env.contracts.creditPool;
  ctx.transfer(ctx.source, pool, args.amount);
  setPosition(ctx, ctx.source, ctx.state.pool.shares(ctx.source) + shares, book.idle + args.amount, totalShares);
  ctx.emit('pool.deposited', {
    investor: ctx.source,
    amount: args.amount.toString(),
    shares: shares.toString(),
    ...bookEventData(readBook(ctx.state)),
  });
  return { shares: shares.toString() };
});

export const poolWithdrawOp = defineLedgerOp('pool.withdraw', (ctx, args) => {
  if (args.shares <= 0n) fail(27, 'shares must be positive');
  const held = ctx.state.pool.shares(ctx.source);
  if (held < args.shares) fail(27, `${ctx.source} holds ${held} shares, ${args.shares} asked`);
  const book = readBook(ctx.state);
  const amount = amountFor(book, args.shares);
  if (amount === 0n) fail(27, `${args.shares} shares are worth nothing at ${sharePrice(book)} base units per share`);
  if (amount > book.idle) fail(27, `the pool has ${book.idle} base units idle, ${amount} asked: the rest is lent out`);
  ctx.transfer(ctx.env.contracts.creditPool, ctx.source, amount);
  setPosition(ctx, ctx.source, held - args.shares, book.idle - amount, book.totalShares - args.shares);
  ctx.emit('pool.withdrawn', {
    investor: ctx.source,
    shares: args.shares.toString(),
    amount: amount.toString(),
    ...bookEventData(readBook(ctx.state)),
  });
  return { amount: amount.toString() };
});
