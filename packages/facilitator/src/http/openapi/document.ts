// The OpenAPI 3.1 document, generated from the route declarations and their zod schemas — the
// same ones the routes validate with (docs/architecture.md#one-source-for-wire-shapes), never written by hand.
//
//   const doc = openApiDocument({ routes, serverUrl: 'http://127.0.0.1:4020', description });
import { ErrorBodySchema } from '@svc/core';
import type { z } from 'zod';
import pkg from '../../../package.json' with { type: 'json' };
import { SchemaSet } from './schemas.js';
import type { Io, JsonSchema } from './schemas.js';

export const OPENAPI_VERSION = '3.1.1';

/** The credentials an operation may take, as OpenAPI security schemes. */
export const SECURITY_SCHEMES = {
  sellerToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svcs1 seller token',
    description:
      'A seller token (POST /sellers/{payTo}/token, or `svc seller token`): proves the payee’s side — its middleware.',
  },
  attestToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The attestToken POST /verify gave the payee’s side for one receipt.',
  },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The metrics token (METRICS_TOKEN), set by the facilitator’s operator for its scraper.',
  },
  demoKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-demo-key',
    description: 'The demo control key (DEMO_CONTROL_KEY), when the facilitator sets one.',
  },
} as const;
export type SecurityScheme = keyof typeof SECURITY_SCHEMES;

/** Who may call an operation: anyone (none), or the holder of a credential, required or optional. */
export interface RouteAuth {
  scheme: SecurityScheme;
  optional?: boolean;
}
export const SERVICE_VERSION = pkg.version;
const JSON_TYPE = 'application/json';

/** What the document needs of a route: a route of the table, or one mounted outside it. */
export interface RouteDoc {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: z.ZodType | undefined;
  query?: z.ZodType | undefined;
  body?: z.ZodType | undefined;
  /** Request headers the route reads (credentials are `auth`, not headers). */
  headers?: readonly { name: string; description: string; required?: boolean }[];
  /** The credential the route takes; none when absent. */
  auth?: RouteAuth | undefined;
  /** The body may be left out (a JSON body is then optional). */
  bodyOptional?: boolean;
  /** Not subject to the general per-address rate limit (GET /events, GET /health). */
  unlimited?: boolean;
  /** `io: 'input'` for a reply written in a schema's wire (input) form, e.g. amounts a parser turns into bigint. */
  responses: Record<
    number,
    { description: string; schema?: z.ZodType; contentType?: string; headers?: Record<string, string>; io?: Io }
  >;
}

export interface OpenApiOptions {
  routes: readonly RouteDoc[];
  serverUrl: string;
  description: string;
  tags?: Record<string, string>;
}

type Deferred = () => JsonSchema;

