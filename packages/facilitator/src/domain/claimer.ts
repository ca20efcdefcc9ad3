// Claims a channel's accepted amount on the ledger with the last accepted voucher, as a transaction
// of the facilitator's key (the facilitator pays the fees), and records the result. Claims are
// serialised here, and each adapter takes its own sequence numbers.
//
// Many channels are claimed in one transaction (claimBatch): one `claim_many` of at most
// MAX_CLAIMS_PER_TX rows (packages/ledger/src/claim-batch.ts), one row per channel, whatever its
// payee or scheme. The contract takes all rows or none (packages/ledger/docs/channel-contract.md),
// so a row it refuses would sink the others: the refused row is found and the rest sent again
// without it. The local ledger names the row (`claims[i]: …` in the message); Soroban names only
// the code, so there the batch is halved until the refused row stands alone — at most about
// 2·log2(rows) further transactions per refused row, and on Stellar a refusal in simulation is
// submitted to no one and costs nothing.
import { LEDGER_CODES, SvcError, formatUnits, parseUnits } from '@svc/core';
import type { Keypair, LedgerCode } from '@svc/core';
import { LedgerUnavailable, MAX_CLAIMS_PER_TX } from '@svc/ledger';
import type { ClaimRow, Ledger, TxResult } from '@svc/ledger';
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

/** One channel's claim: its outcome, or the error it met (the ledger or the store unavailable). */
export type ClaimResult = { outcome: ClaimOutcome } | { error: unknown };

