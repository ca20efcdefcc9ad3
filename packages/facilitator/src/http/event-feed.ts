// The live event feed behind GET /events (spec; PROTOCOL.md §7): the last events (200), then live
// ones, as server-sent events. Subscribing comes before reading the backlog, so nothing falls
// between the two. Publishing never waits for a client: a client whose socket buffer grows past
// a bound is disconnected (it resumes with Last-Event-ID), so a slow client cannot hold up others.
import type { ServerResponse } from 'node:http';
import type { Bus } from '../bus/port.js';
import { NO_PRESENCE } from '../cluster/stream-presence.js';
import type { StreamPresence } from '../cluster/stream-presence.js';
import type { Store, StoredEvent } from '../store/port.js';
import { eventView } from './event-view.js';

export const BACKLOG = 200;
export const KEEPALIVE_MS = 15_000;
/** Bytes a client may leave unread before it is dropped (beyond what the kernel buffers). */
export const MAX_BUFFERED_BYTES = 1 << 20;

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
}

export class EventFeed {
  private readonly clients = new Set<Client>();
  private readonly perIp = new Map<string, number>();
  private readonly keepalive: NodeJS.Timeout;
  /** The other instances' open streams (a cluster on one PostgreSQL); none alone. */
  private presence: StreamPresence = NO_PRESENCE;

  constructor(
    private readonly store: Store,
    bus: Bus,
    private readonly limits: { perIp: number; total: number },
    keepaliveMs = KEEPALIVE_MS,
    private readonly maxBufferedBytes = MAX_BUFFERED_BYTES,
  ) {
    bus.subscribe((event) => {
      for (const client of this.clients) this.deliver(client, event);
    });
    this.keepalive = setInterval(() => {
      for (const client of this.clients) this.write(client, ': keep-alive\n\n');
    }, keepaliveMs);
    this.keepalive.unref();
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
    if ((this.perIp.get(ip) ?? 0) + this.presence.elsewhere(ip) >= this.limits.perIp) return `at most ${this.limits.perIp} open event streams per address`;
    if (this.clients.size + this.presence.elsewhereTotal() >= this.limits.total) return `at most ${this.limits.total} open event streams`;
    return null;
  }

  async attach(res: ServerResponse, ip: string, filter: FeedFilter, lastEventId: number | null): Promise<void> {
    const client: Client = { res, ip, filter, queued: [], lastId: lastEventId ?? 0 };
    this.clients.add(client);
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
    res.on('close', () => this.detach(client));
    const backlog = await this.store.events({
      ...(lastEventId === null ? { order: 'desc' as const } : { after: lastEventId, order: 'desc' as const }),
      limit: BACKLOG,
      ...(filter.account ? { account: filter.account } : {}),
      ...(filter.channelId !== undefined ? { channelId: filter.channelId } : {}),
    });
    for (const event of backlog.reverse()) this.send(client, event);
    const queued = client.queued ?? [];
    client.queued = null;
    for (const event of queued) if (event.id > client.lastId) this.send(client, event);
  }

  get size(): number {
    return this.clients.size;
  }

  close(): void {
    clearInterval(this.keepalive);
    for (const client of this.clients) client.res.end();
  }

  private deliver(client: Client, event: StoredEvent): void {
    if (!matches(client.filter, event)) return;
    if (client.queued) client.queued.push(event);
    else if (event.id > client.lastId) this.send(client, event);
  }

  private send(client: Client, event: StoredEvent): void {
    client.lastId = event.id;
    this.write(client, `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(eventView(event))}\n\n`);
  }

  private write(client: Client, frame: string): void {
    if (client.res.writableEnded) return;
    if (client.res.writableLength > this.maxBufferedBytes) {
      client.res.destroy(); // too slow: it resumes with Last-Event-ID
      return;
    }
    client.res.write(frame);
  }

  private detach(client: Client): void {
    if (!this.clients.delete(client)) return;
    const n = (this.perIp.get(client.ip) ?? 1) - 1;
    if (n > 0) this.perIp.set(client.ip, n);
    else this.perIp.delete(client.ip);
  }
}

function matches(filter: FeedFilter, event: StoredEvent): boolean {
  if (filter.account !== undefined && !event.accounts.includes(filter.account)) return false;
  if (filter.channelId !== undefined && event.channelId !== filter.channelId) return false;
  return true;
}
