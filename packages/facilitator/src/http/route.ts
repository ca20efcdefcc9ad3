// One declaration per route: method, path, zod schemas for params/query/body and the documented
// responses. mount() validates with the schemas; the OpenAPI document is generated from the same
// table, so the two cannot drift apart (docs/architecture.md#one-source-for-wire-shapes).
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { z } from 'zod';
import { SvcError, safeParse } from '@svc/core';
import type { IpLimits } from './limits/ip.js';
import type { RouteAuth } from './openapi/document.js';

type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  request: FastifyRequest;
  reply: FastifyReply;
  /** Counts this request against the per-IP costly limit now (throws RATE_LIMITED past it): for a route costly only in some cases. */
  costly: () => Promise<void>;
}

export interface RouteSpec<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
> {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  summary: string;
  /** More than the summary says, for the OpenAPI document: rules a caller must know. */
  description?: string;
  tags: string[];
  body?: B;
  /** The body may be left out: no body reaches the handler as undefined, unchecked. */
  bodyOptional?: boolean;
  query?: Q;
  params?: P;
  /**
   * Runs after the inputs are checked and before the handler (the demo seller's meter: a malformed
   * request is refused before it is paid for). Over HTTP only: in-process calls have none.
   */
  preHandler?: preHandlerAsyncHookHandler;
  /** Request headers the route reads, for the OpenAPI document (credentials are `auth`). */
  headers?: readonly { name: string; description: string; required?: boolean }[];
  /** The credential the route takes, for the OpenAPI document (the handler checks it). */
  auth?: RouteAuth | undefined;
  /** Exempt from the general per-address limit, for the OpenAPI document (limits/ip.ts decides). */
  unlimited?: boolean;
  /**
   * The handler reads and checks the body itself (its failures are its own protocol's answers);
   * `body` then only describes it, for the OpenAPI document.
   */
  selfValidated?: boolean;
  /** Counts against the per-IP costly limit (spec Limits: claims, attestations, reports, demo controls). */
  costly?: boolean;
  /** Status → description and schema, for the OpenAPI document. */
  responses: Record<number, { description: string; schema?: Schema; contentType?: string }>;
  handler(ctx: RouteContext<Infer<B>, Infer<Q>, Infer<P>>): unknown;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any>;

export function defineRoute<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(spec: RouteSpec<B, Q, P>): RouteSpec<B, Q, P> {
  return spec;
}

export function parseInput<S extends Schema>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = safeParse(schema, value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue && issue.path.length > 0 ? `${where}.${issue.path.join('.')}` : where;
  throw new SvcError('BAD_REQUEST', `Invalid ${at}: ${issue?.message ?? 'malformed'}.`.slice(0, 300));
}

export function mount(app: FastifyInstance, routes: readonly AnyRoute[], limits?: IpLimits): void {
  for (const spec of routes) {
    // A route with a preHandler has its inputs checked before it, and kept for the handler; any
    // other route (POST /verify among them) checks them in the handler, with no lookup.
    const preHandler = spec.preHandler;
    const checked = preHandler ? new WeakMap<FastifyRequest, Inputs>() : null;
    app.route({
      method: spec.method,
      url: spec.url,
      ...(preHandler
        ? {
            preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
              checked?.set(request, checkInputs(spec, request));
              await preHandler.call(app, request, reply);
            },
          }
        : {}),
      handler: async (request, reply) => {
        const costly = async (): Promise<void> => {
          const wait = limits ? await limits.costly(request) : null;
          if (wait !== null)
            throw new SvcError('RATE_LIMITED', `Too many costly requests from ${request.ip}; retry in ${wait} s.`, {
              retryAfter: wait,
            });
        };
        if (spec.costly) await costly();
        const inputs = checked?.get(request) ?? checkInputs(spec, request);
        const out = await spec.handler({ ...inputs, request, reply, costly });
        return reply.sent ? reply : out;
      },
    });
  }
}

interface Inputs {
  params: unknown;
  query: unknown;
  body: unknown;
}

/** The route's inputs, each parsed with its schema (BAD_REQUEST naming what is wrong). */
function checkInputs(spec: AnyRoute, raw: Inputs): Inputs {
  const params: unknown = spec.params ? parseInput(spec.params, raw.params, 'path') : undefined;
  const query: unknown = spec.query ? parseInput(spec.query, raw.query, 'query') : undefined;
  const schema = spec.body as Schema | undefined;
  const unchecked = !schema || spec.selfValidated || (spec.bodyOptional && raw.body == null);
  const body: unknown = unchecked ? raw.body : parseInput(schema, raw.body, 'body');
  return { params, query, body };
}

/** The route's inputs checked against its schemas, then its handler: over HTTP (mount) and in process (in-process/post.ts). */
export async function runRoute(
  spec: AnyRoute,
  raw: Inputs,
  ctx: Pick<RouteContext<unknown, unknown, unknown>, 'request' | 'reply' | 'costly'>,
): Promise<unknown> {
  return await spec.handler({ ...checkInputs(spec, raw), ...ctx });
}
