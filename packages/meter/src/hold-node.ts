// Holds a node:http answer (node:http, Express, Fastify's reply.raw) while a `batch-settlement`
// payment is settled: the status, headers and body the handler writes stay in the response object,
// unsent, until the handler ends the answer; then the charge is settled (hold.ts) and the answer
// goes out with its PAYMENT-RESPONSE — or, when the settle is refused, the meter's 402/503 goes out
// instead and the held body is dropped. An answer longer than MAX_HELD_BYTES is settled when it
// passes that size (the charge asked for by then, or the price) and the rest streams through.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { hashResponse } from './attest.js';
import type { GateSettled } from './gate-outcome.js';
import type { Hold } from './gate-outcome.js';
import { MAX_HELD_BYTES, failedStatus } from './payment.js';

type Chunk = { data: unknown; encoding: string | undefined };
const WRAPPED = ['write', 'end', 'writeHead', 'flushHeaders'] as const;
type Callback = (err?: Error | null) => void;

/**
 * Wraps `res` so that what the handler writes is held until the hold is settled. Returns `fail`,
 * for a handler that threw before it answered: charged nothing, answered 500.
 */
export function holdNodeResponse(res: ServerResponse, hold: Hold, limit = MAX_HELD_BYTES): { fail(): void } {
  // What each wrapped method was on `res` itself (another wrapper's, or none: the prototype's), to put back.
  const own = WRAPPED.map((name) => [name, Object.getOwnPropertyDescriptor(res, name)] as const);
  const original = {
    write: res.write.bind(res),
    end: res.end.bind(res),
    writeHead: res.writeHead.bind(res),
    flushHeaders: res.flushHeaders.bind(res),
  };
  const chunks: Chunk[] = [];
  const callbacks: Callback[] = [];
  let bytes = 0;
  let ended = false;
  let state: 'holding' | 'settling' | 'through' | 'refused' = 'holding';
  for (const [name, value] of Object.entries(hold.headers)) res.setHeader(name, value);

  res.writeHead = function writeHead(status: number, ...rest: unknown[]) {
    if (state === 'through') return (original.writeHead as (...a: unknown[]) => ServerResponse)(status, ...rest);
    res.statusCode = status;
    if (typeof rest[0] === 'string') res.statusMessage = rest[0];
    const headers = rest[rest.length - 1];
    if (headers && typeof headers === 'object') setHeaders(res, headers);
    return res;
  };
  res.flushHeaders = () => {
    if (state === 'through') original.flushHeaders();
  };
  res.write = function write(data: unknown, encoding?: unknown, cb?: unknown) {
    if (state === 'through') return (original.write as (...a: unknown[]) => boolean)(data, encoding, cb);
    take(data, encoding, cb);
    return true;
  } as ServerResponse['write'];
  res.end = function end(data?: unknown, encoding?: unknown, cb?: unknown) {
    if (state === 'through') return (original.end as (...a: unknown[]) => ServerResponse)(data, encoding, cb);
    if (typeof data === 'function') take(undefined, undefined, data);
    else take(data, encoding, cb);
    ended = true;
    if (state === 'holding') settle();
    return res;
  } as ServerResponse['end'];
  // The client left before the answer was complete: it got nothing, and is charged nothing.
  res.once('close', () => {
    if (state !== 'holding') return;
    state = 'refused';
    void hold.finish(true);
  });

  function take(data: unknown, encoding: unknown, cb: unknown): void {
    if (typeof encoding === 'function') cb = encoding;
    if (typeof cb === 'function') callbacks.push(cb as Callback);
    if (state === 'refused' || data === undefined || data === null) return;
    chunks.push({ data, encoding: typeof encoding === 'string' ? encoding : undefined });
    bytes += typeof data === 'string' ? Buffer.byteLength(data) : (data as Uint8Array).byteLength;
    if (bytes > limit && state === 'holding') settle();
  }

  function settle(): void {
    state = 'settling';
    hold.finish(failedStatus(res.statusCode)).then(release, (err: unknown) =>
      release({
        kind: 'respond',
        status: 503,
        headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '5' },
        body: {
          error: 'FACILITATOR_UNAVAILABLE',
          source: 'gateway',
          message: `The payment could not be settled (${(err as Error).message}).`,
        },
      }),
    );
  }

  function restore(): void {
    for (const [name, descriptor] of own) {
      if (descriptor) Object.defineProperty(res, name, descriptor);
      else delete (res as unknown as Record<string, unknown>)[name];
    }
  }

  function release(settled: GateSettled): void {
    if (res.destroyed) {
      state = 'refused';
      return;
    }
    if (settled.kind === 'respond') {
      // Not paid: the meter's answer goes out, and the handler's is dropped (whatever it still writes).
      state = 'refused';
      restore();
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      for (const [name, value] of Object.entries(settled.headers)) res.setHeader(name, value);
      res.statusCode = settled.status;
      res.end(JSON.stringify(settled.body));
      res.write = ((...args: unknown[]) => {
        const cb = args.find((a) => typeof a === 'function') as Callback | undefined;
        cb?.();
        return true;
      }) as ServerResponse['write'];
      res.end = ((...args: unknown[]) => {
        const cb = args.find((a) => typeof a === 'function') as Callback | undefined;
        cb?.();
        return res;
      }) as ServerResponse['end'];
      for (const cb of callbacks.splice(0)) cb();
      return;
    }
    for (const [name, value] of Object.entries(settled.headers)) res.setHeader(name, value);
    state = 'through';
    restore();
    const attest = settled.attest;
    if (attest) hashResponse(res, (hash) => void attest(hash));
    for (const { data, encoding } of chunks.splice(0)) res.write(data, (encoding ?? 'utf8') as BufferEncoding);
    for (const cb of callbacks.splice(0)) cb();
    if (ended) res.end();
  }

  return {
    fail() {
      if (state !== 'holding') return;
      res.statusCode = 500;
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(
        JSON.stringify({ error: 'INTERNAL', source: 'gateway', message: 'The handler failed; nothing was charged.' }),
      );
    },
  };
}

function setHeaders(res: ServerResponse, headers: object): void {
  if (Array.isArray(headers)) {
    // [[name, value], …] or the flat [name, value, name, value, …] node:http also takes.
    const pairs: unknown[][] = Array.isArray(headers[0])
      ? (headers as unknown[][])
      : (headers as unknown[]).flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1]]] : []));
    for (const [name, value] of pairs) res.setHeader(String(name), value as string);
    return;
  }
  for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders))
    if (value !== undefined) res.setHeader(name, value);
}
