// The Store port: everything the facilitator keeps. Adapters: SqliteStore (better-sqlite3, the
// embedded default) and PostgresStore (shared by several instances), both passing one contract
// suite (packages/facilitator/test/store/store-contract.ts).
//
// Writes go through one method, `write(ops)`: the ops of one call are applied atomically (all or
// none), and the promise resolves only once they are durable. Adapters group many concurrent
// write() calls into one database transaction (group commit), each call isolated by a savepoint,
// so durability does not cost throughput. A failed precondition (the compare-and-set of
// `channel.advance`, a duplicate idempotency key) rolls back that call alone and resolves
// { ok: false }; a database failure rejects every call of the group (nothing acknowledged).
//
//   const out = await store.write([
//     { op: 'channel.advance', channelId: 42n, expected: 130000n, cumulative: 135000n, signature, at },
//     { op: 'receipt', receipt },
//     { op: 'event', event: { type: 'voucher.accepted', source: 'facilitator', ts: at, channelId: 42n, accounts: [payer, payee], data } },
//   ]);
//   if (!out.ok) … // another copy of the voucher won the race
import type { Receipt, StreamEndReason } from '@svc/core';

export type ChannelStatus = 'open' | 'closed';

/** The facilitator's record of a channel: the ledger's facts plus what the facilitator accepted. */
export interface ChannelRecord {
  id: bigint;
  network: string;
  channelContract: string;
  payer: string;
  payee: string;
  asset: string;
  /** 64 lowercase hex characters. */
  voucherKey: string;
  deposit: bigint;
  /** Claimed on the ledger (as far as the facilitator knows). */
  claimed: bigint;
  /**
   * Highest voucher amount accepted: under `channel` what is owed in all, under `batch-settlement`
   * the highest ceiling (maxClaimableAmount) signed. Never decreases.
   */
  lastAccepted: bigint;
  /** Signature of the voucher at lastAccepted (hex), needed to claim it; null before any voucher. */
  lastSignature: string | null;
  /**
   * What the seller may claim: the sum of the charges (chargedCumulativeAmount). A `channel`
   * voucher charges its whole amount (charged = lastAccepted); a `batch-settlement` payment
   * charges at most its price, so charged ≤ lastAccepted. claimed ≤ charged ≤ lastAccepted.
   */
  charged: bigint;
  /** The key (G…) that authorises claims below a voucher's ceiling and refunds, bound at opening; null when none. */
  receiverAuthorizer: string | null;
  /** The ledger's refund nonce: refunds applied so far. */
  refundNonce: number;
  /**
   * A `batch-settlement` payment verified and not yet settled (or released): until `until` (ISO),
   * no other payment is charged on the channel. `fingerprint` names the payment and its request.
   */
  reservation: { fingerprint: string; until: string } | null;
  expiryLedger: number;
  status: ChannelStatus;
  /** Vouchers accepted in total, and how many of them claims have covered. */
  vouchers: number;
  vouchersClaimed: number;
  openedAt: string | null;
  lastVoucherAt: string | null;
  closedAt: string | null;
  refunded: bigint | null;
  /** When the facilitator first stored it (ISO); orders GET /channels, newest first. */
  createdAt: string;
}

export interface NewEvent {
  type: string;
  source: 'gateway' | 'facilitator' | 'ledger';
  /** ISO 8601 with milliseconds. */
  ts: string;
  channelId?: bigint;
  /** Every account the event concerns (payer, payee, …); the first is the event's `account`. */
  accounts?: string[];
  data: Record<string, unknown>;
}

export interface StoredEvent {
  /** Strictly increasing in the order events are stored. */
  id: number;
  type: string;
  source: 'gateway' | 'facilitator' | 'ledger';
  ts: string;
  channelId: bigint | null;
  account: string | null;
  accounts: string[];
  data: Record<string, unknown>;
}

export type StreamStatus = 'open' | 'ended';

