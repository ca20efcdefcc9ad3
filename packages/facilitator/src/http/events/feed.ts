// The live event feed behind GET /events (spec; docs/protocol.md#channels-and-records): the last events (200), then live
// ones, as server-sent events. Subscribing comes before reading the backlog, so nothing falls
// between the two. Publishing never waits for a client, and a client that does not take what it is
// sent is disconnected (it resumes with Last-Event-ID), so a slow client cannot hold up others nor
// keep a slot of SSE_MAX_TOTAL: one that has taken nothing for SSE_STALL_SECONDS while something was
// pending for it, counting what the kernel holds for the socket (send-queue.ts) — a client that
// never reads fills megabytes of socket buffers before anything waits in the process (issue
// 13.12) — and one that leaves more than MAX_BUFFERED_BYTES waiting in the process.
import type { ServerResponse } from 'node:http';
import type { Bus } from '../../bus/port.js';
import { NO_PRESENCE } from '../../cluster/stream-presence.js';
import type { StreamPresence } from '../../cluster/stream-presence.js';
import type { Store, StoredEvent } from '../../store/port.js';
import { eventView } from './view.js';
import { ProcSendQueues } from '../send-queue.js';
import type { SendQueues } from '../send-queue.js';

export const BACKLOG = 200;
/** Events a resuming client is sent from the store, at most, and per page. */
export const REPLAY_MAX = 10_000;
const REPLAY_PAGE = 500;
/** Live events held for a client while it is replayed to; past this it is dropped (and resumes). */
const MAX_QUEUED = 10_000;
export const KEEPALIVE_MS = 15_000;
/**
 * Bytes a client may leave waiting in the process, past its backlog and the kernel's buffers (which
 * hold megabytes), before it is dropped: 200 streams × 256 KiB at most.
 */
export const MAX_BUFFERED_BYTES = 256 * 1024;
/** How long a client may take nothing while something is pending before it is dropped. */
export const STALL_MS = 10_000;

export interface FeedOptions {
  /** Open streams per address and in all (SSE_MAX_PER_IP, SSE_MAX_TOTAL). */
  perIp: number;
  total: number;
  /** SSE_STALL_SECONDS, in ms (default STALL_MS). */
  stallMs?: number;
  keepaliveMs?: number;
  maxBufferedBytes?: number;
  /** Events sent to a resuming client from the store, at most (default REPLAY_MAX). */
  replayMax?: number;
  /** Where the kernel's share of pending bytes is read (default: /proc on Linux). */
  sendQueues?: SendQueues;
}

export interface FeedFilter {
  account?: string;
  channelId?: bigint;
}

interface Client {
  res: ServerResponse;
  ip: string;
  filter: FeedFilter;
  /** Live events that arrived while the backlog was being read. */
  queued: StoredEvent[] | null;
  lastId: number;
  /** Bytes it may leave waiting in the process: maxBufferedBytes and its backlog. */
  allowance: number;
  /** Bytes written to the stream; of those, what the client had taken at the last sweep. */
  written: number;
  taken: number;
  /** At the last sweep: what had been written, and whether the client had taken all of it. */
  swept: { written: number; drained: boolean };
  /** Since when (performance.now()) the client has taken nothing while something was pending. */
  stalledSince: number | null;
}

export class EventFeed {
  private readonly clients = new Set<Client>();
  private readonly perIp = new Map<string, number>();
  private readonly keepalive: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;
  private sweeping = false;
  private readonly stallMs: number;
  private readonly maxBufferedBytes: number;
  private readonly replayMax: number;
  private readonly sendQueues: SendQueues;
  /** The other instances' open streams (a cluster on one PostgreSQL); none alone. */
  private presence: StreamPresence = NO_PRESENCE;

  constructor(
    private readonly store: Store,
    bus: Bus,
    private readonly limits: FeedOptions,
  ) {
    this.stallMs = limits.stallMs ?? STALL_MS;
    this.maxBufferedBytes = limits.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
    this.replayMax = limits.replayMax ?? REPLAY_MAX;
    this.sendQueues = limits.sendQueues ?? new ProcSendQueues();
    bus.subscribe((event) => {
      for (const client of this.clients) this.deliver(client, event);
    });
    this.keepalive = setInterval(() => {
      for (const client of this.clients) this.write(client, ': keep-alive\n\n');
    }, limits.keepaliveMs ?? KEEPALIVE_MS);
    this.keepalive.unref();
    this.sweeper = setInterval(() => void this.sweep(), Math.max(100, Math.min(1_000, this.stallMs / 4)));
    this.sweeper.unref();
  }

