// Event streams whose clients never read must not hold the slots of GET /events for
// ever. The socket's kernel buffers absorb megabytes before anything is left in the process, so a
// stream is judged by what its client has not taken, kernel included: one that has not drained for
// SSE_STALL_SECONDS is dropped (its client resumes with Last-Event-ID); a client that reads is never
// dropped, and a new stream takes the freed slot.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SseParser } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const TOTAL = 5;
const STUCK = TOTAL - 1;
const EVENTS = 250; // 8 KB each: 2 MB, well under what a socket's buffers absorb (~4 MB) plus 1 MiB
const STALL_SECONDS = 2;

const sockets: net.Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

/**
 * A client that asks for the stream and, once its answer has begun (200: it holds a slot), never
 * reads another byte. Waiting for the answer keeps the slots taken in order.
 */
function neverReads(url: string): Promise<net.Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress: '127.0.0.2' }, () => {
      socket.once('data', (chunk: Buffer) => {
        socket.pause();
        const head = chunk.toString('latin1');
        if (head.startsWith('HTTP/1.1 200')) resolve(socket);
        else reject(new Error(`the stream was refused: ${head.split('\r\n')[0]}`));
      });
      socket.write('GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    });
    socket.on('error', () => {});
    socket.once('error', reject);
    sockets.push(socket);
  });
}

/** A client that reads everything, counting the filler events. */
function reads(url: string): {
  started: Promise<number>;
  count(): number;
  seen(type: string): boolean;
  stop(): Promise<void>;
  ended(): boolean;
} {
  const controller = new AbortController();
  let count = 0;
  let ended = false;
  const types = new Set<string>();
  let begun: (status: number) => void = () => {};
  const started = new Promise<number>((resolve) => (begun = resolve));
  const done = (async () => {
    const res = await fetch(`${url}/events`, { signal: controller.signal });
    begun(res.status);
    const parser = new SseParser();
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const e of parser.push(value)) {
        types.add(e.event);
        if (e.event === 'test.filler') count++;
      }
    }
    ended = true;
  })().catch(() => {});
  return {
    started,
    count: () => count,
    seen: (type) => types.has(type),
    ended: () => ended,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

async function openStatus(url: string): Promise<number> {
  const res = await fetch(`${url}/events`);
  if (res.status === 200) await res.body?.cancel();
  else await res.arrayBuffer();
  return res.status;
}

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (await check()) return true;
  return check();
}

describe('event streams whose clients never read', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      SSE_MAX_TOTAL: String(TOTAL),
      SSE_MAX_PER_IP: '8',
      SSE_STALL_SECONDS: String(STALL_SECONDS),
    });
  });
  afterAll(() => h.close());

  it('are dropped within a bounded time, counting the socket buffers; a reading client is not; a new stream takes the freed slot', async () => {
    for (let i = 0; i < STUCK; i++) await neverReads(h.url);
    const reader = reads(h.url);
    expect(await reader.started).toBe(200);
    // Every slot is taken: the next stream is refused.
    expect(await until(async () => (await openStatus(h.url)) === 429, 5000)).toBe(true);
    const pad = 'x'.repeat(8000);
    for (let i = 0; i < EVENTS; i += 10) {
      const ts = new Date().toISOString();
      await h.f.services.events.commit(
        Array.from({ length: 10 }, () => ({
          op: 'event' as const,
          event: { type: 'test.filler', source: 'facilitator', ts, data: { pad } },
        })),
      );
      // Paced by the reading client, as a live feed is: it keeps up.
      await until(() => reader.count() >= i, 10_000);
    }
    expect(await until(() => reader.count() >= EVENTS, 10_000)).toBe(true);
    const stopped = Date.now();
    // The stuck streams go within the stall bound (and a sweep or two); their slots take new streams.
    expect(await until(async () => (await openStatus(h.url)) === 200, (STALL_SECONDS + 6) * 1000)).toBe(true);
    const freedAfterMs = Date.now() - stopped;
    console.log(
      `never-reading streams dropped ${freedAfterMs} ms after the events stopped (stall bound ${STALL_SECONDS} s)`,
    );
    expect(
      await until(
        async () => (await Promise.all(Array.from({ length: STUCK }, () => openStatus(h.url)))).every((s) => s === 200),
        5000,
      ),
    ).toBe(true);
    // The reading client kept its stream and still gets events.
    await h.f.services.events.commit([
      {
        op: 'event',
        event: { type: 'test.after-drop', source: 'facilitator', ts: new Date().toISOString(), data: {} },
      },
    ]);
    expect(await until(() => reader.seen('test.after-drop'), 5000)).toBe(true);
    expect(reader.ended()).toBe(false);
    await reader.stop();
  });
});

describe('HEAD /events', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ SSE_MAX_TOTAL: '3', SSE_MAX_PER_IP: '2' });
  });
  afterAll(() => h.close());

  /** The head of the answer to `HEAD /events` on a kept-alive socket, or null if none came in 3 s. */
  function head(url: string): Promise<string | null> {
    const { port } = new URL(url);
    return new Promise((resolve) => {
      const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress: '127.0.0.3' }, () => {
        socket.write('HEAD /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
      });
      let text = '';
      const timer = setTimeout(() => resolve(null), 3000);
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (text.includes('\r\n\r\n')) {
          clearTimeout(timer);
          resolve(text);
        }
      });
      socket.on('error', () => {});
      sockets.push(socket); // kept open: a slot it held would stay held
    });
  }

  it('answers the stream’s headers at once and holds no stream slot', async () => {
    for (let i = 0; i < 4; i++) {
      const answer = await head(h.url);
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toMatch(/content-type: text\/event-stream/i);
    }
    // Four HEADs from one address, past its cap of 2 and the total of 3: a stream is still served.
    const res = await fetch(`${h.url}/events`);
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });
});
