// A GET answered by this facilitator's own routes, in process (Fastify's inject): no socket, but
// the same validation, handler and error body as over HTTP. The MCP tools answer through it, so a
// tool's result is the endpoint's JSON by construction, errors included.
import type { FastifyInstance } from 'fastify';
import { INTERNAL_HEADER } from '../limits/ip.js';

export interface LocalAnswer {
  status: number;
  body: unknown;
}

export type LocalGet = (path: string, query?: Record<string, string>) => Promise<LocalAnswer>;

/** `internalToken` marks the call as the facilitator's own, so per-IP limits do not count it again. */
export function localGet(app: FastifyInstance, internalToken: string): LocalGet {
  return async (path, query) => {
    const res = await app.inject({
      method: 'GET',
      url: path,
      headers: { [INTERNAL_HEADER]: internalToken },
      ...(query ? { query } : {}),
    });
    let body: unknown = res.body;
    try {
      body = res.json();
    } catch {
      // Not JSON (cannot happen for the routes the tools use): hand back the text.
    }
    return { status: res.statusCode, body };
  };
}

/**
 * A path segment from user input, kept one parameter: `/` is encoded, and `.` or `..` (which the
 * URL parser would resolve as dot-segments, even percent-encoded) reach the route as literal text
 * it refuses, like any other malformed value.
 */
export function segment(value: string): string {
  return value === '.' || value === '..' ? value.replaceAll('.', '%252E') : encodeURIComponent(value);
}

/**
 * A `fetch` answered by this facilitator's own routes, in process: for a seller living in the
 * facilitator's process (the demo), its meter's calls take the same routes, validation, seller
 * authentication and error bodies as over HTTP, without a socket, an HTTP parser or undici on
 * either side. Marked as the facilitator's own, like localGet: the buyer's request that caused
 * them was already counted against its address.
 */
export function localFetch(app: FastifyInstance, internalToken: string): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string')
      throw new TypeError('localFetch sends string bodies only');
    const res = await app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers: { ...headers, [INTERNAL_HEADER]: internalToken },
      ...(body !== undefined && body !== null ? { payload: body } : {}),
    });
    const answer = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const v of value) answer.append(name, v);
      else if (value !== undefined) answer.set(name, String(value));
    }
    const empty = res.statusCode === 204 || res.statusCode === 205 || res.statusCode === 304;
    return new Response(empty ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: answer });
  };
}
