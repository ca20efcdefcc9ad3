// The asset contract's `transfer` as a transaction (docs/protocol.md#the-local-ledger): { to, amount } → —.
import { fail } from './contract-error.js';
import { defineLedgerOp } from './registry.js';

export const transferOp = defineLedgerOp('transfer', (ctx, args) => {
  if (args.amount <= 0n) fail(27, 'amount must be positive');
  ctx.agent?.requirePayee(args.to);
  ctx.transfer(ctx.source, args.to, args.amount);
  return undefined;
});
