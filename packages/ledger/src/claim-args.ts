import type { LedgerOpArgsWire } from '@svc/core';
import type { ClaimArgs, ClaimRow, RefundArgs } from './port.js';

/** The `channel.claim` op's args on the local ledger's wire (docs/protocol.md#the-local-ledger). */
export function claimArgs(args: ClaimArgs): LedgerOpArgsWire<'channel.claim'> {
  return {
    channelId: args.channelId.toString(),
    cumulative: args.cumulative.toString(),
    signature: args.signature.toLowerCase(),
  };
}

/** The `channel.claim_many` op's args. */
export function claimManyArgs(rows: readonly ClaimRow[]): LedgerOpArgsWire<'channel.claim_many'> {
  return {
    claims: rows.map((row) => ({
      channelId: row.channelId.toString(),
      maxClaimable: row.maxClaimable.toString(),
      signature: row.signature.toLowerCase(),
      total: row.total.toString(),
    })),
  };
}

/** The `channel.refund` op's args. */
export function refundArgs(args: RefundArgs): LedgerOpArgsWire<'channel.refund'> {
  return { channelId: args.channelId.toString(), amount: args.amount.toString(), nonce: args.nonce.toString() };
}
