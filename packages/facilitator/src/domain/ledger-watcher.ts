// Follows the ledger's event log and applies what happened to channels: opens, top-ups, claims
// (also claims made by anyone else) and closes. The cursor is stored in the same write as the
// changes it covers, so after a restart the watcher resumes where it stopped — nothing that
// happened while the facilitator was down is skipped.
import { formatUnits, parseUnits } from '@svc/core';
import type { Ledger, LedgerEvent } from '@svc/ledger';
import type { ChannelRecord, NewEvent, Store, WriteOp } from '../store/port.js';
import type { AccountBook } from './account-book.js';
import type { ChannelBook } from './channel-book.js';
import { claimKeyOf, claimKeyOfOneChannelTx, claimOnce } from './claimer.js';
import type { Claimer } from './claimer.js';
import type { EventLog } from './event-log.js';
import type { LatestLedger } from './latest-ledger.js';
import { CURSOR_KEY, channelIdOf, str } from './openings.js';
import type { Openings } from './openings.js';
import { Passes } from './passes.js';

export { CURSOR_KEY };
const PAGE = 500;
/** apply()'s answer for an event that must wait for the next pass. */
const DEFER = Symbol('defer');

export interface WatcherOptions {
  pollMs: number;
  /**
   * A claim on the ledger above what the store had accepted on the channel (a store that lost the
   * vouchers behind it, or a payee claiming a voucher given to it directly): the store lifts the
   * channel to it as the claim is recorded (port.ts channel.ledger); this says that it happened.
   */
  onClaimAbove?(channelId: bigint, accepted: bigint, claimed: bigint): void;
}

export interface WatcherLog {
  warn(obj: object, msg: string): void;
}

export interface WatcherDeps extends WatcherOptions {
  ledger: Ledger;
  store: Store;
  events: EventLog;
  book: ChannelBook;
  claimer: Claimer;
  accounts: AccountBook;
  latestLedger: LatestLedger;
  openings: Openings;
  log: WatcherLog;
}

export class LedgerWatcher {
  private timer: NodeJS.Timeout | null = null;
  private readonly passes = new Passes(() => this.catchUp());
  private stopped = false;

