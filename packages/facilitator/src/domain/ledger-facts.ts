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
 * The ledger's claimed amount and expiry for `channel`: the floor of what was paid. Not its
 * deposit, which a refund lowers — the watcher applies deposits in the ledger's own order (top-ups,
 * refunds), so that an older reading can never undo a refund — and not its close, which the
 * watcher records together with its `channel.closed` event (what the close cost the seller).
 */
export function ledgerFloorOp(channel: LedgerChannel): WriteOp {
  return { op: 'channel.ledger', channelId: channel.id, expiryLedger: channel.expiryLedger, claimed: channel.claimed };
}

/** Whether the ledger shows more claimed, or a later expiry, than the stored record. */
export function ledgerIsAhead(stored: ChannelRecord, onLedger: LedgerChannel): boolean {
  return (
    onLedger.claimed > stored.claimed ||
    onLedger.claimed > stored.charged ||
    onLedger.claimed > stored.lastAccepted ||
    onLedger.expiryLedger > stored.expiryLedger
  );
}
