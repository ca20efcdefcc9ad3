// GET /events: backlog then live, filters, Last-Event-ID resume, per-address cap, slow clients.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { EventFeed } from '../../src/http/events/feed.js';
import type { StoredEvent } from '../../src/store/port.js';
import { SseParser } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

interface Frame {
  id: number;
  event: string;
  data: { type: string; channelId?: string; data: Record<string, unknown> };
}

/** Reads SSE frames until `until` says stop (or the stream ends), then hangs up unless told not to. */
async function read(
  res: Response,
  until: (frames: Frame[]) => boolean,
  hangUp = true,
  progress?: (n: number) => void,
): Promise<Frame[]> {
  const parser = new SseParser();
  const frames: Frame[] = [];
  const reader = res.body!.getReader();
  try {
    while (!until(frames)) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const e of parser.push(value))
        frames.push({ id: Number(e.id), event: e.event, data: JSON.parse(e.data) as Frame['data'] });
      progress?.(frames.length);
    }
  } finally {
    if (hangUp) await reader.cancel();
    else reader.releaseLock();
  }
  return frames;
}

describe('GET /events', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('sends the backlog, then live events; a client that reconnects with Last-Event-ID misses nothing', async () => {
    const b = await h.buyer();
    await h.f.watcher.tick(); // channel.opened comes from the ledger watcher
    for (let i = 1; i <= 3; i++) await h.verify(b.signer.sign(5000n * BigInt(i)));
    const first = await fetch(`${h.url}/events?channelId=${b.channelId}`);
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const backlog = await read(first, (f) => f.filter((x) => x.event === 'voucher.accepted').length >= 3);
    expect(backlog.map((f) => f.event)).toEqual([
      'channel.opened',
      'voucher.accepted',
      'voucher.accepted',
      'voucher.accepted',
    ]);
    for (let i = 1; i < backlog.length; i++) expect(backlog[i]!.id).toBeGreaterThan(backlog[i - 1]!.id);
    const lastSeen = backlog.at(-1)!.id;
    // Disconnected: more happens meanwhile.
    for (let i = 4; i <= 6; i++) await h.verify(b.signer.sign(5000n * BigInt(i)));
    const again = await fetch(`${h.url}/events?channelId=${b.channelId}`, {
      headers: { 'last-event-id': String(lastSeen) },
    });
    const liveSoon = setTimeout(() => void h.verify(b.signer.sign(35_000n)), 200);
    const resumed = await read(again, (f) => f.length >= 4);
    clearTimeout(liveSoon);
    expect(resumed.map((f) => (f.data.data['cumulative'] as string) ?? f.event)).toEqual([
      '20000',
      '25000',
      '30000',
      '35000',
    ]);
    expect(resumed[0]!.id).toBeGreaterThan(lastSeen);
  });

  // Before, a Last-Event-ID older than the 200-event backlog skipped what lay between,
  // and one beyond the newest id suppressed every live event.
  const filler = (n: number) =>
    h.f.services.events.commit(
      Array.from({ length: n }, (_, i) => ({
        op: 'event' as const,
        event: { type: 'test.filler', source: 'facilitator', ts: new Date().toISOString(), data: { i } },
      })),
    );

  it('resumes from the store when the Last-Event-ID is older than the backlog: nothing skipped', async () => {
    await filler(1);
    const start = (await h.f.store.events({ order: 'desc', limit: 1 }))[0]!.id;
    await filler(650);
    const resumed = await read(
      await fetch(`${h.url}/events`, { headers: { 'last-event-id': String(start) } }),
      (f) => f.length >= 650,
    );
    expect(resumed).toHaveLength(650);
    expect(resumed.map((f) => f.data.data['i'])).toEqual(Array.from({ length: 650 }, (_, i) => i));
    expect(resumed[0]!.id).toBe(start + 1);
    for (let i = 1; i < resumed.length; i++) expect(resumed[i]!.id).toBe(resumed[i - 1]!.id + 1);
  });

  it('says so when the Last-Event-ID is beyond the newest event, then sends the last events and live ones', async () => {
    const newest = (await h.f.store.events({ order: 'desc', limit: 1 }))[0]!.id;
    const res = await fetch(`${h.url}/events`, { headers: { 'last-event-id': String(newest + 1000) } });
    const liveSoon = setTimeout(() => void filler(1), 300);
    const frames = await read(res, (f) => f.some((x) => x.id > newest));
    clearTimeout(liveSoon);
    expect(frames[0]!.event).toBe('feed.reset');
    expect(frames[0]!.data).toMatchObject({ lastEventId: newest + 1000, newestId: newest });
    expect(frames.slice(1, 201).map((f) => f.id)).toEqual(Array.from({ length: 200 }, (_, i) => newest - 199 + i));
    expect(frames.at(-1)!.id).toBe(newest + 1); // live
  });

  it('filters by account', async () => {
    const b = await h.buyer();
    await h.verify(b.signer.next(5000n));
    const frames = await read(await fetch(`${h.url}/events?account=${b.keys.address}`), (f) => f.length >= 2);
    expect(frames.every((f) => f.data.channelId === b.channelId.toString())).toBe(true);
    expect((await fetch(`${h.url}/events?account=nope`)).status).toBe(400);
    expect((await fetch(`${h.url}/events`, { headers: { 'last-event-id': 'abc' } })).status).toBe(400);
  });

  it('refuses the ninth stream from one address with 429 and Retry-After', async () => {
    const open: Response[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${h.url}/events`);
      expect(res.status).toBe(200);
      open.push(res);
    }
    const ninth = await fetch(`${h.url}/events`);
    expect(ninth.status).toBe(429);
    expect(Number(ninth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await ninth.json()).toMatchObject({ error: 'RATE_LIMITED' });
    for (const r of open) await r.body?.cancel();
    await new Promise((r) => setTimeout(r, 100));
    const after = await fetch(`${h.url}/events`);
    expect(after.status).toBe(200);
    await after.body?.cancel();
  });
});

describe('EventFeed resuming further back than it replays (a real SQLite store)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off' });
  });
  afterAll(() => h.close());

  it('replays at most replayMax events, then sends a feed.gap frame naming the skipped ids and the last 200', async () => {
    const commit = (n: number) =>
      h.f.services.events.commit(
        Array.from({ length: n }, (_, i) => ({
          op: 'event' as const,
          event: { type: 'test.filler', source: 'facilitator', ts: new Date().toISOString(), data: { i } },
        })),
      );
    await commit(1);
    const start = (await h.f.store.events({ order: 'desc', limit: 1 }))[0]!.id;
    await commit(1800);
    const feed = new EventFeed(h.f.store, new MemoryBus(), { perIp: 8, total: 8, replayMax: 1000 });
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void feed.attach(res, req.socket.remoteAddress ?? '', {}, start);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    const frames = await read(await fetch(`http://127.0.0.1:${port}/events`), (f) => f.length >= 1201);
    // 1000 replayed (two pages), the gap, then the last 200.
    expect(frames.slice(0, 1000).map((f) => f.id)).toEqual(Array.from({ length: 1000 }, (_, i) => start + 1 + i));
    expect(frames[1000]!.event).toBe('feed.gap');
    expect(frames[1000]!.data).toMatchObject({ after: start + 1000, before: start + 1601 });
    expect(frames.slice(1001).map((f) => f.id)).toEqual(Array.from({ length: 200 }, (_, i) => start + 1601 + i));
    feed.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
});

describe('EventFeed', () => {
  it('drops a client that stops reading, without holding up the others; sends keep-alives', async () => {
    const bus = new MemoryBus();
    const stored: StoredEvent[] = [];
    const store = { events: () => Promise.resolve([]) } as unknown as ConstructorParameters<typeof EventFeed>[0];
    const feed = new EventFeed(store, bus, { perIp: 8, total: 200, keepaliveMs: 50, maxBufferedBytes: 256 * 1024 });
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void feed.attach(res, req.socket.remoteAddress ?? '', {}, null);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    // A client that never reads.
    const stuck = net.connect(port, '127.0.0.1');
    stuck.pause();
    stuck.write('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
    const reader = await fetch(`http://127.0.0.1:${port}/events`);
    while (feed.size < 2) await new Promise((r) => setTimeout(r, 10));
    // The healthy client reads all along, as a real one does.
    let received = 0;
    const reading = read(
      reader,
      (f) => f.filter((x) => x.event === 'voucher.accepted').length >= 4000,
      false,
      (n) => (received = n),
    );
    // More than loopback's socket buffers absorb (a few MB), so the stuck client's queue grows;
    // paced by the reading client, which keeps up (however loaded the machine is).
    const pad = 'x'.repeat(2000);
    for (let id = 1; id <= 4000; id++) {
      const e: StoredEvent = {
        id,
        type: 'voucher.accepted',
        source: 'facilitator',
        ts: '2026-11-23T00:00:00.000Z',
        channelId: 1n,
        account: null,
        accounts: [],
        data: { pad },
      };
      stored.push(e);
      bus.publish([e]);
      // Events come in batches (a group commit), not all at once: let a reading client drain.
      while (id - received > 50) await new Promise((r) => setTimeout(r, 1));
    }
    const frames = await reading;
    expect(frames.filter((x) => x.event === 'voucher.accepted')).toHaveLength(4000);
    for (let i = 0; i < 100 && feed.size > 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(feed.size).toBe(1); // the stuck client was dropped (it resumes with Last-Event-ID); the reader was not
    await reader.body?.cancel();
    const keepalive = await fetch(`http://127.0.0.1:${port}/events`);
    const text = await new Promise<string>((resolve) => {
      const r = keepalive.body!.getReader();
      void r.read().then(({ value }) => {
        void r.cancel();
        resolve(new TextDecoder().decode(value));
      });
    });
    expect(text).toContain(': keep-alive');
    feed.close();
    stuck.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
});
