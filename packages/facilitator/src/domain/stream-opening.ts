// Opening a stream session: a seller whose first slice was paid opens it, bound to that slice's
// receipt (fresh, for this channel and payee), within the caps on open sessions — per channel and
// in total (spec), per payer and per payee (fairness). A stream's first slice is refused before it
// is charged when no session could be opened for it anyway (checkCapacity).
import { BATCH_SCHEME, SvcError, randomBytes, toHex } from '@svc/core';
import type { StreamLimits, StreamRecord, StreamScheme, Store } from '../store/port.js';
import type { ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import { RATE_LIMIT_RETRY_SECONDS, schemeOf, streamEvent } from './stream-records.js';

/** The first slice's receipt must be this fresh to open a session with it. */
export const RECEIPT_FRESH_MS = 60_000;

/** What opens a session: the record's terms and its first slice's receipt. */
export interface OpenInput extends Pick<
  StreamRecord,
  'channelId' | 'payTo' | 'resource' | 'unit' | 'sliceCost' | 'initialCharge' | 'receiptId'
> {
  /** The scheme the first slice was paid with (default `channel`). */
  scheme?: StreamScheme;
}

export interface StreamOpeningDeps {
  store: Store;
  events: EventLog;
  book: ChannelBook;
  /** This facilitator's key: the receiver authorizer a batch-settlement session's channel is bound to. */
  receiverAuthorizer: string;
  clock: Clock;
  limits: StreamLimits;
  /** Told of each session opened. */
  opened(): void;
}

export class StreamOpening {
  constructor(private readonly deps: StreamOpeningDeps) {}

  async open(input: OpenInput): Promise<{ stream: StreamRecord; deposit: bigint }> {
    await this.checkFirstSlice(input);
    const channel = await this.deps.book.get(input.channelId);
    if (!channel || channel.record.status !== 'open')
      throw new SvcError('CONFLICT', `Channel ${input.channelId} is not open.`);
    if (channel.record.payee !== input.payTo)
      throw new SvcError('CONFLICT', `Channel ${input.channelId} does not pay ${input.payTo}.`);
    const scheme = input.scheme ?? 'channel';
    if (scheme === BATCH_SCHEME && channel.record.receiverAuthorizer !== this.deps.receiverAuthorizer)
      throw new SvcError(
        'CONFLICT',
        `Channel ${input.channelId} is not bound to this facilitator's receiver authorizer ${this.deps.receiverAuthorizer}: its slices cannot be paid with batch-settlement; open the session with scheme channel.`,
      );
    const now = new Date(this.deps.clock.now()).toISOString();
    // The next slice's voucher is on top of what was charged (a batch-settlement first slice's
    // ceiling may be above it; for `channel` the two are the same).
    const paid = channel.record.charged;
    const stream: StreamRecord = {
      id: toHex(randomBytes(16)),
      channelId: input.channelId,
      payer: channel.record.payer,
      payTo: input.payTo,
      resource: input.resource,
      unit: input.unit,
      sliceCost: input.sliceCost,
      initialCharge: input.initialCharge,
      receiptId: input.receiptId,
      required: paid + input.sliceCost,
      paid,
      charged: input.initialCharge,
      vouchers: 1,
      pendingReceiptId: null,
      status: 'open',
      reason: null,
      units: null,
      openedAt: now,
      lastActivityAt: now,
      endedAt: null,
      scheme,
    };
    const result = await this.deps.events.commit([
      { op: 'stream.open', stream, ...this.deps.limits },
      streamEvent('stream.started', stream, now, {
        streamId: stream.id,
        channelId: stream.channelId.toString(),
        unit: stream.unit,
        resource: stream.resource,
        ...schemeOf(stream),
      }),
    ]);
    if (!result.ok && result.reason === 'limit') {
      const why = (await this.fullCap(stream.channelId, stream.payer, stream.payTo)) ?? 'a cap was reached';
      throw new SvcError('RATE_LIMITED', `No more stream sessions: ${why}.`, { retryAfter: RATE_LIMIT_RETRY_SECONDS });
    }
    if (!result.ok) throw new SvcError('CONFLICT', 'That receipt already opened a stream session.');
    this.deps.opened();
    return { stream, deposit: channel.record.deposit };
  }

  /**
   * Before a stream's first slice is charged: refuses (429) when no session could be opened for it
   * anyway, so a buyer is not charged a slice for a session that cannot exist.
   */
  async checkCapacity(channelId: bigint): Promise<void> {
    const channel = await this.deps.book.get(channelId);
    const full = await this.fullCap(channelId, channel?.record.payer ?? null, channel?.record.payee ?? null);
    if (full)
      throw new SvcError('RATE_LIMITED', `No stream session can be opened now: ${full}; try again shortly.`, {
        retryAfter: RATE_LIMIT_RETRY_SECONDS,
      });
  }

  /**
   * Which cap a new session of this channel, payer and payee would exceed, in words; null if none.
   * The caps per payer and per payee keep one party from taking the sessions everyone shares.
   */
  private async fullCap(channelId: bigint, payer: string | null, payTo: string | null): Promise<string | null> {
    const { maxPerChannel, maxPerPayer, maxPerPayee, maxTotal } = this.deps.limits;
    const onChannel = await this.deps.store.countOpenStreams(channelId);
    if (onChannel >= maxPerChannel)
      return `channel ${channelId} has ${onChannel} open sessions (at most ${maxPerChannel})`;
    if (payer !== null && (await this.deps.store.countOpenStreamsOf({ payer })) >= maxPerPayer)
      return `the payer ${payer} has ${maxPerPayer} open sessions (at most ${maxPerPayer} per payer)`;
    if (payTo !== null && (await this.deps.store.countOpenStreamsOf({ payTo })) >= maxPerPayee)
      return `the seller ${payTo} has ${maxPerPayee} open sessions (at most ${maxPerPayee} per seller)`;
    if ((await this.deps.store.countOpenStreams()) >= maxTotal) return `${maxTotal} sessions are open`;
    return null;
  }

  private async checkFirstSlice(input: OpenInput): Promise<void> {
    const receipt = await this.deps.store.getReceipt(input.receiptId);
    const fresh = receipt !== null && this.deps.clock.now() - Date.parse(receipt.ts) <= RECEIPT_FRESH_MS;
    if (
      !receipt ||
      receipt.channelId !== input.channelId.toString() ||
      receipt.payee !== input.payTo ||
      BigInt(receipt.amount) < input.initialCharge ||
      !fresh
    ) {
      throw new SvcError(
        'CONFLICT',
        'receiptId must name the receipt of the first slice: for this channel and payee, at least initialCharge, issued within the last 60 s.',
      );
    }
    if (input.initialCharge < input.sliceCost)
      throw new SvcError('BAD_REQUEST', 'initialCharge must cover at least one slice.');
  }
}
