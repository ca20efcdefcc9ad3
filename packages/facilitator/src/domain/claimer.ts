// Claims a channel's accepted amount on the ledger with the last accepted voucher, as a transaction
// of the facilitator's key (the facilitator pays the fees), and records the result. Claims are
// serialised here, and each adapter takes its own sequence numbers (docs/architecture.md#on-stellar).
import { LEDGER_CODES, SvcError, formatUnits, parseUnits } from '@svc/core';
import type { Keypair, LedgerCode } from '@svc/core';
import { LedgerUnavailable } from '@svc/ledger';
import type { Ledger, TxResult } from '@svc/ledger';
import { isStoreUnavailable } from '../store/faults.js';
import type { ChannelRecord, Store, WriteOp } from '../store/port.js';
import type { ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import { ledgerFactsOp } from './ledger-facts.js';

/** Ledger codes after which the channel's ledger state is simply re-read (someone else acted). */
const RESYNC_CODES = new Set([21, 23]);
/** Retry-After of a claim paid on the ledger whose recording waits for the store. */
const RECORD_RETRY_AFTER_S = 5;

export type ClaimOutcome =
  | {
      status: 'claimed';
      channelId: bigint;
      amount: bigint;
      cumulative: bigint;
      vouchersCovered: number;
      tx: string;
      ledger: number;
    }
  | { status: 'nothing'; channelId: bigint; unclaimed: bigint }
  | { status: 'rejected'; channelId: bigint; code: number; codeName: string; tx: string };

/** Runs after every claim: its outcome, or the error it threw (the ledger or the store unavailable). */
export type ClaimHook = (event: { outcome: ClaimOutcome } | { error: unknown }) => void;

export interface ClaimerDeps {
  ledger: Ledger;
  store: Store;
  book: ChannelBook;
  events: EventLog;
  keys: Keypair;
  clock: Clock;
}

function claimKey(channelId: bigint, cumulative: bigint): string {
  return `${channelId}:${cumulative}`;
}

export class Claimer {
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * Claims this process is making right now (channel:cumulative, known before submission): the
   * ledger watcher waits for them. Once made, the store alone says whether a claim is recorded —
   * not a memory of this process, which a store that lost its last commits would contradict.
   */
  private readonly inProgress = new Set<string>();
  /** Channels whose claim found the ledger unreachable, reported once until the ledger answers again. */
  private readonly unreachable = new Set<bigint>();
  readonly #claimed: ClaimHook[] = [];

  constructor(private readonly deps: ClaimerDeps) {}

  onClaim(hook: ClaimHook): void {
    this.#claimed.push(hook);
  }

  /** Claims everything accepted on the channel. Throws LedgerUnavailable when the ledger is down. */
  claim(channelId: bigint): Promise<ClaimOutcome> {
    const run = this.queue.then(() => this.claimNow(channelId));
    this.queue = run.catch(() => undefined);
    if (this.#claimed.length > 0)
      void run.then(
        (outcome) => this.notify({ outcome }),
        (error: unknown) => this.notify({ error }),
      );
    return run;
  }

  /** A hook that throws changes nothing of the claim, which its caller already has. */
  private notify(event: Parameters<ClaimHook>[0]): void {
    for (const hook of this.#claimed) {
      try {
        hook(event);
      } catch {
        // a hook's failure is not the claim's
      }
    }
  }

  private async claimNow(channelId: bigint): Promise<ClaimOutcome> {
    const record = await this.deps.store.getChannel(channelId);
    if (!record || record.lastSignature === null || record.charged <= record.claimed) {
      return { status: 'nothing', channelId, unclaimed: record ? record.charged - record.claimed : 0n };
    }
    const key = claimKey(record.id, record.charged);
    this.inProgress.add(key);
    try {
      let result: TxResult;
      try {
        result = await this.submit(record, record.lastSignature);
      } catch (err) {
        // Not even submitted: report it (docs/protocol.md#channels-and-records) once per outage, however often the claim
        // is tried meanwhile (the scheduler's retries, manual claims), then let the caller retry.
        if (err instanceof LedgerUnavailable && !this.unreachable.has(record.id)) {
          this.unreachable.add(record.id);
          await this.report(record, { code: 0, codeName: 'LEDGER_UNAVAILABLE', tx: '' });
        }
        throw err;
      }
      this.unreachable.clear(); // the ledger answered: a later outage is a new one
      if (result.status !== 'SUCCESS') return await this.recordFailure(record, result);
      try {
        return await this.recordSuccess(record, result);
      } catch (err) {
        if (!isStoreUnavailable(err)) throw err;
        // Paid on the ledger, not yet in the books: the ledger watcher records it from the ledger's
        // event (it waits while this claim is in progress, then finds it unrecorded), so it is
        // recorded once whatever happens to this process. The caller must not claim again.
        throw new SvcError(
          'FACILITATOR_UNAVAILABLE',
          `The ledger paid the claim (tx ${result.hash}), but the store could not record it now; it is recorded from the ledger's events once the store answers again. Do not send the claim again.`,
          { retryAfter: RECORD_RETRY_AFTER_S, tx: result.hash, source: 'facilitator' },
        );
      }
    } finally {
      this.inProgress.delete(key);
    }
  }

  /**
   * What the seller may claim is what was charged: with a voucher of exactly that amount, the
   * contract's `claim`; under a higher ceiling (a batch-settlement charge below its price), a
   * `claim_many` row that this facilitator's key authorises as the channel's receiver authorizer.
   */
  private submit(record: ChannelRecord, signature: string): Promise<TxResult> {
    if (record.charged === record.lastAccepted)
      return this.deps.ledger.claim({ channelId: record.id, cumulative: record.charged, signature }, this.deps.keys);
    const row = { channelId: record.id, maxClaimable: record.lastAccepted, signature, total: record.charged };
    return this.deps.ledger.claimMany([row], this.deps.keys);
  }

  /** Whether this process is making (and will report) this claim right now. */
  isClaiming(channelId: bigint, cumulative: bigint): boolean {
    return this.inProgress.has(claimKey(channelId, cumulative));
  }

  private async recordSuccess(record: ChannelRecord, result: TxResult): Promise<ClaimOutcome> {
    // `claim` answers { amount }, `claim_many` { amounts: [one per row] }.
    const amounts = result.result?.['amounts'];
    const reported = Array.isArray(amounts) ? (amounts[0] as unknown) : result.result?.['amount'];
    const amount = typeof reported === 'string' ? parseUnits(reported) : record.charged - record.claimed;
    const vouchersCovered = record.vouchers - record.vouchersClaimed;
    const ts = new Date(this.deps.clock.now()).toISOString();
    const claimed: WriteOp = {
      op: 'channel.claimed',
      channelId: record.id,
      cumulative: record.charged,
      vouchersClaimed: record.vouchers,
    };
    const written = await this.deps.events.commit([
      claimed,
      claimOnce(result.hash, ts),
      {
        op: 'event',
        event: {
          type: 'channel.claimed',
          source: 'facilitator',
          ts,
          channelId: record.id,
          accounts: [record.payee, record.payer],
          data: {
            channelId: record.id.toString(),
            payee: record.payee,
            payer: record.payer,
            amount: formatUnits(amount),
            cumulative: formatUnits(record.charged),
            vouchersCovered,
            tx: result.hash,
          },
        },
      },
    ]);
    // Another instance's ledger watcher saw the transaction first and reported it: keep the counts.
    if (!written.ok && written.reason === 'duplicate') await this.deps.events.commit([claimed]);
    this.deps.book.invalidate(record.id);
    return {
      status: 'claimed',
      channelId: record.id,
      amount,
      cumulative: record.charged,
      vouchersCovered,
      tx: result.hash,
      ledger: result.ledger,
    };
  }

  private async recordFailure(record: ChannelRecord, result: TxResult): Promise<ClaimOutcome> {
    const code = result.code ?? 0;
    const codeName = LEDGER_CODES[code as LedgerCode] ?? 'UNKNOWN';
    if (RESYNC_CODES.has(code)) await this.resync(record.id);
    await this.report(record, { code, codeName, tx: result.hash });
    return { status: 'rejected', channelId: record.id, code, codeName, tx: result.hash };
  }

  /** A claim that did not settle, as a `chain.rejected` event (code 0: the ledger was unreachable). */
  private async report(record: ChannelRecord, failure: { code: number; codeName: string; tx: string }): Promise<void> {
    await this.deps.events.commit([
      {
        op: 'event',
        event: {
          type: 'chain.rejected',
          source: 'ledger',
          ts: new Date(this.deps.clock.now()).toISOString(),
          channelId: record.id,
          accounts: [this.deps.keys.address, record.payee],
          data: { account: this.deps.keys.address, ...failure, op: 'channel.claim', channelId: record.id.toString() },
        },
      },
    ]);
  }

  /** Applies the ledger's own view of a channel (claimed by someone else, or closed). */
  async resync(channelId: bigint): Promise<void> {
    const onLedger = await this.deps.ledger.getChannel(channelId);
    if (!onLedger) return;
    await this.deps.events.commit([ledgerFactsOp(onLedger, new Date(this.deps.clock.now()).toISOString())]);
    this.deps.book.invalidate(channelId);
  }
}

/** The write that makes a claim transaction's channel.claimed event happen once, across instances. */
export function claimOnce(tx: string, at: string): WriteOp {
  return { op: 'idempotency', key: claimKeyOf(tx), fingerprint: 'channel.claimed', response: '', at };
}

export function claimKeyOf(tx: string): string {
  return `claim:${tx}`;
}