/** A streaming session (docs/protocol.md#streams): slices of `token` or `second` units paid by vouchers. */
export interface StreamRecord {
  /** 32 lowercase hex characters (128 random bits: knowing it is the capability to use it). */
  id: string;
  channelId: bigint;
  /** The channel's payer, for the per-payer cap ('' for sessions opened before it was kept). */
  payer: string;
  payTo: string;
  resource: string;
  unit: 'token' | 'second';
  /** Price of one slice. */
  sliceCost: bigint;
  /** What the first slice's receipt paid (at least one slice). */
  initialCharge: bigint;
  /** The receipt of the first slice; bound to this session and no other. */
  receiptId: string;
  /** The cumulative the next slice's voucher must reach. */
  required: bigint;
  /** The highest cumulative credited to this session. */
  paid: bigint;
  /** Everything this session was paid: the initial charge plus every slice voucher's delta. */
  charged: bigint;
  /** Vouchers credited, the first slice's included. */
  vouchers: number;
  /** A slice paid but not yet handed to a wait (a voucher that came before the wait). */
  pendingReceiptId: string | null;
  status: StreamStatus;
  reason: StreamEndReason | null;
  /** Units delivered, as reported by the seller when it ended the session; null if unknown. */
  units: number | null;
  openedAt: string;
  lastActivityAt: string;
  endedAt: string | null;
  /**
   * The scheme its slices are paid with: `channel` (a voucher is what is owed in all) or
   * `batch-settlement` (a voucher is a ceiling, charged by the batch machinery).
   */
  scheme: StreamScheme;
}

export type StreamScheme = 'channel' | 'batch-settlement';

export interface StreamFilter {
  status?: StreamStatus;
  channelId?: bigint;
  /** Only sessions whose lastActivityAt is before this ISO time. */
  idleBefore?: string;
}

/** A resource in the discovery catalog: one listing per (resource URL, payTo). */
export interface CatalogEntry {
  resource: string;
  payTo: string;
  /** The 402 terms (`accepts`) and `extensions.bazaar` as last seen with a verified payment, JSON. */
  accepts: unknown[];
  bazaar: Record<string, unknown>;
  description: string;
  mimeType: string;
  payments: number;
  /** Distinct payers seen (bounded by the adapter: at least counts 0, 1, many correctly). */
  payers: number;
  firstSeen: string;
  lastUpdated: string;
}

export interface CatalogQuery {
  payTo?: string;
  limit: number;
  offset: number;
}