  /** Counts the other instances' streams too, from now on. */
  share(presence: StreamPresence): void {
    this.presence = presence;
  }

  /** Open streams per address on this instance (what a StreamPresence publishes). */
  localCounts(): ReadonlyMap<string, number> {
    return this.perIp;
  }

  /** Why a new connection from `ip` must be refused, or null. */
  refusal(ip: string): string | null {
    if ((this.perIp.get(ip) ?? 0) + this.presence.elsewhere(ip) >= this.limits.perIp)
      return `at most ${this.limits.perIp} open event streams per address`;
    if (this.clients.size + this.presence.elsewhereTotal() >= this.limits.total)
      return `at most ${this.limits.total} open event streams`;
    return null;
  }

  /**
   * Serves `res` from now on: what it missed, then live events. Without Last-Event-ID, the last
   * BACKLOG events. With one, every event after it, from the store (events are durable), a page at
   * a time as the client takes them — at most REPLAY_MAX; past that a `feed.gap` frame says which
   * ids were skipped and the stream goes on with the last BACKLOG. A Last-Event-ID beyond the newest
   * event (another deployment's, a reset store) gets a `feed.reset` frame, then the last BACKLOG.
   */
  async attach(res: ServerResponse, ip: string, filter: FeedFilter, lastEventId: number | null): Promise<void> {
    const client: Client = {
      res,
      ip,
      filter,
      queued: [],
      lastId: lastEventId ?? 0,
      allowance: this.maxBufferedBytes,
      written: 0,
      taken: 0,
      swept: { written: 0, drained: true },
      stalledSince: null,
    };
    this.clients.add(client);
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
    res.on('close', () => this.detach(client));
    let after = lastEventId;
    if (after !== null) {
      const newest = (await this.store.events({ order: 'desc', limit: 1 }))[0]?.id ?? 0;
      if (after > newest) {
        this.push(
          client,
          notice('feed.reset', {
            lastEventId: after,
            newestId: newest,
            reason:
              'Last-Event-ID is beyond the newest event of this facilitator: the stream starts again with its last events.',
          }),
        );
        after = null;
        client.lastId = 0;
      }
    }
    if (after === null) await this.sendBacklog(client);
    else await this.replay(client, after);
    const queued = client.queued ?? [];
    client.queued = null;
    for (const event of queued) if (event.id > client.lastId) this.send(client, event);
  }

  /** The last BACKLOG events (after `after`, if given), oldest first. */
  private async sendBacklog(client: Client, after?: number): Promise<void> {
    const backlog = await this.store.events({
      ...(after === undefined ? {} : { after }),
      order: 'desc',
      limit: BACKLOG,
      ...filterQuery(client.filter),
    });
    // Written whole: the backlog is bounded by itself (BACKLOG events), and a client may leave it
    // waiting, plus maxBufferedBytes of what keeps coming after it.
    for (const event of backlog.reverse()) {
      client.lastId = event.id;
      client.allowance += this.push(client, frame(event));
    }
  }

  /** Everything after `after`, oldest first, a page at a time as the client takes it; bounded. */
  private async replay(client: Client, after: number): Promise<void> {
    client.lastId = after;
    let replayed = 0;
    for (;;) {
      const page = await this.store.events({
        after: client.lastId,
        order: 'asc',
        limit: REPLAY_PAGE,
        ...filterQuery(client.filter),
      });
      // Like the backlog, a page may be left waiting whole (the next is read once it is taken).
      client.allowance = this.maxBufferedBytes;
      for (const event of page) {
        client.lastId = event.id;
        client.allowance += this.push(client, frame(event));
      }
      replayed += page.length;
      if (page.length < REPLAY_PAGE || client.res.destroyed) return;
      if (replayed >= this.replayMax) break;
      // Live events wait meanwhile; a client that falls this far behind resumes later instead.
      if ((client.queued?.length ?? 0) > MAX_QUEUED) return void client.res.destroy();
      if (!(await drained(client.res))) return;
    }
    // Too far behind to replay here: say so, and go on with the last events.
    const resumeFrom = client.lastId;
    const latest = await this.store.events({
      after: resumeFrom,
      order: 'desc',
      limit: BACKLOG,
      ...filterQuery(client.filter),
    });
    const firstKept = latest.at(-1)?.id;
    if (firstKept !== undefined) {
      const skipped = await this.store.events({
        after: resumeFrom,
        before: firstKept,
        order: 'desc',
        limit: 1,
        ...filterQuery(client.filter),
      });
      if (skipped.length > 0) {
        this.push(
          client,
          notice('feed.gap', {
            after: resumeFrom,
            before: firstKept,
            reason: `more than ${this.replayMax} events to replay: the events after ${resumeFrom} and before ${firstKept} are not sent (they are in the accounts' ledgers, GET /accounts/:address/ledger).`,
          }),
        );
      }
    }
    await this.sendBacklog(client, resumeFrom);
  }

