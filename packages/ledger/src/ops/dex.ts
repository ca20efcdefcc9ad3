// The DEX pool (docs/protocol.md#the-local-ledger dex.swap): a fixed-rate pool between the ledger's asset (USDC) and
// the second test asset (XLM), 1 USDC = DEX_RATE XLM. The pool holds reserves given at genesis;
// any account sells `amount` of `sell` to it and gets the other asset at the rate, rounded down:
// selling XLM that buys less than one base unit of USDC fails rather than taking it for nothing.
// Checks, first failing deciding: amount > 0, `sell` is one of the two assets, something is bought,
// the pool's reserve covers it (all 27); then the seller's leg (for a smart account's agent: caps
// 6/7, no payee check: the pool is not a payee) and its balance (27).
//
//   { op: 'dex.swap', args: { sell: contracts.asset, amount: '10000000' } }   // 1 USDC → 10 XLM
import { DEX_RATE } from '../contracts.js';
import { fail } from './contract-error.js';
import { quote } from './dex-rate.js';
import { defineLedgerOp } from './registry.js';

export const dexSwapOp = defineLedgerOp('dex.swap', (ctx, args) => {
  const { asset, xlm, dex } = ctx.env.contracts;
  if (args.amount <= 0n) fail(27, 'amount must be positive');
  const { buy, bought } =
    quote(ctx.env.contracts, args.sell, args.amount) ??
    fail(27, `the pool trades ${asset} and ${xlm} only, not ${args.sell}`);
  if (bought === 0n) fail(27, `${args.amount} base units of ${args.sell} buy nothing at 1:${DEX_RATE}`);
  const reserve = ctx.balance(dex, buy);
  if (reserve < bought)
    fail(27, `insufficient reserves: the pool holds ${reserve} base units of ${buy}, ${bought} needed`);
  ctx.transfer(ctx.source, dex, args.amount, args.sell);
  ctx.transfer(dex, ctx.source, bought, buy);
  ctx.emit('dex.swapped', {
    account: ctx.source,
    sold: args.amount.toString(),
    soldAsset: args.sell,
    bought: bought.toString(),
    boughtAsset: buy,
  });
  return { sold: args.amount.toString(), bought: bought.toString(), boughtAsset: buy };
});
