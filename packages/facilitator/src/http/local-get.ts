// A GET answered by this facilitator's own routes, in process (Fastify's inject): no socket, but
// the same validation, handler and error body as over HTTP. The MCP tools answer through it, so a
// tool's result is the endpoint's JSON by construction, errors included.
import type { FastifyInstance } from 'fastify';
import { INTERNAL_HEADER } from './ip-limits.js';

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