  constructor(private readonly deps: WatcherDeps) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.passes.ended();
  }

  /**
   * Catches up completely, with a pass that starts after this call (a pass already running may
   * have read the ledger before the caller's change); concurrent callers share the next pass.
   */
  tick(): Promise<void> {
    return this.passes.run();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.tick()
        .catch((err: unknown) => this.deps.log.warn({ err }, 'ledger watcher failed; retrying'))
        .finally(() => this.schedule(this.deps.pollMs));
    }, ms);
    this.timer.unref();
  }

  private async catchUp(): Promise<void> {
    await this.deps.latestLedger.refresh();
    let cursor = await this.deps.store.getMeta(CURSOR_KEY);
    for (;;) {
      const page = await this.deps.ledger.events(cursor, PAGE);
      if (page.events.length === 0) {
        // An empty page can still move the cursor (Soroban scans ledgers): keep it, or a quiet
        // contract's cursor falls out of the RPC's event history.
        if (page.cursor !== null && page.cursor !== cursor)
          await this.deps.events.commit([{ op: 'meta.set', key: CURSOR_KEY, value: page.cursor }]);
        return;
      }
      const opened = new Map<bigint, ChannelRecord>();
      const ops: WriteOp[] = [];
      for (const ev of page.events) {
        const applied = await this.apply(ev, opened);
        // This process's claimer is recording one of these claims right now: the page waits for
        // the next pass, which finds it recorded, or records it if the claimer could not.
        if (applied === DEFER) return;
        ops.push(...applied);
      }
      cursor = page.cursor;
      if (cursor !== null) ops.push({ op: 'meta.set', key: CURSOR_KEY, value: cursor });
      // Refused only when another instance's claimer recorded one of these claims, or a channel
      // book one of these openings, in between: the cursor did not move, and the next pass finds
      // it recorded and skips it.
      const written = await this.deps.events.commit(ops);
      if (!written.ok) {
        this.deps.log.warn(
          { reason: written.reason, op: ops[written.op]?.op },
          'ledger watcher: a page was refused by the store; retrying it',
        );
        return;
      }
      for (const ev of page.events) {
        const id = channelIdOf(ev.data['channelId']);
        if (id !== null) this.deps.book.invalidate(id);
      }
      if (page.events.length < PAGE) return;
    }
  }

  private async apply(ev: LedgerEvent, opened: Map<bigint, ChannelRecord>): Promise<WriteOp[] | typeof DEFER> {
    const d = ev.data;
    if (ev.type === 'account.frozen') return this.frozen(ev);
    const channelId = channelIdOf(d['channelId']);
    if (!ev.type.startsWith('channel.') || channelId === null) return [];
    if (ev.type === 'channel.opened') return this.opened(ev, channelId, opened);
    // Payer and payee make the event visible in both accounts' ledgers. The store's record first:
    // a channel opened earlier in this page may already have been recorded, and paid on, before
    // the watcher got here (its opening event knows nothing of what was accepted since).
    const known = (await this.deps.store.getChannel(channelId)) ?? opened.get(channelId) ?? null;
    const parties = known ? [known.payer, known.payee] : [];
    switch (ev.type) {
      case 'channel.topped_up':
        return [
          { op: 'channel.ledger', channelId, deposit: units(d['deposit']), expiryLedger: Number(d['expiryLedger']) },
          this.event(ev, channelId, parties, {
            channelId: channelId.toString(),
            amount: str(d['amount']),
            deposit: str(d['deposit']),
            expiryLedger: Number(d['expiryLedger']),
            tx: ev.tx,
          }),
        ];
      case 'channel.claimed':
        return this.claimed(ev, channelId, known);
      case 'channel.refunded': {
        // A cooperative refund: the deposit goes down by what went back to the payer, in nonce order.
        const refundNonce = Number(str(d['refundNonce']));
        return [
          { op: 'channel.refunded', channelId, refundNonce, deposit: units(d['deposit']) },
          this.event(ev, channelId, parties, {
            channelId: channelId.toString(),
            amount: str(d['amount']),
            deposit: str(d['deposit']),
            refundNonce: String(refundNonce),
            tx: ev.tx,
          }),
        ];
      }
      case 'channel.closed': {
        // What the facilitator accepted and no claim covered can never be paid now: the seller's loss.
        const claimed = units(d['claimed']);
        const lost = known && known.charged > claimed ? known.charged - claimed : 0n;
        return [
          { op: 'channel.ledger', channelId, claimed, closed: { at: ev.ts, refunded: units(d['refunded']) } },
          this.event(ev, channelId, parties, {
            channelId: channelId.toString(),
            refunded: str(d['refunded']),
            lost: formatUnits(lost),
            tx: ev.tx,
          }),
        ];
      }
      default:
        return [];
    }
  }

  /** An owner froze or unfroze a smart account: vouchers and streams from it stop (or resume). */
  private frozen(ev: LedgerEvent): WriteOp[] {
    const account = str(ev.data['account']);
    const frozen = ev.data['frozen'] === true;
    this.deps.accounts.setFrozen(account, frozen);
    return [
      {
        op: 'event',
        event: {
          type: 'account.frozen',
          source: 'ledger',
          ts: ev.ts,
          accounts: [account],
          data: { account, frozen, tx: ev.tx },
        },
      },
    ];
  }

  /** An opening, unless the channel book recorded it ahead of this pass (openings.ts). */
  private async opened(ev: LedgerEvent, channelId: bigint, opened: Map<bigint, ChannelRecord>): Promise<WriteOp[]> {
    const { channel, ops } = this.deps.openings.ops(ev, channelId);
    opened.set(channelId, channel);
    return (await this.deps.openings.recorded(channelId)) ? [] : ops;
  }

  /**
   * Every claim the ledger paid is recorded once, whoever sent it — another instance,
   * the payee itself, or this facilitator, including a claim whose own recording failed or whose
   * process died before it could record it: the cursor moves past a claim only in the transaction
   * that records it, or once it is found recorded (claimOnce, which the claimers write too).
   */
  private async claimed(
    ev: LedgerEvent,
    channelId: bigint,
    known: ChannelRecord | null,
  ): Promise<WriteOp[] | typeof DEFER> {
    const d = ev.data;
    const cumulative = units(d['cumulative']);
    if (this.deps.claimer.isClaiming(channelId, cumulative)) return DEFER;
    const ops: WriteOp[] = [{ op: 'channel.ledger', channelId, claimed: cumulative }];
    if (known && cumulative > known.charged) this.deps.onClaimAbove?.(channelId, known.charged, cumulative);
    // Recorded (by a claimer, or an earlier pass): the store says so, whoever recorded it.
    if (await this.recorded(ev.tx, channelId, cumulative)) return ops;
    // A claim of everything the facilitator accepted covers the vouchers no claim covered yet.
    const coversAll = known !== null && known.charged === cumulative;
    const vouchersCovered = coversAll ? known.vouchers - known.vouchersClaimed : null;
    if (coversAll) ops.push({ op: 'channel.claimed', channelId, cumulative, vouchersClaimed: known.vouchers });
    ops.push(
      claimOnce(ev.tx, channelId, cumulative, ev.ts),
      this.event(ev, channelId, known ? [known.payer, known.payee] : [], {
        channelId: channelId.toString(),
        payee: str(d['payee']),
        amount: str(d['amount']),
        cumulative: formatUnits(cumulative),
        vouchersCovered,
        tx: ev.tx,
      }),
    );
    return ops;
  }

  /** Whether this claim of the transaction is recorded, under its key or the one-channel key of older stores. */
  private async recorded(tx: string, channelId: bigint, cumulative: bigint): Promise<boolean> {
    if ((await this.deps.store.getIdempotent(claimKeyOf(tx, channelId, cumulative))) !== null) return true;
    return (await this.deps.store.getIdempotent(claimKeyOfOneChannelTx(tx))) !== null;
  }

  private event(ev: LedgerEvent, channelId: bigint, accounts: string[], data: Record<string, unknown>): WriteOp {
    const event: NewEvent = { type: ev.type, source: 'ledger', ts: ev.ts, channelId, accounts, data };
    return { op: 'event', event };
  }
}

function units(v: unknown): bigint {
  return parseUnits(str(v));
}
