// What the ledger says of a channel, as the store's monotonic update (port.ts `channel.ledger`):
// deposit and expiry only grow, claimed only grows — and lifts lastAccepted with it, since nothing
// at or below what the ledger paid out may be accepted again — and a close is final.
import type { LedgerChannel } from '@svc/ledger';
import type { ChannelRecord, WriteOp } from '../store/port.js';

/** The ledger's facts about `channel`, applied as the store's monotonic update; `at` dates a close. */
export function ledgerFactsOp(channel: LedgerChannel, at: string): WriteOp {
  return {
    op: 'channel.ledger',
    channelId: channel.id,
    deposit: channel.deposit,
    expiryLedger: channel.expiryLedger,
    claimed: channel.claimed,
    ...(channel.open ? {} : { closed: { at, refunded: channel.deposit - channel.claimed } }),
  };
}

/**
 * The ledger's amounts and expiry for `channel` — not its close, which the ledger watcher records
 * together with its `channel.closed` event (what the close cost the seller), so that a channel is
 * never closed in the books without it.
 */
export function ledgerFloorOp(channel: LedgerChannel): WriteOp {
  return {
    op: 'channel.ledger',
    channelId: channel.id,
    deposit: channel.deposit,
    expiryLedger: channel.expiryLedger,
    claimed: channel.claimed,
  };
}

/** Whether the ledger shows more claimed, deposited or time left on the channel than the stored record. */
export function ledgerIsAhead(stored: ChannelRecord, onLedger: LedgerChannel): boolean {
  return (
    onLedger.claimed > stored.claimed ||
    onLedger.claimed > stored.lastAccepted ||
    onLedger.deposit > stored.deposit ||
    onLedger.expiryLedger > stored.expiryLedger
  );
}