/** Runs after every channel's claim, once per channel also when many share a transaction. */
export type ClaimHook = (event: ClaimResult) => void;

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

  /**
   * Claims everything accepted on each channel, MAX_CLAIMS_PER_TX channels a transaction, in the
   * order given (the caller's priority). Never throws: each channel's result is in the map, a
   * channel the ledger refused or could not be reached for among them. A claim made here is
   * recorded once per channel, as claim() records it.
   */
  async claimBatch(channelIds: readonly bigint[]): Promise<Map<bigint, ClaimResult>> {
    const ids = [...new Set(channelIds)];
    const results = new Map<bigint, ClaimResult>();
    // One queue turn per transaction: a manual claim waits for one batch, not for the whole pass.
    for (let i = 0; i < ids.length; i += MAX_CLAIMS_PER_TX) {
      const chunk = ids.slice(i, i + MAX_CLAIMS_PER_TX);
      const run = this.queue.then(() => this.claimBatchNow(chunk));
      this.queue = run.catch(() => undefined);
      let done: Map<bigint, ClaimResult>;
      try {
        done = await run;
      } catch (error) {
        done = new Map(chunk.map((id) => [id, { error }]));
      }
      for (const [id, result] of done) {
        results.set(id, result);
        this.notify(result);
      }
    }
    return results;
  }

  /** A hook that throws changes nothing of the claim, which its caller already has. */
  private notify(event: ClaimResult): void {
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
    if (!record || !hasClaim(record))
      return { status: 'nothing', channelId, unclaimed: record ? record.charged - record.claimed : 0n };
    const results = new Map<bigint, ClaimResult>();
    await this.settle([record], results);
    const result = results.get(channelId);
    if (!result) throw new Error(`the claim of channel ${channelId} left no result`);
    if ('error' in result) throw result.error;
    return result.outcome;
  }

  private async claimBatchNow(ids: readonly bigint[]): Promise<Map<bigint, ClaimResult>> {
    const results = new Map<bigint, ClaimResult>();
    const records: ChannelRecord[] = [];
    for (const channelId of ids) {
      try {
        const record = await this.deps.store.getChannel(channelId);
        if (record && hasClaim(record)) records.push(record);
        else
          results.set(channelId, {
            outcome: { status: 'nothing', channelId, unclaimed: record ? record.charged - record.claimed : 0n },
          });
      } catch (error) {
        results.set(channelId, { error });
      }
    }
    if (records.length > 0) await this.settle(records, results);
    // In the order asked, whatever order the rows settled in.
    return new Map(ids.flatMap((id) => (results.has(id) ? [[id, results.get(id)!] as const] : [])));
  }

  /**
   * Claims the channels in one transaction and records each channel's result. A refused batch
   * changed nothing on the ledger: the refused row is set aside with its code (the local ledger
   * names it; otherwise halves are sent until it stands alone) and the others are sent again.
   */
  private async settle(records: readonly ChannelRecord[], results: Map<bigint, ClaimResult>): Promise<void> {
    const failed = await this.submitAndRecord(records, results);
    if (!failed) return;
    if (records.length === 1) {
      await this.rejected(records[0]!, failed, results);
      return;
    }
    const bad = refusedRow(failed, records.length);
    if (bad === null) {
      const half = Math.ceil(records.length / 2);
      await this.settle(records.slice(0, half), results);
      await this.settle(records.slice(half), results);
      return;
    }
    await this.rejected(records[bad]!, failed, results);
    await this.settle(
      records.filter((_, i) => i !== bad),
      results,
    );
  }

  /** Submits one transaction for the records; records what it paid; answers its FAILED result, if so. */
  private async submitAndRecord(
    records: readonly ChannelRecord[],
    results: Map<bigint, ClaimResult>,
  ): Promise<TxResult | null> {
    const keys = records.map((r) => claimKey(r.id, r.charged));
    for (const key of keys) this.inProgress.add(key);
    try {
      let result: TxResult;
      try {
        result = await this.submit(records);
      } catch (err) {
        // Not even submitted: report it (a chain.rejected event) once per outage, however often
        // the claim is tried meanwhile (the scheduler's retries, manual claims); the caller retries.
        for (const record of records) {
          results.set(record.id, { error: err });
          if (!(err instanceof LedgerUnavailable) || this.unreachable.has(record.id)) continue;
          this.unreachable.add(record.id);
          try {
            await this.report(record, { code: 0, codeName: 'LEDGER_UNAVAILABLE', tx: '' });
          } catch {
            // the claim's own error is what the caller hears
          }
        }
        return null;
      }
      this.unreachable.clear(); // the ledger answered: a later outage is a new one
      if (result.status !== 'SUCCESS') return result;
      for (const [row, record] of records.entries()) {
        try {
          results.set(record.id, { outcome: await this.recordSuccess(record, result, row) });
        } catch (err) {
          if (!isStoreUnavailable(err)) {
            results.set(record.id, { error: err });
            continue;
          }
          // Paid on the ledger, not yet in the books: the ledger watcher records it from the ledger's
          // event (it waits while this claim is in progress, then finds it unrecorded), so it is
          // recorded once whatever happens to this process. The caller must not claim again.
          results.set(record.id, {
            error: new SvcError(
              'FACILITATOR_UNAVAILABLE',
              `The ledger paid the claim (tx ${result.hash}), but the store could not record it now; it is recorded from the ledger's events once the store answers again. Do not send the claim again.`,
              { retryAfter: RECORD_RETRY_AFTER_S, tx: result.hash, source: 'facilitator' },
            ),
          });
        }
      }
      return null;
    } finally {
      for (const key of keys) this.inProgress.delete(key);
    }
  }

  private async rejected(record: ChannelRecord, failed: TxResult, results: Map<bigint, ClaimResult>): Promise<void> {
    try {
      results.set(record.id, { outcome: await this.recordFailure(record, failed) });
    } catch (error) {
      results.set(record.id, { error });
    }
  }

  /**
   * What the seller may claim is what was charged: one channel with a voucher of exactly that
   * amount is the contract's `claim`; anything else is a `claim_many`, one row per channel, whose
   * rows below their voucher (a batch-settlement charge below its price) this facilitator's key
   * authorises as the channel's receiver authorizer.
   */
  private submit(records: readonly ChannelRecord[]): Promise<TxResult> {
    const only = records.length === 1 ? records[0]! : null;
    if (only && only.charged === only.lastAccepted)
      return this.deps.ledger.claim(
        { channelId: only.id, cumulative: only.charged, signature: only.lastSignature! },
        this.deps.keys,
      );
    const rows: ClaimRow[] = records.map((r) => ({
      channelId: r.id,
      maxClaimable: r.lastAccepted,
      signature: r.lastSignature!,
      total: r.charged,
    }));
    return this.deps.ledger.claimMany(rows, this.deps.keys);
  }

  /** Whether this process is making (and will report) this claim right now. */
  isClaiming(channelId: bigint, cumulative: bigint): boolean {
    return this.inProgress.has(claimKey(channelId, cumulative));
  }

  /** Records the channel's claim, paid by `result`'s row `row`. */
  private async recordSuccess(record: ChannelRecord, result: TxResult, row: number): Promise<ClaimOutcome> {
    // `claim` answers { amount }, `claim_many` { amounts: [one per row] }.
    const amounts = result.result?.['amounts'];
    const reported = Array.isArray(amounts) ? (amounts[row] as unknown) : result.result?.['amount'];
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
      claimOnce(result.hash, record.id, record.charged, ts),
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

/**
 * The write that makes a claim's channel.claimed event happen once, across instances: one per
 * channel and total in the transaction, as one `claim_many` pays many channels (and may pay one
 * channel twice, each row to a higher total).
 */
export function claimOnce(tx: string, channelId: bigint, cumulative: bigint, at: string): WriteOp {
  return {
    op: 'idempotency',
    key: claimKeyOf(tx, channelId, cumulative),
    fingerprint: 'channel.claimed',
    response: '',
    at,
  };
}

export function claimKeyOf(tx: string, channelId: bigint, cumulative: bigint): string {
  return `claim:${tx}:${channelId}:${cumulative}`;
}

/** The key a claim was recorded under when every claim transaction paid one channel (older stores). */
export function claimKeyOfOneChannelTx(tx: string): string {
  return `claim:${tx}`;
}

function hasClaim(record: ChannelRecord): boolean {
  return record.lastSignature !== null && record.charged > record.claimed;
}

/** The row a refused `claim_many` names (`claims[i]: …`, the local ledger's message), if any. */
function refusedRow(result: TxResult, rows: number): number | null {
  const named = /^claims\[(\d+)\]: /.exec(result.message ?? '');
  if (!named) return null;
  const row = Number(named[1]);
  return row < rows ? row : null;
}
