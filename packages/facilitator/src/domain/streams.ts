// Streaming sessions (spec "States and transitions"; docs/protocol.md#streams). A seller whose first slice
// was paid opens a session bound to that slice's receipt; each time a slice is used up it waits
// (long poll) for the buyer's next voucher, which the buyer posts straight to the facilitator.
// Sessions live in the Store, so they survive nothing by accident: a restart ends the open ones
// (ABORTED, with what they were charged), and `stream.ended` is written once, with the end itself.
//
// A session is paid with the scheme of its first slice. Under `channel` a slice's voucher is what is
// owed in all, accepted by the verifier (verifier.ts); under x402's `batch-settlement` it is a
// ceiling — what was charged on the channel plus the slice — charged by batch-payments.ts. Either
// way the slice's credit is written with the payment itself, and the numbers are the same: a slice
// is charged whole, so what was charged after it is its voucher.
import { BATCH_SCHEME, SvcError, batchTermsOf, formatUnits, randomBytes, svcCodeOfBatch, toHex } from '@svc/core';
import type { BatchPayment, PaymentResponse, PaymentRequirements, StreamEndReason } from '@svc/core';
import type { Bus } from '../bus/port.js';
import type { StreamLimits, StreamRecord, StreamScheme, Store, WriteOp } from '../store/port.js';
import type { BatchInput, BatchSettled } from './batch-payments.js';
import type { ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import { paymentResponseOf } from './payment-response.js';
import type { Verifier } from './verifier.js';

/** The first slice's receipt must be this fresh to open a session with it. */
export const RECEIPT_FRESH_MS = 60_000;
const RATE_LIMIT_RETRY_SECONDS = 10;

export type WaitKind = 'paid' | 'timeout' | 'exhausted' | 'frozen' | 'aborted';
export type WaitResult =
  | { kind: 'paid'; receipt: PaymentResponse; requiredCumulative: bigint; deposit: bigint }
  | { kind: Exclude<WaitKind, 'paid'> };

const END_KIND: Record<StreamEndReason, Exclude<WaitKind, 'paid'> | null> = {
  TIMEOUT: 'timeout',
  CHANNEL_EXHAUSTED: 'exhausted',
  ACCOUNT_FROZEN: 'frozen',
  ABORTED: 'aborted',
  done: null,
};

export interface OpenInput {
  channelId: bigint;
  payTo: string;
  resource: string;
  unit: 'token' | 'second';
  sliceCost: bigint;
  initialCharge: bigint;
  receiptId: string;
  /** The scheme the first slice was paid with (default `channel`). */
  scheme?: StreamScheme;
}

/** Runs after a session opened, and after one ended (by this instance), with its reason. */
export type SessionHook = (event: { kind: 'opened' } | { kind: 'ended'; reason: StreamEndReason }) => void;

export interface StreamDeps {
  store: Store;
  events: EventLog;
  bus: Bus;
  book: ChannelBook;
  verifier: Verifier;
  /** `batch-settlement` charges (batch-payments.ts): a batch session's slices. */
  batch: { settle(input: BatchInput): Promise<BatchSettled> };
  /** This facilitator's key: the receiver authorizer a batch-settlement session's channel is bound to. */
  receiverAuthorizer: string;
  clock: Clock;
  network: string;
  asset: string;
  channelContract: string;
  /** Caps on open sessions: per channel and in total (spec), per payer and per payee (fairness). */
  limits: StreamLimits;
  idleMs: number;
  isFrozen(account: string): Promise<boolean>;
  log: { warn(obj: object, msg: string): void };
}

export class StreamSessions {
  /** Sessions with a wait in progress: never idle. */
  private readonly waiting = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;
  readonly #sessions: SessionHook[] = [];

  constructor(private readonly deps: StreamDeps) {}

  onSession(hook: SessionHook): void {
    this.#sessions.push(hook);
  }

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
    const now = this.iso();
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
      this.event('stream.started', stream, now, {
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
    this.notify({ kind: 'opened' });
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

  /** Long poll for the next slice's voucher (spec state table); timeout, exhausted, frozen and aborted end the session. */
  async wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<WaitResult> {
    const topic = topicOf(id);
    let woken = false;
    let wake: (() => void) | null = null;
    // Listen before looking, so a voucher landing in between is not missed.
    const off = this.deps.bus.onSignal(topic, () => {
      woken = true;
      wake?.();
    });
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort);
    this.waiting.set(id, (this.waiting.get(id) ?? 0) + 1);
    const deadline = this.deps.clock.now() + timeoutMs;
    try {
      await this.touch(id);
      for (;;) {
        woken = false;
        const decided = await this.decide(id, deadline);
        if (decided) return decided;
        if (signal?.aborted) return { kind: 'aborted' };
        if (!woken) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(0, deadline - this.deps.clock.now()));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = null;
        }
      }
    } finally {
      off();
      signal?.removeEventListener('abort', onAbort);
      const n = (this.waiting.get(id) ?? 1) - 1;
      if (n > 0) this.waiting.set(id, n);
      else this.waiting.delete(id);
      await this.touch(id).catch(() => undefined);
    }
  }

  /** POST /channels/:id/voucher: a voucher for a session's next slice (or a bare one). */
  async voucher(
    channelId: bigint,
    v: { streamId?: string; cumulative: bigint; signature: string },
    facilitatorUrl: string,
  ): Promise<{ receipt: PaymentResponse; streamId: string | null; requiredCumulative: bigint | null }> {
    const stream = v.streamId === undefined ? null : await this.deps.store.getStream(v.streamId);
    if (v.streamId !== undefined && (!stream || stream.channelId !== channelId))
      throw new SvcError('STREAM_NOT_FOUND', `No stream session ${v.streamId} on channel ${channelId}.`);
    if (stream && stream.status !== 'open') throw endedConflict(stream);
    // Decided again, atomically, by the credit below; asked here first so a voucher sent too early
    // is refused before any signature is checked.
    if (stream?.pendingReceiptId) throw pendingConflict(stream);
    if (stream?.scheme === BATCH_SCHEME) return this.batchVoucher(stream, v, facilitatorUrl);
    let delta: bigint | null = null;
    const channel = await this.deps.book.get(channelId);
    const payTo = stream?.payTo ?? channel?.record.payee ?? '';
    const outcome = await this.deps.verifier.verify({
      payment: {
        x402Version: 2,
        network: this.deps.network,
        channelId,
        cumulative: v.cumulative,
        signature: v.signature,
      },
      requirements: this.requirements(payTo, stream, facilitatorUrl),
      resource: stream?.resource ?? '',
      method: stream ? 'STREAM' : 'VOUCHER',
      requestHash: null,
      idempotencyKey: null,
      ...(stream
        ? {
            extraOps: (accepted): WriteOp[] => {
              delta = accepted.delta;
              return [
                {
                  op: 'stream.credit',
                  streamId: stream.id,
                  cumulative: v.cumulative,
                  delta: accepted.delta,
                  receiptId: accepted.receipt.id,
                  required: v.cumulative + stream.sliceCost,
                  at: accepted.receipt.ts,
                },
              ];
            },
          }
        : {}),
    });
    // The credit was refused, and the channel's advance with it: say why, from the session as it is now.
    if (stream && !outcome.ok && outcome.code === 'CONFLICT') throw await this.creditRefused(stream, delta);
    if (!outcome.ok)
      throw new SvcError(
        outcome.code,
        outcome.message,
        outcome.retryAfter === undefined ? {} : { retryAfter: outcome.retryAfter },
      );
    if (stream) this.deps.bus.signal(topicOf(stream.id));
    return {
      receipt: outcome.response,
      streamId: stream?.id ?? null,
      requiredCumulative: stream ? v.cumulative + stream.sliceCost : null,
    };
  }

  /**
   * A `batch-settlement` session's slice: the voucher is a ceiling, exactly what was charged on the
   * channel plus the slice, charged by the batch machinery with the slice's credit in its write.
   */
  private async batchVoucher(
    stream: StreamRecord,
    v: { cumulative: bigint; signature: string },
    facilitatorUrl: string,
  ): Promise<{ receipt: PaymentResponse; streamId: string; requiredCumulative: bigint }> {
    const terms = this.requirements(stream.payTo, stream, facilitatorUrl);
    const requirements = batchTermsOf(terms, this.deps.receiverAuthorizer);
    const payment: BatchPayment = {
      scheme: BATCH_SCHEME,
      kind: 'voucher',
      x402Version: 2,
      network: this.deps.network,
      channelId: stream.channelId,
      cumulative: v.cumulative,
      signature: v.signature,
      accepted: { scheme: BATCH_SCHEME, network: this.deps.network, amount: requirements.amount },
    };
    let required: bigint | null = null;
    const outcome = await this.deps.batch.settle({
      payment,
      requirements,
      terms,
      amount: stream.sliceCost,
      resource: stream.resource,
      method: 'STREAM',
      requestHash: null,
      idempotencyKey: null,
      extraOps: ({ receipt }): WriteOp[] => {
        required = BigInt(receipt.cumulative) + stream.sliceCost;
        return [
          {
            op: 'stream.credit',
            streamId: stream.id,
            cumulative: BigInt(receipt.cumulative),
            delta: BigInt(receipt.amount),
            receiptId: receipt.id,
            required,
            at: receipt.ts,
          },
        ];
      },
    });
    if (!outcome.ok && outcome.conflict) throw await this.creditRefused(stream, null);
    if (!outcome.ok) {
      if (outcome.code === 'RATE_LIMITED')
        throw new SvcError('RATE_LIMITED', outcome.message, { retryAfter: outcome.retryAfter ?? 60 });
      // A stream slice carries no payment id: its refusals are the scheme's own.
      const code =
        outcome.code === 'invalid_payment_identifier' || outcome.code === 'invalid_payment_identifier_conflict'
          ? 'CONFLICT'
          : svcCodeOfBatch(outcome.code);
      throw new SvcError(code, `${outcome.message} (${outcome.code})`);
    }
    if (!outcome.response || required === null)
      throw new SvcError(
        'CONFLICT',
        'The slice was not charged: sign the requiredCumulative of the latest payment-required.',
      );
    this.deps.bus.signal(topicOf(stream.id));
    return { receipt: outcome.response, streamId: stream.id, requiredCumulative: required };
  }

  /**
   * Why a session refused a slice's credit (one voucher pays one slice, which one wait delivers):
   * it ended, the voucher added more than a slice, or a paid slice still awaits its wait.
   */
  private async creditRefused(stream: StreamRecord, delta: bigint | null): Promise<SvcError> {
    const now = (await this.deps.store.getStream(stream.id)) ?? stream;
    if (now.status !== 'open') return endedConflict(now);
    if (delta !== null && delta > now.sliceCost)
      return new SvcError(
        'CONFLICT',
        `The voucher adds ${formatUnits(delta)}, more than one slice (${formatUnits(now.sliceCost)}): a stream voucher pays one slice at a time. Nothing was charged; sign the requiredCumulative of the latest payment-required (${formatUnits(now.required)}).`,
      );
    return pendingConflict(now);
  }

  /** DELETE /streams/:id: the seller ends the session (again: the recorded outcome). */
  async end(id: string, reason: StreamEndReason, units: number | null): Promise<StreamRecord> {
    const stream = await this.deps.store.getStream(id);
    if (!stream) throw new SvcError('STREAM_NOT_FOUND', `No stream session ${id}.`);
    if (stream.status === 'open') await this.finish(stream, reason, units);
    else if (units !== null && stream.units === null)
      await this.deps.store.write([{ op: 'stream.units', streamId: id, units }]);
    this.deps.bus.signal(topicOf(id));
    return (await this.deps.store.getStream(id)) ?? stream;
  }

  /** Ends sessions idle for longer than the idle timeout (no wait, no voucher). */
  async sweep(): Promise<number> {
    const before = new Date(this.deps.clock.now() - this.deps.idleMs).toISOString();
    const idle = await this.deps.store.listStreams({ status: 'open', idleBefore: before });
    let ended = 0;
    for (const s of idle) {
      if (this.waiting.has(s.id)) continue;
      if (await this.finish(s, 'ABORTED', null)) ended++;
      this.deps.bus.signal(topicOf(s.id));
    }
    return ended;
  }

  /** After a restart no seller loop is attached to an open session: end them, cleanly. */
  async abortOrphans(): Promise<number> {
    let ended = 0;
    for (const s of await this.deps.store.listStreams({ status: 'open' }))
      if (await this.finish(s, 'ABORTED', null)) ended++;
    return ended;
  }

  start(sweepMs: number): void {
    this.sweeper ??= setInterval(() => {
      this.sweep().catch((err: unknown) => this.deps.log.warn({ err }, 'stream idle sweep failed'));
    }, sweepMs);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private async decide(id: string, deadline: number): Promise<WaitResult | null> {
    const s = await this.deps.store.getStream(id);
    if (!s) throw new SvcError('STREAM_NOT_FOUND', `No stream session ${id}.`);
    if (s.status === 'ended') {
      const kind = s.reason ? END_KIND[s.reason] : null;
      if (kind) return { kind };
      throw new SvcError('CONFLICT', `Stream session ${id} has ended.`);
    }
    const channel = await this.deps.book.get(s.channelId);
    if (s.pendingReceiptId) {
      const taken = await this.deps.store.write([
        { op: 'stream.consume', streamId: id, receiptId: s.pendingReceiptId, at: this.iso() },
      ]);
      const receipt = taken.ok ? await this.deps.store.getReceipt(s.pendingReceiptId) : null;
      if (receipt)
        return {
          kind: 'paid',
          receipt: paymentResponseOf(receipt, channel?.record.deposit ?? 0n, s.scheme),
          requiredCumulative: s.required,
          deposit: channel?.record.deposit ?? 0n,
        };
      return null; // another wait took it: look again
    }
    if (channel && (await this.deps.isFrozen(channel.record.payer))) return this.endWith(s, 'ACCOUNT_FROZEN');
    // Decided before waiting: no voucher can pay a slice the deposit cannot cover.
    if (!channel || channel.record.status !== 'open' || s.required > channel.record.deposit)
      return this.endWith(s, 'CHANNEL_EXHAUSTED');
    if (this.deps.clock.now() >= deadline) return this.endWith(s, 'TIMEOUT');
    return null;
  }

  private async endWith(
    s: StreamRecord,
    reason: 'ACCOUNT_FROZEN' | 'CHANNEL_EXHAUSTED' | 'TIMEOUT',
  ): Promise<WaitResult | null> {
    // If the session changed meanwhile (a voucher, an end), look again rather than end it blindly.
    return (await this.finish(s, reason, null)) ? { kind: END_KIND[reason]! } : null;
  }

  /** Ends an open session with its stream.ended event, once; false when it was no longer open. */
  private async finish(s: StreamRecord, reason: StreamEndReason, units: number | null): Promise<boolean> {
    const at = this.iso();
    const result = await this.deps.events.commit([
      { op: 'stream.end', streamId: s.id, reason, units, at },
      this.event('stream.ended', s, at, {
        streamId: s.id,
        channelId: s.channelId.toString(),
        unit: s.unit,
        resource: s.resource,
        reason,
        units,
        charged: formatUnits(s.charged),
        vouchers: s.vouchers,
        ...schemeOf(s),
      }),
    ]);
    if (result.ok) this.notify({ kind: 'ended', reason });
    return result.ok;
  }

  /** A hook that throws is logged: the session's change stands. */
  private notify(event: Parameters<SessionHook>[0]): void {
    for (const hook of this.#sessions) {
      try {
        hook(event);
      } catch (err) {
        this.deps.log.warn({ err }, 'a stream session hook failed');
      }
    }
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

  private requirements(payTo: string, stream: StreamRecord | null, facilitatorUrl: string): PaymentRequirements {
    const slice = stream ? formatUnits(stream.sliceCost) : '1';
    return {
      scheme: 'channel',
      network: this.deps.network,
      asset: this.deps.asset,
      payTo,
      amount: slice,
      unit: stream?.unit ?? 'request',
      maxTimeoutSeconds: 60,
      extra: {
        channelContract: this.deps.channelContract,
        minDeposit: '0',
        facilitator: facilitatorUrl,
        areFeesSponsored: true,
        ...(stream ? { sliceAmount: slice } : {}),
      },
    };
  }

  private async touch(id: string): Promise<void> {
    await this.deps.store.write([{ op: 'stream.touch', streamId: id, at: this.iso() }]);
  }

  private event(type: string, s: StreamRecord, ts: string, data: Record<string, unknown>): WriteOp {
    return {
      op: 'event',
      event: { type, source: 'facilitator', ts, channelId: s.channelId, accounts: [s.payTo], data },
    };
  }

  private iso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

function endedConflict(s: StreamRecord): SvcError {
  return new SvcError('CONFLICT', `Stream session ${s.id} has ended (${s.reason ?? 'ended'}).`);
}

function pendingConflict(s: StreamRecord): SvcError {
  return new SvcError(
    'CONFLICT',
    `Stream session ${s.id} has a slice already paid and waiting for the seller: nothing was charged. Send the next voucher after the next payment-required event.`,
  );
}

/** A batch-settlement session's events say so; a `channel` one's are as they always were. */
function schemeOf(s: StreamRecord): { scheme?: StreamScheme } {
  return s.scheme === BATCH_SCHEME ? { scheme: s.scheme } : {};
}

function topicOf(id: string): string {
  return `stream:${id}`;
}