  get size(): number {
    return this.clients.size;
  }

  close(): void {
    clearInterval(this.keepalive);
    clearInterval(this.sweeper);
    for (const client of this.clients) client.res.end();
  }

  private deliver(client: Client, event: StoredEvent): void {
    if (!matches(client.filter, event)) return;
    if (client.queued) client.queued.push(event);
    else if (event.id > client.lastId) this.send(client, event);
  }

  private send(client: Client, event: StoredEvent): void {
    client.lastId = event.id;
    this.write(client, frame(event));
  }

  private write(client: Client, text: string): void {
    if (client.res.writableLength > client.allowance) {
      client.res.destroy(); // too slow: it resumes with Last-Event-ID
      return;
    }
    this.push(client, text);
  }

  /** Writes `text`; returns its length in bytes. */
  private push(client: Client, text: string): number {
    if (client.res.writableEnded) return 0;
    const bytes = Buffer.byteLength(text);
    client.written += bytes;
    client.res.write(text);
    return bytes;
  }

  /**
   * Drops the clients that have taken nothing for stallMs while something was pending. Taken =
   * written − pending, so a client that reads, however slowly, makes progress; one that never
   * reads stops making any once its own receive buffer is full, whatever ours still absorb.
   */
  private async sweep(): Promise<void> {
    if (this.clients.size === 0 || this.sweeping) return;
    this.sweeping = true;
    try {
      // What was written and what waits in the process, read before the kernel's share: a write
      // in between then makes the estimate of what was taken smaller, never larger, so it cannot
      // pass for progress.
      // A client that had taken everything and was sent nothing since has nothing pending.
      const before = [...this.clients]
        .filter((client) => !(client.swept.drained && client.swept.written === client.written))
        .map((client) => ({ client, written: client.written, waiting: client.res.writableLength }));
      if (before.length === 0) return;
      const kernel = await this.sendQueues.read(
        before.flatMap(({ client }) => (client.res.socket ? [client.res.socket] : [])),
      );
      const now = performance.now();
      for (const { client, written, waiting } of before) {
        const socket = client.res.socket;
        if (!socket || client.res.destroyed || !this.clients.has(client)) continue;
        const pending = waiting + kernel(socket);
        const taken = written - pending;
        client.swept = { written, drained: pending === 0 };
        if (pending === 0 || taken > client.taken) {
          client.taken = taken;
          client.stalledSince = null;
        } else {
          client.stalledSince ??= now;
        }
        if (client.stalledSince !== null && now - client.stalledSince >= this.stallMs) client.res.destroy(); // resumes with Last-Event-ID
      }
    } catch {
      // The kernel's share could not be read this time: the next sweep judges.
    } finally {
      this.sweeping = false;
    }
  }

  private detach(client: Client): void {
    if (!this.clients.delete(client)) return;
    const n = (this.perIp.get(client.ip) ?? 1) - 1;
    if (n > 0) this.perIp.set(client.ip, n);
    else this.perIp.delete(client.ip);
  }
}

/** A frame about the stream itself: no id, so the client's Last-Event-ID stays what it was. */
function notice(type: 'feed.reset' | 'feed.gap', data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

function filterQuery(filter: FeedFilter): { account?: string; channelId?: bigint } {
  return {
    ...(filter.account ? { account: filter.account } : {}),
    ...(filter.channelId !== undefined ? { channelId: filter.channelId } : {}),
  };
}

/** Resolves once `res` has room again (true), or is gone (false). */
function drained(res: ServerResponse): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  if (!res.writableNeedDrain) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

function frame(event: StoredEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(eventView(event))}\n\n`;
}

function matches(filter: FeedFilter, event: StoredEvent): boolean {
  if (filter.account !== undefined && !event.accounts.includes(filter.account)) return false;
  if (filter.channelId !== undefined && event.channelId !== filter.channelId) return false;
  return true;
}
