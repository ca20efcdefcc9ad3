// Group commit (docs/architecture.md#the-hot-path): write() calls that arrive in the same turn of
// the event loop share one database transaction, so one fsync acknowledges many vouchers. The
// adapter applies each call inside its own savepoint and reports one outcome per call; when the
// transaction as a whole fails, every call of the batch is rejected (nothing acknowledged).
// At most `maxInFlight` batches are in flight (1 by default): calls that arrive meanwhile form the
// next batch, so batches grow with load and latency stays one commit when idle. A committer that
// applies batches strictly in order on another thread (the SQLite writer thread) takes 2, so it
// always has the next batch queued instead of idling while this thread collects it.
import type { WriteOp, WriteResult } from './port.js';
import { checkOps } from './op-checks.js';

export const DEFAULT_MAX_BATCH = 256;

/** One call's fate inside a committed batch: its result, or the error that rejects it alone. */
export type CallOutcome = { result: WriteResult } | { error: unknown };

/**
 * Applies a batch in one transaction and returns one outcome per call, in order, only after
 * COMMIT has returned. Throws or rejects when the transaction itself fails.
 */
export type CommitBatch = (calls: readonly (readonly WriteOp[])[]) => CallOutcome[] | Promise<CallOutcome[]>;

interface PendingCall {
  ops: readonly WriteOp[];
  resolve(result: WriteResult): void;
  reject(error: unknown): void;
}

export class GroupCommit {
  readonly #commit: CommitBatch;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  readonly #shedOn: (error: unknown) => boolean;
  #pending: PendingCall[] = [];
  #scheduled = false;
  #inFlight = 0;
  #closed = false;
  #idleWaiters: (() => void)[] = [];

  /**
   * `shedOn`: errors after which the calls queued meanwhile fail too, with the same error (a store
   * that is unavailable: they would each wait for it again in turn).
   */
  constructor(
    commit: CommitBatch,
    maxBatch = DEFAULT_MAX_BATCH,
    maxInFlight = 1,
    shedOn: (error: unknown) => boolean = () => false,
  ) {
    if (!Number.isSafeInteger(maxBatch) || maxBatch < 1) throw new RangeError('maxBatch must be a positive integer');
    if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1)
      throw new RangeError('maxInFlight must be a positive integer');
    this.#commit = commit;
    this.#maxBatch = maxBatch;
    this.#maxInFlight = maxInFlight;
    this.#shedOn = shedOn;
  }

  submit(ops: readonly WriteOp[]): Promise<WriteResult> {
    if (this.#closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<WriteResult>((resolve, reject) => {
      // Malformed ops reject here, alone, before they can cost other calls their transaction.
      checkOps(ops);
      this.#pending.push({ ops, resolve, reject });
      if (this.#pending.length >= this.#maxBatch) this.#run();
      else this.#schedule();
    });
  }

  /** Refuses new calls and resolves once every submitted call has settled. */
  close(): Promise<void> {
    this.#closed = true;
    if (this.#idle()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#schedule();
    });
  }

  #idle(): boolean {
    return this.#inFlight === 0 && this.#pending.length === 0;
  }

  // setImmediate, not a microtask: it also gathers the calls of other requests read from the
  // sockets in the same poll phase, which is where concurrent vouchers come from.
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#run();
    });
  }

  #run(): void {
    if (this.#inFlight >= this.#maxInFlight || this.#pending.length === 0) return this.#notifyIdle();
    const batch = this.#pending.splice(0, this.#maxBatch);
    this.#inFlight++;
    let outcome: CallOutcome[] | Promise<CallOutcome[]>;
    try {
      outcome = this.#commit(batch.map((call) => call.ops));
    } catch (error) {
      return this.#fail(batch, error);
    }
    if (Array.isArray(outcome)) return this.#finish(batch, outcome);
    void outcome.then(
      (outcomes) => this.#finish(batch, outcomes),
      (error: unknown) => this.#fail(batch, error),
    );
  }

  #finish(batch: PendingCall[], outcomes: CallOutcome[]): void {
    if (outcomes.length !== batch.length)
      return this.#fail(batch, new Error('the adapter returned a wrong number of outcomes'));
    this.#inFlight--;
    batch.forEach((call, i) => settle(call, outcomes[i]!));
    const unavailable = outcomes.find((o) => 'error' in o && this.#shedOn(o.error));
    if (unavailable && 'error' in unavailable) this.#shed(unavailable.error);
    this.#run();
  }

  /** The transaction failed: nothing of the batch was acknowledged, every call rejects. */
  #fail(batch: PendingCall[], error: unknown): void {
    this.#inFlight--;
    for (const call of batch) call.reject(error);
    if (this.#shedOn(error)) this.#shed(error);
    this.#run();
  }

  /** Fails every queued call with `error`. */
  #shed(error: unknown): void {
    const queued = this.#pending;
    this.#pending = [];
    for (const call of queued) call.reject(error);
  }

  #notifyIdle(): void {
    if (!this.#idle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function settle(call: PendingCall, outcome: CallOutcome): void {
  if ('result' in outcome) call.resolve(outcome.result);
  else call.reject(outcome.error);
}