export type WriteOp =
  /**
   * Insert a channel first seen on the ledger; no effect when the id is already stored. Its
   * charged is at least its claimed and its lastAccepted at least its charged (the ledger is the
   * floor; lastSignature null if lastAccepted was raised).
   */
  | { op: 'channel.insert'; channel: ChannelRecord }
  /**
   * The compare-and-set advance of a `channel` voucher: lastAccepted := charged := cumulative,
   * lastSignature := signature, vouchers += 1, lastVoucherAt := at — only if the channel is open,
   * its lastAccepted equals `expected` (and `cumulative` > `expected`), its charged equals
   * `expectedCharged` (`expected` when absent), and no other payment's reservation is live at `at`.
   * Otherwise the call fails with 'conflict'.
   */
  | {
      op: 'channel.advance';
      channelId: bigint;
      expected: bigint;
      expectedCharged?: bigint;
      cumulative: bigint;
      signature: string;
      at: string;
    }
  /**
   * Reserves an open channel for one `batch-settlement` payment (its /verify): reservation :=
   * { fingerprint, until } — only if charged equals `expectedCharged` and the channel holds no live
   * reservation at `at` (none, one whose until ≤ at, or this same fingerprint). Else 'conflict'.
   */
  | {
      op: 'channel.reserve';
      channelId: bigint;
      expectedCharged: bigint;
      fingerprint: string;
      until: string;
      at: string;
    }
  /**
   * Commits one `batch-settlement` charge: charged := expectedCharged + charge; if ceiling >
   * lastAccepted, lastAccepted := ceiling and lastSignature := signature; vouchers += 1;
   * lastVoucherAt := at; the reservation is cleared — only if the channel is open, charged equals
   * `expectedCharged`, expectedCharged + charge ≤ ceiling, and no live reservation at `at` is
   * another payment's (one with `fingerprint` is this payment's own). Else 'conflict'.
   */
  | {
      op: 'channel.charge';
      channelId: bigint;
      expectedCharged: bigint;
      charge: bigint;
      ceiling: bigint;
      signature: string;
      fingerprint: string;
      at: string;
    }
  /** Clears the reservation if it is `fingerprint`'s (a payment verified and not charged); no effect otherwise. */
  | { op: 'channel.release'; channelId: bigint; fingerprint: string }
  /**
   * A refund on the ledger (in nonce order): deposit := deposit, refundNonce := refundNonce — only
   * if refundNonce is above the stored one; no effect otherwise (an older refund, or a missing channel).
   */
  | { op: 'channel.refunded'; channelId: bigint; refundNonce: number; deposit: bigint }
  /**
   * Ledger facts about a channel, applied monotonically: deposit and expiryLedger only grow,
   * claimed := max(claimed, value), a closed channel never reopens. Missing channel: no effect.
   * What the ledger shows claimed is the floor of what was accepted: when claimed rises above
   * charged it lifts charged, and above lastAccepted (a store that lost the vouchers behind a
   * claim) lastAccepted := claimed and lastSignature := null, so that no voucher at or below it is
   * accepted again.
   */
  | {
      op: 'channel.ledger';
      channelId: bigint;
      deposit?: bigint;
      expiryLedger?: number;
      claimed?: bigint;
      closed?: { at: string; refunded: bigint };
    }
  /**
   * A confirmed claim: claimed := max(claimed, cumulative), vouchersClaimed := max(…, vouchersCovered);
   * charged and lastAccepted are raised to claimed as for channel.ledger.
   */
  | { op: 'channel.claimed'; channelId: bigint; cumulative: bigint; vouchersClaimed: number }
  | { op: 'event'; event: NewEvent }
  /** A receipt exactly as issued (stored once; a second copy of the same id is ignored). */
  | { op: 'receipt'; receipt: Receipt }
  /** Remember a response under an idempotency key; fails with 'duplicate' when the key exists. */
  | { op: 'idempotency'; key: string; fingerprint: string; response: string; at: string }
  /** Takes (deletes) the record under `key` if its fingerprint is `fingerprint`; else 'conflict': a record taken once. */
  | { op: 'idempotency.take'; key: string; fingerprint: string }
  /**
   * The answer to a payment named by x402's `payment-identifier` (domain/payment-ids.ts), kept per
   * (payTo, id) until `expiresAt`: inserted, or replacing a record that expired at `at`; fails with
   * 'duplicate' when a live record holds (payTo, id). Sweeps the records expired at `at`.
   */
  | {
      op: 'payment.id';
      payTo: string;
      id: string;
      fingerprint: string;
      response: string;
      at: string;
      expiresAt: string;
    }
  | { op: 'meta.set'; key: string; value: string }
  /**
   * Sets a meta value only if the key has none: the first of several writers wins, the others have
   * no effect (never a failure; read the key back to learn which value stands).
   */
  | { op: 'meta.init'; key: string; value: string }
  /**
   * Opens a session. Fails with 'limit' when its channel already has `maxPerChannel` open sessions,
   * its payer `maxPerPayer`, its payee `maxPerPayee`, or `maxTotal` sessions are open in all; and
   * with 'duplicate' when its receiptId is bound to another session (open or ended).
   */
  | ({ op: 'stream.open'; stream: StreamRecord } & StreamLimits)
  /**
   * A slice paid: paid := cumulative, charged += delta, vouchers += 1, required := required,
   * pendingReceiptId := receiptId, lastActivityAt := at. Only while open, with no slice pending
   * (pendingReceiptId null: a wait took the last one) and for one slice at most (delta ≤
   * sliceCost); else 'conflict'. A wait delivers one slice per credit, so a credit beside a
   * pending one, or of several slices, would be charged and never delivered.
   */
  | {
      op: 'stream.credit';
      streamId: string;
      cumulative: bigint;
      delta: bigint;
      receiptId: string;
      required: bigint;
      at: string;
    }
  /** A wait took the pending slice: pendingReceiptId := null if it is `receiptId` and the session is open; else 'conflict'. */
  | { op: 'stream.consume'; streamId: string; receiptId: string; at: string }
  /** Activity (a wait began or ended): lastActivityAt := at while open; no effect otherwise. */
  | { op: 'stream.touch'; streamId: string; at: string }
  /** Ends a session: status 'ended', reason, units, endedAt. Only while open; else 'conflict'. */
  | { op: 'stream.end'; streamId: string; reason: StreamEndReason; units: number | null; at: string }
  /** Records units a seller reported after the session had already ended (only when still null). */
  | { op: 'stream.units'; streamId: string; units: number }
  /**
   * `payments` verified payments (≥ 1) by `payer` for a listed resource: inserts the (resource,
   * payTo) listing or updates it — accepts, bazaar, description, mimeType, lastUpdated := the given
   * ones, payments += `payments` — and counts `payer` among its distinct payers. Never touches
   * another payTo's listing.
   */
  | {
      op: 'catalog.record';
      resource: string;
      payTo: string;
      payer: string;
      payments: number;
      accepts: unknown[];
      bazaar: Record<string, unknown>;
      description: string;
      mimeType: string;
      at: string;
    };

