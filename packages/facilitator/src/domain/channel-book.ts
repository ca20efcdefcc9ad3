// The channel cache in front of the store and the ledger. The hot path reads a channel from
// memory; a miss loads it from the store, then from the ledger (a channel the facilitator has not
// seen yet), and records it with its opening. The store stays authoritative: the compare-and-set of an advance
// runs there, and a lost race reloads the channel.
//
// The ledger is the floor of what was paid: a miss that finds the channel in the store reads the
// ledger too, and a store behind it (lost, or put back to an older copy) is brought up to what the
// ledger shows before any voucher is judged — nothing at or below the ledger's claimed amount is
// accepted again. When the ledger cannot be read, the stored record stands in for it only while
// the store is trusted (StoreTrust: not known to be older than what this facilitator has seen, or
// reconciled since); otherwise the miss fails with LedgerUnavailable (503, try again shortly).
import { fromHex, isStrictPublicKey } from '@svc/core';
import { LedgerUnavailable } from '@svc/ledger';
import type { Ledger } from '@svc/ledger';
import type { ChannelRecord, Store } from '../store/port.js';
import type { Clock } from './clock.js';
import { ledgerFloorOp, ledgerIsAhead } from './ledger-facts.js';
import type { ChannelSource, Openings } from './openings.js';

const MAX_CACHED = 100_000;
const MISS_TTL_MS = 5_000;
const MAX_MISSES = 10_000;

export interface CachedChannel {
  record: ChannelRecord;
  voucherKey: Uint8Array;
  /** False when the ledger holds a key that strict verification refuses (no voucher can pass). */
  keyIsStrict: boolean;
}

/** Whether a stored record may stand in for the ledger's when the ledger cannot be read. */
export interface StoreTrust {
  storeTrusted(): boolean;
}

const ALWAYS_TRUSTED: StoreTrust = { storeTrusted: () => true };

export class ChannelBook {
  private readonly cache = new Map<bigint, CachedChannel>();
  private readonly misses = new Map<bigint, number>();
  private readonly loading = new Map<bigint, Promise<CachedChannel | null>>();

  constructor(
    private readonly store: Store,
    private readonly ledger: Ledger,
    private readonly source: ChannelSource,
    private readonly clock: Clock,
    private readonly openings: Openings,
    private readonly trust: StoreTrust = ALWAYS_TRUSTED,
  ) {}

  /** The channel, or null when neither the store nor the ledger knows it. May throw LedgerUnavailable. */
  get(id: bigint): Promise<CachedChannel | null> {
    const hit = this.cache.get(id);
    if (hit) return Promise.resolve(hit);
    const missAt = this.misses.get(id);
    if (missAt !== undefined && this.clock.now() - missAt < MISS_TTL_MS) return Promise.resolve(null);
    let pending = this.loading.get(id);
    if (!pending) {
      // Single flight: concurrent misses for one id share one load.
      pending = this.load(id).finally(() => this.loading.delete(id));
      this.loading.set(id, pending);
    }
    return pending;
  }

  /** Drops the cached copy; the next get() reads the store. */
  invalidate(id: bigint): void {
    this.cache.delete(id);
    this.misses.delete(id);
  }

  /** Re-reads the store (after a lost compare-and-set or a ledger change). */
  async reload(id: bigint): Promise<CachedChannel | null> {
    this.invalidate(id);
    const record = await this.store.getChannel(id);
    return record ? this.remember(record) : null;
  }

  /** Mirrors a committed `channel` advance without a store read (the voucher charged its whole amount). */
  advanced(id: bigint, cumulative: bigint, signature: string, at: string): void {
    const c = this.cache.get(id);
    if (!c || cumulative <= c.record.lastAccepted) return;
    c.record = {
      ...c.record,
      lastAccepted: cumulative,
      lastSignature: signature,
      charged: cumulative,
      vouchers: c.record.vouchers + 1,
      lastVoucherAt: at,
    };
  }

