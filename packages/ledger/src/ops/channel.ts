// The channel contract (PROTOCOL.md §7, §9): open → top_up → claim → close. Checks run in the
// contract's order, so the first failing rule decides the code: the channel exists (20), is
// open (21), the caller may act (26), then the op's own rules; a smart account's agent then
// passes its policy (payee 5, caps 6/7: agent-guard.ts) before the deposit moves.
import { fromHex, I128_MAX, isStrictPublicKey } from '@svc/core';
import { PAYER_CLOSE_DELAY_LEDGERS } from '../contracts.js';
import type { LedgerChannel } from '../port.js';
import type { OpContext } from './context.js';
import { defineLedgerOp, fail } from './registry.js';

function openChannel(ctx: OpContext, id: bigint): LedgerChannel {
  const channel = ctx.state.channel(id);
  if (!channel) return fail(20, `channel ${id} does not exist`);
  if (!channel.open) return fail(21, `channel ${id} is closed`);
  return channel;
}

function requirePositive(amount: bigint, name: string): void {
  if (amount <= 0n) fail(27, `${name} must be positive`);
}

function requireFuture(ctx: OpContext, expiryLedger: number): void {
  if (expiryLedger <= ctx.ledger)
    fail(27, `expiryLedger ${expiryLedger} must be after the latest ledger ${ctx.ledger}`);
}

export const channelOpenOp = defineLedgerOp('channel.open', (ctx, args) => {
  requirePositive(args.deposit, 'deposit');
  // PROTOCOL.md §2: a small-order or non-canonical key would let anyone forge vouchers.
  if (!isStrictPublicKey(fromHex(args.voucherKey, 32))) {
    fail(27, 'voucherKey is not a strictly valid ed25519 public key (small order or not canonically encoded)');
  }
  requireFuture(ctx, args.expiryLedger);
  ctx.agent?.requirePayee(args.payee);
  ctx.transfer(ctx.source, ctx.env.contracts.channel, args.deposit);
  const channel = {
    payer: ctx.source,
    payee: args.payee,
    asset: ctx.asset,
    deposit: args.deposit,
    claimed: 0n,
    voucherKey: args.voucherKey,
    expiryLedger: args.expiryLedger,
    open: true,
  };
  const id = ctx.state.insertChannel(channel);
  ctx.emit('channel.opened', {
    channelId: id.toString(),
    payer: channel.payer,
    payee: channel.payee,
    asset: channel.asset,
    deposit: channel.deposit.toString(),
    expiryLedger: channel.expiryLedger,
    voucherKey: channel.voucherKey,
  });
  return { channelId: id.toString() };
});

export const channelTopUpOp = defineLedgerOp('channel.top_up', (ctx, args) => {
  const channel = openChannel(ctx, args.channelId);
  if (ctx.source !== channel.payer) fail(26, `only the payer of channel ${channel.id} may top it up`);
  requirePositive(args.amount, 'amount');
  const expiryLedger = args.expiryLedger ?? channel.expiryLedger;
  if (expiryLedger < channel.expiryLedger) fail(27, `expiryLedger may only be extended (now ${channel.expiryLedger})`);
  if (expiryLedger > channel.expiryLedger) requireFuture(ctx, expiryLedger);
  const deposit = channel.deposit + args.amount;
  if (deposit > I128_MAX) fail(27, 'the deposit would exceed the i128 range');
  // A top-up pays the channel's payee too: the agent may fund only a payee its policy still names.
  ctx.agent?.requirePayee(channel.payee);
  ctx.transfer(ctx.source, ctx.env.contracts.channel, args.amount);
  ctx.state.updateChannel({ ...channel, deposit, expiryLedger });
  ctx.emit('channel.topped_up', {
    channelId: channel.id.toString(),
    amount: args.amount.toString(),
    deposit: deposit.toString(),
    expiryLedger,
  });
  return { deposit: deposit.toString(), expiryLedger };
});

export const channelClaimOp = defineLedgerOp('channel.claim', (ctx, args) => {
  // Anyone may submit a claim: it can only pay the channel's payee what the payer signed.
  const channel = openChannel(ctx, args.channelId);
  const key = fromHex(channel.voucherKey, 32);
  if (!ctx.env.vouchers.verify(key, channel.id, args.cumulative, fromHex(args.signature, 64))) {
    fail(22, `the voucher signature does not verify under the voucher key of channel ${channel.id}`);
  }
  if (args.cumulative <= channel.claimed)
    fail(23, `cumulative ${args.cumulative} is not above the claimed ${channel.claimed}`);
  if (args.cumulative > channel.deposit)
    fail(24, `cumulative ${args.cumulative} exceeds the deposit ${channel.deposit}`);
  const amount = args.cumulative - channel.claimed;
  ctx.transfer(ctx.env.contracts.channel, channel.payee, amount);
  ctx.state.updateChannel({ ...channel, claimed: args.cumulative });
  ctx.emit('channel.claimed', {
    channelId: channel.id.toString(),
    payee: channel.payee,
    amount: amount.toString(),
    cumulative: args.cumulative.toString(),
  });
  return { amount: amount.toString() };
});

export const channelCloseOp = defineLedgerOp('channel.close', (ctx, args) => {
  const channel = openChannel(ctx, args.channelId);
  if (ctx.source === channel.payee) {
    // The payee may close at any time: it gives up whatever it has not claimed.
  } else if (ctx.source === channel.payer) {
    const allowedFrom = channel.expiryLedger + PAYER_CLOSE_DELAY_LEDGERS;
    if (ctx.ledger < allowedFrom)
      fail(25, `the payer may close channel ${channel.id} from ledger ${allowedFrom} (latest is ${ctx.ledger})`);
  } else {
    fail(26, `only the payer or the payee may close channel ${channel.id}`);
  }
  const refunded = channel.deposit - channel.claimed;
  ctx.transfer(ctx.env.contracts.channel, channel.payer, refunded);
  ctx.state.updateChannel({ ...channel, open: false });
  ctx.emit('channel.closed', {
    channelId: channel.id.toString(),
    refunded: refunded.toString(),
    claimed: channel.claimed.toString(),
  });
  return { refunded: refunded.toString() };
});
