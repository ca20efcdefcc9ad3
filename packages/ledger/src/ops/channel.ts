// The channel contract (docs/protocol.md#channels-and-records and #the-local-ledger; docs/channel-contract.md): open → top_up →
// claim / claim_many / refund → close. Checks run in the contract's order, so the first failing
// rule decides the code: the channel exists (20), is open (21), the caller may act (26), then the
// op's own rules; a smart account's agent then passes its policy (payee 5, caps 6/7:
// agent-guard.ts) before the deposit moves. The caller of a function that takes one (claim_many,
// refund, close) is the transaction's source: its `require_auth()` holds by the source's signature.
import { channelIdOf, fromHex, I128_MAX, isStrictPublicKey, U64_MAX } from '@svc/core';
import type { LedgerOpArgs } from '@svc/core';
import { MAX_CLAIMS_PER_TX } from '../claim-batch.js';
import { PAYER_CLOSE_DELAY_LEDGERS } from '../contracts.js';
import type { LedgerChannel } from '../port.js';
import type { OpContext } from './context.js';
import { fail } from './contract-error.js';
import { defineLedgerOp } from './registry.js';

type ClaimRowArgs = LedgerOpArgs<'channel.claim_many'>['claims'][number];

function openChannel(ctx: OpContext, id: bigint, where = ''): LedgerChannel {
  const channel = ctx.state.channel(id);
  if (!channel) return fail(20, `${where}channel ${id} does not exist`);
  if (!channel.open) return fail(21, `${where}channel ${id} is closed`);
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
  const key = fromHex(args.voucherKey, 32);
  // docs/protocol.md#voucher: a small-order or non-canonical key would let anyone forge vouchers.
  if (!isStrictPublicKey(key)) {
    fail(27, 'voucherKey is not a strictly valid ed25519 public key (small order or not canonically encoded)');
  }
  requireFuture(ctx, args.expiryLedger);
  // The id is the voucher key's (channelIdOf), so one key names one channel, ever.
  const id = channelIdOf(ctx.env.passphrase, ctx.env.contracts.channel, key);
  if (ctx.state.channel(id)) fail(27, 'voucher key already used: open the channel with a new voucher key');
  ctx.agent?.requirePayee(args.payee);
  ctx.transfer(ctx.source, ctx.env.contracts.channel, args.deposit);
  const channel: LedgerChannel = {
    id,
    payer: ctx.source,
    payee: args.payee,
    asset: ctx.asset,
    deposit: args.deposit,
    claimed: 0n,
    voucherKey: args.voucherKey,
    receiverAuthorizer: args.receiverAuthorizer ?? null,
    expiryLedger: args.expiryLedger,
    refundNonce: 0n,
    open: true,
  };
  ctx.state.insertChannel(channel);
  ctx.emit('channel.opened', {
    channelId: id.toString(),
    payer: channel.payer,
    payee: channel.payee,
    asset: channel.asset,
    deposit: channel.deposit.toString(),
    expiryLedger: channel.expiryLedger,
    voucherKey: channel.voucherKey,
    receiverAuthorizer: channel.receiverAuthorizer,
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

/**
 * One claim under a voucher for `row.maxClaimable`: pays the payee `row.total − claimed`. `claim`
 * is the row whose total is the voucher's whole amount (its `cumulative`); `claim_many` says
 * `where` each row is.
 */
function claimRow(ctx: OpContext, row: ClaimRowArgs, where: string, what: 'cumulative' | 'total'): bigint {
  const channel = openChannel(ctx, row.channelId, where);
  const key = fromHex(channel.voucherKey, 32);
  if (!ctx.env.vouchers.verify(key, channel.id, row.maxClaimable, fromHex(row.signature, 64))) {
    fail(22, `${where}the voucher signature does not verify under the voucher key of channel ${channel.id}`);
  }
  if (row.total <= channel.claimed)
    fail(23, `${where}${what} ${row.total} is not above the claimed ${channel.claimed}`);
  if (row.total > row.maxClaimable)
    fail(24, `${where}${what} ${row.total} exceeds the voucher's maxClaimable ${row.maxClaimable}`);
  if (row.total > channel.deposit) fail(24, `${where}${what} ${row.total} exceeds the deposit ${channel.deposit}`);
  // Less than the voucher's amount only for the authorizer the payer named: anyone else could
  // otherwise settle a channel below what its seller was owed.
  if (row.total < row.maxClaimable && channel.receiverAuthorizer !== ctx.source)
    fail(26, `${where}only the receiver authorizer of channel ${channel.id} may claim less than the voucher's amount`);
  const amount = row.total - channel.claimed;
  ctx.transfer(ctx.env.contracts.channel, channel.payee, amount);
  ctx.state.updateChannel({ ...channel, claimed: row.total });
  ctx.emit('channel.claimed', {
    channelId: channel.id.toString(),
    payee: channel.payee,
    amount: amount.toString(),
    cumulative: row.total.toString(),
  });
  return amount;
}

export const channelClaimOp = defineLedgerOp('channel.claim', (ctx, args) => {
  // Anyone may submit a claim: it can only pay the channel's payee what the payer signed.
  const { channelId, cumulative, signature } = args;
  const row = { channelId, maxClaimable: cumulative, signature, total: cumulative };
  return { amount: claimRow(ctx, row, '', 'cumulative').toString() };
});

export const channelClaimManyOp = defineLedgerOp('channel.claim_many', (ctx, args) => {
  // All rows or none: the first failing row fails the call with its code, and the savepoint
  // around the op (local-ledger.ts) undoes the rows before it.
  if (args.claims.length === 0) fail(27, 'claims is empty: name at least one channel');
  if (args.claims.length > MAX_CLAIMS_PER_TX)
    fail(27, `${args.claims.length} claims in one call: at most ${MAX_CLAIMS_PER_TX}, split the batch`);
  const amounts = args.claims.map((row, i) => claimRow(ctx, row, `claims[${i}]: `, 'total').toString());
  return { amounts };
});

export const channelRefundOp = defineLedgerOp('channel.refund', (ctx, args) => {
  const channel = openChannel(ctx, args.channelId);
  if (ctx.source !== channel.receiverAuthorizer && ctx.source !== channel.payee)
    fail(26, `only the receiver authorizer or the payee of channel ${channel.id} may refund it`);
  requirePositive(args.amount, 'amount');
  if (args.nonce !== channel.refundNonce)
    fail(27, `nonce ${args.nonce} is not the refund nonce of channel ${channel.id} (${channel.refundNonce})`);
  if (channel.refundNonce === U64_MAX) fail(27, `the refund nonce of channel ${channel.id} is exhausted`);
  // The nonce moves first, so that no refund can be replayed whatever happens after it.
  const refundNonce = channel.refundNonce + 1n;
  ctx.state.updateChannel({ ...channel, refundNonce });
  const available = channel.deposit - channel.claimed;
  const refunded = args.amount < available ? args.amount : available;
  const deposit = channel.deposit - refunded;
  ctx.transfer(ctx.env.contracts.channel, channel.payer, refunded);
  ctx.state.updateChannel({ ...channel, refundNonce, deposit });
  ctx.emit('channel.refunded', {
    channelId: channel.id.toString(),
    amount: refunded.toString(),
    deposit: deposit.toString(),
    refundNonce: refundNonce.toString(),
  });
  return { refunded: refunded.toString() };
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
