// Streaming sessions (spec "States and transitions"; docs/protocol.md#streams). A seller whose first slice
// was paid opens a session bound to that slice's receipt; each time a slice is used up it waits
// (long poll) for the buyer's next voucher, which the buyer posts straight to the facilitator.
// Sessions live in the Store, so they survive nothing by accident: a restart ends the open ones
// (ABORTED, with what they were charged), and `stream.ended` is written once, with the end itself.
//
// This module serves the seller's wait for the next paid slice and holds the parts together:
//   opening a session, within its caps       stream-opening.ts
//   paying its slices (channel or batch)     stream-slices.ts
//   ending it: seller, idle, after restart   stream-endings.ts
import { SvcError } from '@svc/core';
import type { PaymentResponse, StreamEndReason } from '@svc/core';
import type { Bus } from '../bus/port.js';
import type { StreamLimits, StreamRecord, Store } from '../store/port.js';
import type { BatchInput, BatchSettled } from './batch-types.js';
import type { ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import { paymentResponseOf } from './payment-response.js';
import { StreamEndings } from './stream-endings.js';
import { StreamOpening } from './stream-opening.js';
import type { OpenInput } from './stream-opening.js';
import { topicOf } from './stream-records.js';
import { StreamSlices } from './stream-slices.js';
import type { Verifier } from './verifier.js';

export { RECEIPT_FRESH_MS } from './stream-opening.js';
export type { OpenInput } from './stream-opening.js';

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
  private readonly opening: StreamOpening;
  private readonly slices: StreamSlices;
  private readonly endings: StreamEndings;

  constructor(private readonly deps: StreamDeps) {
    this.opening = new StreamOpening({ ...deps, opened: () => this.notify({ kind: 'opened' }) });
    this.slices = new StreamSlices(deps);
    this.endings = new StreamEndings({
      ...deps,
      waiting: (id) => this.waiting.has(id),
      ended: (reason) => this.notify({ kind: 'ended', reason }),
    });
  }

  onSession(hook: SessionHook): void {
    this.#sessions.push(hook);
  }

  open(input: OpenInput): Promise<{ stream: StreamRecord; deposit: bigint }> {
    return this.opening.open(input);
  }

  /** See StreamOpening.checkCapacity: a stream's first slice is not charged for a session that cannot open. */
  checkCapacity(channelId: bigint): Promise<void> {
    return this.opening.checkCapacity(channelId);
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

  /** POST /channels/:id/voucher: see StreamSlices.voucher. */
  voucher(
    channelId: bigint,
    v: { streamId?: string; cumulative: bigint; signature: string },
    facilitatorUrl: string,
  ): Promise<{ receipt: PaymentResponse; streamId: string | null; requiredCumulative: bigint | null }> {
    return this.slices.voucher(channelId, v, facilitatorUrl);
  }

  /** DELETE /streams/:id: the seller ends the session (again: the recorded outcome). */
  end(id: string, reason: StreamEndReason, units: number | null): Promise<StreamRecord> {
    return this.endings.end(id, reason, units);
  }

  /** Ends sessions idle for longer than the idle timeout (no wait, no voucher). */
  sweep(): Promise<number> {
    return this.endings.sweep();
  }

  /** After a restart no seller loop is attached to an open session: end them, cleanly. */
  abortOrphans(): Promise<number> {
    return this.endings.abortOrphans();
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
    return (await this.endings.finish(s, reason, null)) ? { kind: END_KIND[reason]! } : null;
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

  private async touch(id: string): Promise<void> {
    await this.deps.store.write([{ op: 'stream.touch', streamId: id, at: this.iso() }]);
  }

  private iso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