/** The caps on open stream sessions, decided atomically with the open. */
export interface StreamLimits {
  maxPerChannel: number;
  maxPerPayer: number;
  maxPerPayee: number;
  maxTotal: number;
}

export type WriteResult =
  { ok: true; events: StoredEvent[] } | { ok: false; reason: 'conflict' | 'duplicate' | 'limit'; op: number };

export interface ChannelFilter {
  payer?: string;
  payee?: string;
  status?: ChannelStatus;
  /** A page after this channel in the newest-first order (keyset: its createdAt and id). */
  after?: { createdAt: string; id: bigint };
  /** At most this many. */
  limit?: number;
}

export interface EventQuery {
  /** Only events with id > after (ascending order). */
  after?: number;
  /** Only events with id < before (descending order, newest first). */
  before?: number;
  /** Ascending (default, for feeds) or descending (newest first, for ledgers). */
  order?: 'asc' | 'desc';
  limit: number;
  account?: string;
  channelId?: bigint;
  types?: string[];
}

export interface ReceiptQuery {
  payee?: string;
  channelId?: bigint;
  /** Receipts stored before this cursor (opaque to callers; the adapter's own position). */
  before?: number;
  limit: number;
}

export interface IdempotentRecord {
  key: string;
  fingerprint: string;
  response: string;
  at: string;
}

/** A `payment.id` record: the answer given to the payment a payee's buyer named `id`. */
export interface PaymentIdRecord {
  payTo: string;
  id: string;
  fingerprint: string;
  response: string;
  at: string;
  expiresAt: string;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** The schema this store shares with other facilitator instances (PostgreSQL), or null: one process owns it (SQLite). */
  readonly sharedSchema: string | null;
  /** Applies pending versioned migrations; safe to call on every start. */
  migrate(): Promise<void>;
  write(ops: WriteOp[]): Promise<WriteResult>;
  getChannel(id: bigint): Promise<ChannelRecord | null>;
  /** Newest first (createdAt, then id, descending). */
  listChannels(filter?: ChannelFilter): Promise<ChannelRecord[]>;
  /** How many channels match (`after` and `limit` ignored), without reading them. */
  countChannels(filter?: ChannelFilter): Promise<number>;
  events(query: EventQuery): Promise<StoredEvent[]>;
  lastEventId(): Promise<number>;
  getReceipt(id: string): Promise<Receipt | null>;
  /** The receipt issued for a channel at a cumulative amount, if any. */
  findReceipt(channelId: bigint, cumulative: bigint): Promise<Receipt | null>;
  /** Newest first, with each receipt's cursor position. */
  listReceipts(query: ReceiptQuery): Promise<{ receipt: Receipt; position: number }[]>;
  getIdempotent(key: string): Promise<IdempotentRecord | null>;
  /** The `payment.id` record of (payTo, id) if it is live at `at` (its expiresAt after `at`); else null. */
  getPaymentId(payTo: string, id: string, at: string): Promise<PaymentIdRecord | null>;
  getMeta(key: string): Promise<string | null>;
  getStream(id: string): Promise<StreamRecord | null>;
  /** Oldest first (openedAt, then id). */
  listStreams(filter?: StreamFilter): Promise<StreamRecord[]>;
  /** Open sessions, on one channel or in all. */
  countOpenStreams(channelId?: bigint): Promise<number>;
  /** Open sessions of one payer or of one payee. */
  countOpenStreamsOf(party: { payer: string } | { payTo: string }): Promise<number>;
  /** Catalog listings, most paid first (payments desc, then lastUpdated desc, resource, payTo), with the total. */
  listCatalog(query: CatalogQuery): Promise<{ items: CatalogEntry[]; total: number }>;
  close(): Promise<void>;
}
