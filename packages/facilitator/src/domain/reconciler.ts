// Reconciling the store with the ledger at start. The ledger is the floor of what was
// paid: a store that is empty, or older than what the ledger shows — put back from a backup,
// replaced by an empty file, a PostgreSQL restored to an earlier point — would take again vouchers
// the ledger has already paid out, and the seller would serve answers it can never be paid for.
//
// Three things keep that from happening:
// - the store itself never holds a channel whose accepted amount is below its claimed one
//   (port.ts channel.ledger), so every claim the watcher replays lifts the channel;
// - a channel's lazy load reads the ledger before any voucher on it is judged (channel-book.ts);
// - this pass, run in the background from the start, compares every open channel in the store with
//   the ledger and brings it up to the ledger (and `/health` shows the pass while it runs).
// Where the ledger cannot be read, a stored record stands in for it only if the store is not known
// to be older than this data directory has seen (high-water.ts); an older one waits for the ledger.
// What was found and done is logged once, at warning level, when the pass completes.
//
//   const reconciler = new Reconciler({ store, ledger, book, mark, clock, log, retryMs: 1000 });
//   await reconciler.prepare(); // before serving
//   reconciler.start();         // the pass, retried until the ledger answers
import { formatUnits } from '@svc/core';
import { LedgerUnavailable } from '@svc/ledger';
import type { Ledger } from '@svc/ledger';
import type { ChannelFilter, ChannelRecord, Store } from '../store/port.js';
import type { ChannelBook, StoreTrust } from './channel-book.js';
import type { Clock } from './clock.js';
import type { HighWater } from './high-water.js';
import { ledgerFloorOp, ledgerIsAhead } from './ledger-facts.js';

export type ReconciliationState = 'running' | 'waiting-for-ledger' | 'done';

/** Open channels read from the store at a time, and ledger reads in flight at once. */
const PAGE = 100;
const IN_FLIGHT = 8;
/** A long pass says how far it got this often. */
const PROGRESS_EVERY_MS = 5_000;

export interface ReconcilerDeps {
  store: Store;
  ledger: Pick<Ledger, 'getChannel'>;
  book: Pick<ChannelBook, 'invalidate'>;
  mark: HighWater;
  clock: Clock;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** How long to wait before trying again while the ledger does not answer. */
  retryMs: number;
}

/** A channel the store had accepted less on than the ledger shows claimed. */
interface Raised {
  from: bigint;
  to: bigint;
}

