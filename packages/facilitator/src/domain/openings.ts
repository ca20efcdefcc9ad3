// A channel's opening, recorded once, before its first payment. The ledger watcher
// records `channel.opened` when its pass reaches the opening; a voucher on a channel the store does
// not know yet may come first (a standalone ledger's watcher polls). Then the channel book records
// the opening ahead of the watcher — read from the ledger's event log after the watcher's cursor,
// which it does not move — so the opening takes an event id before the payment's. Whoever records
// it first writes the idempotency key `opened:<channelId>` with it; the other skips it.
//
//   const openings = new Openings(ledger, store, events, { network, channelContract });
//   await openings.recordAhead(42n); // true: the opening is recorded (now or before)
import { formatUnits, parseUnits } from '@svc/core';
import type { Ledger, LedgerEvent } from '@svc/ledger';
import type { ChannelRecord, Store, WriteOp } from '../store/port.js';
import type { EventLog } from './event-log.js';

/** Where this facilitator's channels live: what a recorded channel is stamped with. */
export interface ChannelSource {
  network: string;
  channelContract: string;
}

export const CURSOR_KEY = 'ledger.cursor';
/** Ledger events read ahead of the watcher's cursor to find one opening, at most. */
const AHEAD_PAGES = 20;
const PAGE = 500;

export function openingKey(channelId: bigint): string {
  return `opened:${channelId}`;
}

export class Openings {
  constructor(
    private readonly ledger: Ledger,
    private readonly store: Store,
    private readonly events: EventLog,
    private readonly source: ChannelSource,
  ) {}

  /** Whether the opening of `channelId` has been recorded (by anyone). */
  async recorded(channelId: bigint): Promise<boolean> {
    return (await this.store.getIdempotent(openingKey(channelId))) !== null;
  }

  /**
   * What records the opening `ev`: the channel (inserted unless it is there), the idempotency key
   * and the event. A write holding them fails with 'duplicate' when someone recorded it first.
   */
  ops(ev: LedgerEvent, channelId: bigint): { channel: ChannelRecord; ops: WriteOp[] } {
    const d = ev.data;
    const channel: ChannelRecord = {
      id: channelId,
      network: this.source.network,
      channelContract: this.source.channelContract,
      payer: str(d['payer']),
      payee: str(d['payee']),
      asset: str(d['asset']),
      voucherKey: str(d['voucherKey']).toLowerCase(),
      deposit: parseUnits(str(d['deposit'])),
      claimed: 0n,
      lastAccepted: 0n,
      lastSignature: null,
      charged: 0n,
      // An opening names the key that authorises claims below a voucher's ceiling, or none.
      receiverAuthorizer: typeof d['receiverAuthorizer'] === 'string' ? d['receiverAuthorizer'] : null,
      refundNonce: 0,
      reservation: null,
      expiryLedger: Number(d['expiryLedger']),
      status: 'open',
      vouchers: 0,
      vouchersClaimed: 0,
      openedAt: ev.ts,
      lastVoucherAt: null,
      closedAt: null,
      refunded: null,
      createdAt: ev.ts,
    };
    const data = {
      channelId: channelId.toString(),
      payer: channel.payer,
      payee: channel.payee,
      asset: channel.asset,
      deposit: formatUnits(channel.deposit),
      expiryLedger: channel.expiryLedger,
      receiverAuthorizer: channel.receiverAuthorizer,
      tx: ev.tx,
    };
    return {
      channel,
      ops: [
        { op: 'channel.insert', channel },
        { op: 'idempotency', key: openingKey(channelId), fingerprint: 'channel.opened', response: '', at: ev.ts },
        {
          op: 'event',
          event: {
            type: 'channel.opened',
            source: 'ledger',
            ts: ev.ts,
            channelId,
            accounts: [channel.payer, channel.payee],
            data,
          },
        },
      ],
    };
  }

  /**
   * Records the opening of `channelId` from the ledger's events after the watcher's cursor.
   * Resolves whether it is recorded now (by this call or anyone before); false when the opening
   * is not within reach (the caller then records the channel as the ledger has it, without event).
   */
  async recordAhead(channelId: bigint): Promise<boolean> {
    if (await this.recorded(channelId)) return true;
    let cursor = await this.store.getMeta(CURSOR_KEY);
    for (let i = 0; i < AHEAD_PAGES; i++) {
      const page = await this.ledger.events(cursor, PAGE);
      const ev = page.events.find((e) => e.type === 'channel.opened' && channelIdOf(e.data['channelId']) === channelId);
      if (ev) {
        const written = await this.events.commit(this.ops(ev, channelId).ops);
        return written.ok || written.reason === 'duplicate';
      }
      if (page.events.length < PAGE || page.cursor === null || page.cursor === cursor) return false;
      cursor = page.cursor;
    }
    return false;
  }
}

// Ledger event data is JSON from the ledger: read it defensively, never String() an object.
export function str(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return v.toString();
  throw new TypeError(`unexpected ledger event value: ${JSON.stringify(v)}`);
}

export function channelIdOf(v: unknown): bigint | null {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  return typeof v === 'string' && /^[0-9]{1,20}$/.test(v) ? BigInt(v) : null;
}