  /**
   * Mirrors a committed `batch-settlement` charge: charged moves to `charged`, and a ceiling above
   * the last one becomes the voucher a claim presents; the reservation is gone.
   */
  charged(id: bigint, charged: bigint, ceiling: bigint, signature: string, at: string): void {
    const c = this.cache.get(id);
    if (!c || charged < c.record.charged) return;
    const higher = ceiling > c.record.lastAccepted;
    c.record = {
      ...c.record,
      charged,
      lastAccepted: higher ? ceiling : c.record.lastAccepted,
      lastSignature: higher ? signature : c.record.lastSignature,
      vouchers: c.record.vouchers + 1,
      lastVoucherAt: at,
      reservation: null,
    };
  }

  private async load(id: bigint): Promise<CachedChannel | null> {
    const stored = await this.store.getChannel(id);
    if (stored) return this.remember(await this.floored(stored));
    const onLedger = await this.ledger.getChannel(id);
    if (!onLedger) {
      if (this.misses.size >= MAX_MISSES) this.misses.clear();
      this.misses.set(id, this.clock.now());
      return null;
    }
    // Its opening is recorded before any payment on it (openings.ts); if the opening is out of
    // reach, the channel is recorded as the ledger has it and the watcher records the opening.
    if (await this.openings.recordAhead(id)) {
      const recorded = await this.store.getChannel(id);
      if (recorded) return this.remember(recorded);
    }
    const record: ChannelRecord = {
      id,
      network: this.source.network,
      channelContract: this.source.channelContract,
      payer: onLedger.payer,
      payee: onLedger.payee,
      asset: onLedger.asset,
      voucherKey: onLedger.voucherKey.toLowerCase(),
      deposit: onLedger.deposit,
      claimed: onLedger.claimed,
      lastAccepted: onLedger.claimed,
      lastSignature: null,
      charged: onLedger.claimed,
      receiverAuthorizer: onLedger.receiverAuthorizer,
      refundNonce: Number(onLedger.refundNonce),
      reservation: null,
      expiryLedger: onLedger.expiryLedger,
      status: onLedger.open ? 'open' : 'closed',
      vouchers: 0,
      vouchersClaimed: 0,
      openedAt: null,
      lastVoucherAt: null,
      closedAt: null,
      refunded: null,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    await this.store.write([{ op: 'channel.insert', channel: record }]);
    // Another instance may have inserted it first: the store's copy wins.
    const settled = await this.store.getChannel(id);
    return settled ? this.remember(settled) : null;
  }

  /** The stored record, brought up to what the ledger shows (see the header). */
  private async floored(stored: ChannelRecord): Promise<ChannelRecord> {
    let onLedger;
    try {
      onLedger = await this.ledger.getChannel(stored.id);
    } catch (err) {
      if (err instanceof LedgerUnavailable && !this.trust.storeTrusted())
        throw new LedgerUnavailable(
          `The facilitator is reconciling its store with the ledger, which does not answer: channel ${stored.id} cannot be judged yet.`,
          { cause: err },
        );
      if (err instanceof LedgerUnavailable) return stored;
      throw err;
    }
    if (!onLedger || !ledgerIsAhead(stored, onLedger)) return stored;
    await this.store.write([ledgerFloorOp(onLedger)]);
    return (await this.store.getChannel(stored.id)) ?? stored;
  }

  private remember(record: ChannelRecord): CachedChannel {
    let voucherKey: Uint8Array = new Uint8Array(32);
    let keyIsStrict = false;
    try {
      voucherKey = fromHex(record.voucherKey, 32);
      keyIsStrict = isStrictPublicKey(voucherKey);
    } catch {
      keyIsStrict = false;
    }
    const entry = { record, voucherKey, keyIsStrict };
    if (this.cache.size >= MAX_CACHED) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(record.id, entry);
    return entry;
  }
}