export class Reconciler implements StoreTrust {
  private current: ReconciliationState = 'running';
  /** The store is older than this data directory has seen: it waits for the ledger. */
  private behind: { storeLastEvent: number; seenLastEvent: number } | null = null;
  private emptyAtStart = false;
  private readonly raised = new Map<bigint, Raised>();
  private readonly reportedLater = new Set<bigint>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly deps: ReconcilerDeps) {}

  get state(): ReconciliationState {
    return this.current;
  }

  /** Whether the store was found behind what this data directory had seen of it. */
  get storeWasBehind(): boolean {
    return this.behind !== null;
  }

  storeTrusted(): boolean {
    return this.current === 'done' || this.behind === null;
  }

  /** Before serving: whether the store is behind the data directory's mark (and owes a reconciliation). */
  async prepare(): Promise<void> {
    const { store, mark } = this.deps;
    const last = await store.lastEventId();
    this.emptyAtStart = last === 0 && (await store.countChannels()) === 0;
    const seen = mark.read();
    if (seen && (seen.pending || last < seen.lastEventId)) {
      this.behind = { storeLastEvent: last, seenLastEvent: seen.lastEventId };
      await mark.owe();
    }
  }

  /** Runs the pass in the background, again after `retryMs` while the ledger does not answer. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * The ledger watcher met a claim above what the store had accepted on the channel (the store
   * lifts the channel to it as it records the claim): part of what the start's report tells, or
   * told on its own, once per channel, after it.
   */
  claimAbove(channelId: bigint, accepted: bigint, claimed: bigint): void {
    if (this.current !== 'done') {
      this.note(channelId, accepted, claimed);
      return;
    }
    if (this.reportedLater.has(channelId)) return;
    this.reportedLater.add(channelId);
    this.deps.log.warn(
      { channelId: channelId.toString(), accepted: formatUnits(accepted), claimed: formatUnits(claimed) },
      `channel ${channelId}: the ledger shows ${claimed} claimed, above the ${accepted} this facilitator had accepted; no voucher at or below ${claimed} is accepted on it`,
    );
  }

  private schedule(ms: number): void {
    if (this.stopped || this.current === 'done') return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.attempt().finally(() => {
        this.running = null;
      });
    }, ms);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    try {
      await this.pass();
    } catch (err) {
      if (err instanceof LedgerUnavailable) this.current = 'waiting-for-ledger';
      else this.deps.log.warn({ err }, 'reconciling the store with the ledger failed; trying again');
      this.schedule(this.deps.retryMs);
      return;
    }
    this.current = 'done';
    if (this.behind) await this.deps.mark.reset();
    await this.report();
  }

  /** Every open channel of the store, compared with the ledger and brought up to it. */
  private async pass(): Promise<void> {
    const { store } = this.deps;
    const total = await store.countChannels({ status: 'open' });
    let checked = 0;
    let lastProgress = this.deps.clock.now();
    let after: ChannelFilter['after'];
    for (;;) {
      if (this.stopped) throw new LedgerUnavailable('stopped before the reconciliation ended');
      const page = await store.listChannels({ status: 'open', limit: PAGE, ...(after ? { after } : {}) });
      for (let i = 0; i < page.length; i += IN_FLIGHT)
        await Promise.all(page.slice(i, i + IN_FLIGHT).map((c) => this.check(c)));
      checked += page.length;
      if (this.deps.clock.now() - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = this.deps.clock.now();
        this.deps.log.info(
          { checked, total },
          `reconciling the store with the ledger: ${checked} of ${total} open channels checked`,
        );
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last) return;
      after = { createdAt: last.createdAt, id: last.id };
    }
  }

  private async check(stored: ChannelRecord): Promise<void> {
    const onLedger = await this.deps.ledger.getChannel(stored.id);
    if (!onLedger || !ledgerIsAhead(stored, onLedger)) return;
    if (onLedger.claimed > stored.charged) this.note(stored.id, stored.charged, onLedger.claimed);
    await this.deps.store.write([ledgerFloorOp(onLedger)]);
    this.deps.book.invalidate(stored.id);
  }

  private note(channelId: bigint, accepted: bigint, claimed: bigint): void {
    const known = this.raised.get(channelId);
    this.raised.set(channelId, {
      from: known ? (known.from < accepted ? known.from : accepted) : accepted,
      to: claimed,
    });
  }

  /** Once, at warning level: what was found and what was done (nothing, when the store was current). */
  private async report(): Promise<void> {
    const channels = this.emptyAtStart ? await this.deps.store.countChannels() : 0;
    if (this.behind === null && this.raised.size === 0 && channels === 0) return;
    const restored = [...this.raised.values()].reduce((sum, r) => sum + (r.to - r.from), 0n);
    const found: string[] = [];
    if (this.behind)
      found.push(
        `its last event is ${this.behind.storeLastEvent}, but this data directory had seen ${this.behind.seenLastEvent} (an older copy, or an empty store, put in place of the one it had)`,
      );
    else if (channels > 0)
      found.push(
        `it was empty, while the ledger knows ${channels} channel${channels === 1 ? '' : 's'} it rebuilt from the ledger`,
      );
    if (this.raised.size > 0)
      found.push(
        `${this.raised.size} channel${this.raised.size === 1 ? ' had' : 's had'} accepted ${formatUnits(restored)} base units less than the ledger shows claimed`,
      );
    this.deps.log.warn(
      {
        storeBehind: this.behind,
        storeWasEmpty: this.emptyAtStart,
        channelsRebuilt: channels,
        channelsRaised: this.raised.size,
        restored: formatUnits(restored),
      },
      `The store was behind the ledger: ${found.join('; ')}. Every open channel now stands at least at what the ledger shows claimed, and no voucher at or below that is accepted again. Vouchers accepted after the store's copy and never claimed are lost to their sellers.`,
    );
  }
}
