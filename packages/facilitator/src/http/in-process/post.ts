// The meter's per-request calls (POST /verify, POST /receipts/:id/attest) of a seller that lives in
// this facilitator's process (the demo), answered by the route table itself: the same declaration,
// input schemas, handler, seller authentication and error bodies as over HTTP (runRoute, errorAnswer),
// and the same JSON parser rules (prototype poisoning and nesting refused). What it leaves out is
// what only a socket needs: Fastify's request and reply objects, CORS, security headers, and the
// per-address limits (the facilitator's own calls are exempt from them anyway: the buyer's request
// that caused them was counted). Fastify's inject, which it replaces here, builds a fake socket,
// request and response and runs every hook for each call: about a third of a paid book's CPU.
//
// A handler reached this way sees a request with `method`, `url`, `headers`, `ip` and `log` only,
// and no reply: the routes the meter calls read nothing else (test/local-post.test.ts holds each of
// them to its HTTP answer).
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { MAX_JSON_DEPTH, SvcError, jsonDepth } from '@svc/core';
import type { PostJson } from '@svc/meter';
import { errorAnswer } from '../errors.js';
import { runRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

const LOOPBACK = '127.0.0.1';

interface Compiled {
  segments: string[];
  spec: AnyRoute;
}

/** The POST routes of `routes`, answered in process; any other path is a 404 as over HTTP. */
export function localPost(routes: readonly AnyRoute[], log: FastifyBaseLogger): PostJson {
  const table: Compiled[] = routes
    .filter((r) => r.method === 'POST')
    .map((spec) => ({ segments: spec.url.split('/'), spec }));
  return async (url, headers, body) => {
    const target = new URL(url);
    const lower: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value;
    const request = { method: 'POST', url: target.pathname + target.search, headers: lower, ip: LOOPBACK, log };
    try {
      const found = match(table, target.pathname);
      if (!found) throw new SvcError('NOT_FOUND', `No route for POST ${target.pathname}.`);
      const json = await runRoute(
        found.spec,
        { params: found.params, query: Object.fromEntries(target.searchParams), body: parseBody(body) },
        { request: request as unknown as FastifyRequest, reply: NO_REPLY, costly: () => Promise.resolve() },
      );
      return { status: 200, json, header: () => null };
    } catch (error) {
      const answer = errorAnswer(error, log);
      return {
        status: answer.status,
        json: answer.body,
        header: (name) => (name.toLowerCase() === 'retry-after' ? answer.retryAfter : null),
      };
    }
  };
}

function match(table: Compiled[], pathname: string): { spec: AnyRoute; params: Record<string, string> } | null {
  const parts = pathname.split('/');
  for (const { segments, spec } of table) {
    if (segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = segments.every((segment, i) => {
      const part = parts[i]!;
      if (!segment.startsWith(':')) return segment === part;
      if (part === '') return false;
      try {
        params[segment.slice(1)] = decodeURIComponent(part);
        return true;
      } catch {
        return false;
      }
    });
    if (ok) return { spec, params };
  }
  return null;
}

/** JSON as Fastify's parser takes it here (app.ts): `__proto__` and `constructor` keys refused, nesting bounded. */
function parseBody(text: string): unknown {
  if (text === '') throw new SvcError('BAD_REQUEST', 'The JSON body is empty.');
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new SvcError('BAD_REQUEST', 'The body is not valid JSON.');
  }
  if (jsonDepth(value) > MAX_JSON_DEPTH)
    throw new SvcError('BAD_REQUEST', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  return value;
}

/** The routes the meter calls answer with their return value; a handler that reaches for a reply is a bug, answered 500. */
const NO_REPLY = new Proxy({} as FastifyReply, {
  get() {
    throw new Error('a route answered in process (in-process/post.ts) used the reply');
  },
});