/** `/channels/:id` → `/channels/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function openApiDocument(options: OpenApiOptions): JsonSchema {
  const set = new SchemaSet();
  const error = set.add(ErrorBodySchema, 'output');
  const operations = options.routes.map((route) => ({ route, build: prepareOperation(route, set, error) }));
  const components = set.build();
  const paths: Record<string, Record<string, unknown>> = {};
  const ids = new Set<string>();
  for (const { route, build } of operations) {
    const path = openApiPath(route.url);
    const operation = build(components);
    operation['operationId'] = uniqueId(operationId(route), ids);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  const tagNames = [...new Set(options.routes.flatMap((r) => r.tags))];
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'svc facilitator',
      version: SERVICE_VERSION,
      description: options.description,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: options.serverUrl }],
    tags: tagNames.map((name) => ({ name, ...(options.tags?.[name] ? { description: options.tags[name] } : {}) })),
    paths,
    components: { schemas: components, securitySchemes: SECURITY_SCHEMES },
  };
}

/** Registers the route's schemas now; returns the builder of its operation, run after the set is built. */
function prepareOperation(
  route: RouteDoc,
  set: SchemaSet,
  error: Deferred,
): (components: Record<string, JsonSchema>) => Record<string, unknown> {
  const params = route.params ? set.add(route.params, 'input') : null;
  const query = route.query ? set.add(route.query, 'input') : null;
  const body = route.body ? set.add(route.body, 'input') : null;
  const responses = Object.entries(route.responses).map(([status, r]) => ({
    status,
    r,
    schema: r.schema ? set.add(r.schema, r.io ?? 'output') : null,
  }));
  return (components) => {
    const parameters = [
      ...(params ? parameterList(params(), 'path', components) : []),
      ...(query ? parameterList(query(), 'query', components) : []),
      ...(route.headers ?? []).map((h) => ({
        name: h.name,
        in: 'header',
        required: h.required ?? false,
        description: h.description,
        schema: { type: 'string' },
      })),
    ];
    const out: Record<string, unknown> = {};
    for (const { status, r, schema } of responses) out[status] = response(r, schema);
    // Invalid input is refused before the handler runs, whether or not the route lists it.
    if ((params || query || body) && out['400'] === undefined)
      out['400'] = response({ description: 'Invalid path, query or body (BAD_REQUEST)' }, error);
    // Every route but the exempt ones counts against the general per-address limit.
    if (!route.unlimited && out['429'] === undefined)
      out['429'] = response({ description: 'Too many requests from this address (RATE_LIMITED)' }, error);
    for (const status of ['429', '503'])
      if (out[status]) out[status] = withRetryAfter(out[status] as Record<string, unknown>);
    out['default'] = response(
      { description: 'Any other failure: the error body of docs/protocol.md#errors with the status of its code' },
      error,
    );
    return {
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: !route.bodyOptional, content: { [JSON_TYPE]: { schema: body() } } } } : {}),
      security: securityOf(route.auth),
      responses: out,
    };
  };
}

/** [] for a public operation; the scheme, or (optional) no credential or the scheme. */
function securityOf(auth: RouteAuth | undefined): Record<string, string[]>[] {
  if (!auth) return [];
  return auth.optional ? [{}, { [auth.scheme]: [] }] : [{ [auth.scheme]: [] }];
}

function withRetryAfter(r: Record<string, unknown>): Record<string, unknown> {
  const headers = (r['headers'] ?? {}) as Record<string, unknown>;
  return {
    ...r,
    headers: {
      ...headers,
      'Retry-After': {
        description: 'Whole seconds to wait before retrying.',
        schema: { type: 'string', pattern: '^[0-9]+$' },
      },
    },
  };
}

function response(
  r: { description: string; contentType?: string; headers?: Record<string, string> },
  schema: Deferred | null,
): Record<string, unknown> {
  const type = r.contentType ?? JSON_TYPE;
  const content = schema || r.contentType ? { [type]: schema ? { schema: schema() } : {} } : undefined;
  const headers = r.headers
    ? Object.fromEntries(
        Object.entries(r.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
      )
    : undefined;
  return { description: r.description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) };
}

/** An object schema's properties as OpenAPI parameters (path parameters are always required). */
function parameterList(
  json: JsonSchema,
  where: 'path' | 'query',
  components: Record<string, JsonSchema>,
): Record<string, unknown>[] {
  const ref = json['$ref'];
  const object = typeof ref === 'string' ? (components[ref.split('/').pop() ?? ''] ?? {}) : json;
  const required = new Set((object['required'] as string[] | undefined) ?? []);
  const properties = (object['properties'] ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(typeof schema['description'] === 'string' ? { description: schema['description'] } : {}),
    schema,
  }));
}

/** GET /channels/:id/claim → getChannelsByIdClaim. */
function operationId(route: RouteDoc): string {
  const words = route.url
    .split(/[/.]/)
    .filter(Boolean)
    .map((part) =>
      part.startsWith(':')
        ? `By${capital(part.slice(1))}`
        : capital(part.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())),
    );
  return route.method.toLowerCase() + words.join('');
}

function uniqueId(id: string, taken: Set<string>): string {
  let candidate = id;
  for (let n = 2; taken.has(candidate); n++) candidate = `${id}${n}`;
  taken.add(candidate);
  return candidate;
}

function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
