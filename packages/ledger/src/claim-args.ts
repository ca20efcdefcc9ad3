import type { LedgerOpArgsWire } from '@svc/core';
import type { ClaimArgs } from './port.js';

/** The `channel.claim` op's args on the local ledger's wire (PROTOCOL.md §9). */
export function claimArgs(args: ClaimArgs): LedgerOpArgsWire<'channel.claim'> {
  return {
    channelId: args.channelId.toString(),
    cumulative: args.cumulative.toString(),
    signature: args.signature.toLowerCase(),
  };
}
