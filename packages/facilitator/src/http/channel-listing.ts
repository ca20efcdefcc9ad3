// The JSON of a channel list (GET /channels, which the spec keeps unpaginated, and the open channels
// of GET /accounts/:address) without starving the hot path. One faucet grant opens thousands of
// channels in seconds; read and serialised at once, 4,000 of them held the event loop ~100 ms (most
// of it the store read, then the views and JSON.stringify), so 8 clients looping on it pushed
// /verify to seconds. Hence:
//   - pages of PAGE channels (a keyset read), with a turn of the event loop between pages, so
//     vouchers keep being verified while a long list is built;
//   - one build per query at a time: requests for a long list while it is being built share it;
//   - a list of more than one page is served again for REUSE_MS after it was built, so clients
//     looping on it cost one build per query per REUSE_MS, not one each. Such a list may be that
//     much older than the request; a short one is always read fresh;
//   - a list of more than COSTLY channels is `costly`: the routes count it against the per-address
//     costly limit, since sending megabytes again and again keeps the event loop busy too
//     (measured: 8 clients looping on one shared 2.7 MB answer at loopback speed kept it 85 % busy).
import type { ChannelView } from '@svc/core';
import type { ChannelFilter, ChannelRecord, Store } from '../store/port.js';

export const PAGE = 100;
export const REUSE_MS = 1_000;
/** Past this many channels (~170 KB) a list counts as a costly request. */
export const COSTLY = 250;
/** Long lists kept at once (distinct queries); the oldest finished one goes first. */
const MAX_KEPT = 32;
const OPEN = '{"channels":[';
const CLOSE = Buffer.from(']}');

type Query = Pick<ChannelFilter, 'payer' | 'payee' | 'status'>;

export interface Listing {
  /** `{"channels":[…]}`: the channel views, newest first. */
  json: Buffer;
  /** More than COSTLY channels. */
  costly: boolean;
}

interface Build {
  listing: Promise<Listing>;
  /** When the build finished (performance.now()), or null while it runs. */
  doneAt: number | null;
}

export class ChannelListing {
  private readonly kept = new Map<string, Build>();

  constructor(
    private readonly store: Store,
    private readonly view: (record: ChannelRecord) => ChannelView,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The channels matching `query`. */
  list(query: Query): Promise<Listing> {
    const key = JSON.stringify([query.payer ?? null, query.payee ?? null, query.status ?? null]);
    const kept = this.kept.get(key);
    if (kept && (kept.doneAt === null || this.now() - kept.doneAt < REUSE_MS)) return kept.listing;
    if (kept) this.kept.delete(key);
    return this.build(key, query);
  }

  /** The channels' JSON array inside a listing, without a copy. */
  static array(listing: Listing): Buffer {
    return listing.json.subarray(OPEN.length - 1, listing.json.length - 1);
  }

  private async build(key: string, query: Query): Promise<Listing> {
    const page = await this.store.listChannels({ ...query, limit: PAGE });
    const first = this.chunk(page, true);
    if (page.length < PAGE) return { json: Buffer.concat([first, CLOSE]), costly: page.length > COSTLY };
    // A long list: later requests share this build, then its answer for REUSE_MS.
    const build: Build = { listing: this.rest(query, page, first), doneAt: null };
    this.keep(key, build);
    build.listing.then(
      () => (build.doneAt = this.now()),
      () => this.kept.get(key) === build && this.kept.delete(key),
    );
    return build.listing;
  }

  private async rest(query: Query, firstPage: ChannelRecord[], first: Buffer): Promise<Listing> {
    const parts = [first];
    let count = firstPage.length;
    for (let page = firstPage; page.length === PAGE;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const last = page[PAGE - 1]!;
      page = await this.store.listChannels({
        ...query,
        after: { createdAt: last.createdAt, id: last.id },
        limit: PAGE,
      });
      if (page.length > 0) parts.push(this.chunk(page, false));
      count += page.length;
    }
    parts.push(CLOSE);
    return { json: Buffer.concat(parts), costly: count > COSTLY };
  }

  /** One page as JSON: the opening or a separating comma, then the views. */
  private chunk(page: ChannelRecord[], first: boolean): Buffer {
    return Buffer.from((first ? OPEN : ',') + page.map((r) => JSON.stringify(this.view(r))).join(','));
  }

  private keep(key: string, build: Build): void {
    for (const [k, b] of this.kept) {
      if (this.kept.size < MAX_KEPT) break;
      if (b.doneAt !== null) this.kept.delete(k);
    }
    this.kept.set(key, build);
  }
}
