// The entry points the HTTP fuzz suites cover: every route of the facilitator's route table that
// declares a body or a query schema (so a route added later is fuzzed without new code), plus
// POST /mcp and the local ledger's POST /ledger/faucet, POST /ledger/tx and GET /ledger/events.
// Inputs are shaped by each route's own zod schemas (z.toJSONSchema), with harness values mixed in;
// a few entry points also get hand-written near-valid generators (real signed vouchers and txs).
import fc from 'fast-check';
import { z } from 'zod';
import {
  LedgerEventsQuerySchema,
  LedgerFaucetRequestSchema,
  SignedLedgerTxSchema,
  signLedgerTx,
  randomKeypair,
} from '@svc/core';
import { DEFAULT_OPS } from '@svc/ledger';
import { MCP_TOOLS } from '../../src/http/mcp/tools.js';
import { mcpRoutes } from '../../src/http/mcp/routes.js';
import type { AnyRoute } from '../../src/http/route.js';
import {
  DEEP,
  bodyArb,
  contentTypeArb,
  nastyJson,
  nastyNumber,
  nastyString,
  queryArb,
  segmentArb,
  shaped,
} from './arbitraries.js';
import type { Body, JsonSchema, Pool } from './arbitraries.js';
import type { Entry, FuzzRequest } from './http-fuzz.js';
import type { FuzzBuyer, World } from './world.js';

/** What an entry point accepts; a route of the table is one. */
interface Shape {
  method: string;
  url: string;
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  headers?: readonly { name: string }[];
}

interface Extras {
  /** Near-valid bodies beside the schema-shaped ones. */
  body?: fc.Arbitrary<unknown>;
  /** Headers every request gets (before the generated ones). */
  headers?: fc.Arbitrary<Record<string, string>>;
  jsonRpc?: boolean;
}

export function entriesOf(w: World): Entry[] {
  const table = w.h.f.routes
    .filter((r: AnyRoute) => r.body !== undefined || r.query !== undefined)
    .map((r: AnyRoute) => entryOf(w.pool, r, extrasFor(w, r)));
  const mcp = mcpRoutes(w.h.f.services).find((r) => r.method === 'POST')!;
  return [
    ...table,
    entryOf(w.pool, mcp, { body: jsonRpcArb(w), headers: mcpHeaders, jsonRpc: true }),
    entryOf(w.pool, { method: 'POST', url: '/ledger/faucet', body: LedgerFaucetRequestSchema }, {}),
    entryOf(w.pool, { method: 'POST', url: '/ledger/tx', body: SignedLedgerTxSchema }, { body: signedTxArb(w) }),
    entryOf(w.pool, { method: 'GET', url: '/ledger/events', query: LedgerEventsQuerySchema }, {}),
  ];
}

export function nameOf(shape: Pick<Shape, 'method' | 'url'>): string {
  return `${shape.method} ${shape.url}`;
}

function extrasFor(w: World, r: AnyRoute): Extras {
  switch (nameOf(r)) {
    case 'POST /verify':
      return { body: verifyArb(w, w.buyers.verify) };
    case 'POST /settle':
      return { body: verifyArb(w, w.buyers.settle) };
    case 'POST /channels/:id/voucher':
      return { body: voucherArb(w.buyers.voucher) };
    default:
      return {};
  }
}

function entryOf(pool: Pool, shape: Shape, extras: Extras): Entry {
  const path = pathArb(pool, shape);
  const query = shape.query
    ? queryArb(shaped(jsonSchemaOf(shape.query), pool)).map((q) => (q === '' ? '' : `?${q}`))
    : fc.constantFrom('', '', '', '?', '?x=1', '?__proto__=1');
  const body: fc.Arbitrary<Body> = shape.body ? bodyArb(bodyValueArb(pool, shape.body, extras.body)) : fc.constant({});
  const declared = headersArb(pool, shape.headers ?? []);
  const fixed = extras.headers ?? fc.constant({});
  const contentType = shape.body ? contentTypeArb : fc.constant(null);
  const arb = fc.tuple(path, query, body, contentType, fixed, declared).map(([p, q, b, ct, f, d]): FuzzRequest => {
    const headers: Record<string, string> = { ...f, ...d };
    if (ct !== null) headers['content-type'] = ct;
    return { method: shape.method, path: p + q, headers, ...b };
  });
  return { name: nameOf(shape), arb, ...(extras.jsonRpc ? { jsonRpc: true } : {}) };
}

function bodyValueArb(pool: Pool, schema: z.ZodType, extra: fc.Arbitrary<unknown> | undefined): fc.Arbitrary<unknown> {
  const generic = shaped(jsonSchemaOf(schema), pool);
  const value = extra ? fc.oneof({ arbitrary: generic, weight: 1 }, { arbitrary: extra, weight: 2 }) : generic;
  return value;
}

/** The route's URL with every `:param` filled: real values for it, schema-shaped and nasty ones. */
function pathArb(pool: Pool, shape: Shape): fc.Arbitrary<string> {
  const names = [...shape.url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
  if (names.length === 0) return fc.constant(shape.url);
  const schema = shape.params ? jsonSchemaOf(shape.params) : {};
  const collection = shape.url.split('/')[1] ?? '';
  const segments = names.map((name) =>
    segmentArb(
      shaped(schema.properties?.[name] ?? { type: 'string' }, pool, schema, name === 'id' ? `id@${collection}` : name),
    ),
  );
  return fc
    .tuple(...segments)
    .map((values) => values.reduce((url, v, i) => url.replace(`:${names[i]!}`, v), shape.url));
}

/** The headers a route declares, each present half of the time, with real and nasty values. */
function headersArb(pool: Pool, declared: readonly { name: string }[]): fc.Arbitrary<Record<string, string>> {
  const one = (name: string) => {
    const known = pool.valuesFor(name.toLowerCase());
    const value = fc.oneof(
      nastyString,
      ...(known.length > 0 ? [fc.constantFrom(...known)] : []),
      fc.stringMatching(/^[A-Za-z0-9_.:-]{1,130}$/),
    );
    return fc.option(value.map(headerSafe), { nil: undefined }).map((v) => [name.toLowerCase(), v] as const);
  };
  return fc
    .tuple(...declared.map((h) => one(h.name)))
    .map((pairs) => Object.fromEntries(pairs.filter((p): p is readonly [string, string] => p[1] !== undefined)));
}

/** What Node's client can put in a header: Latin-1 without control characters, bounded. */
export function headerSafe(value: string): string {
  return (
    Buffer.from(value, 'utf8')
      .toString('latin1')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '?')
      .slice(0, 2000)
  );
}

export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  } catch {
    return {};
  }
}

// ---- hand-written near-valid generators --------------------------------------------------------

const SKIP = Symbol('skip');
type Patch = [path: string[], value: unknown];

function patch<T>(path: string[], value: fc.Arbitrary<T>): fc.Arbitrary<Patch> {
  return value.map((v) => [path, v]);
}

function apply(target: Record<string, unknown>, [path, value]: Patch): void {
  let node: Record<string, unknown> = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) return;
    node = next as Record<string, unknown>;
  }
  const last = path.at(-1)!;
  if (value === SKIP) delete node[last];
  else node[last] = value;
}

const bazaarArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant({
    bazaar: {
      info: {
        input: { type: 'http', method: 'GET', body: DEEP },
        output: { type: 'json', mimeType: 'application/json' },
      },
      schema: {},
    },
  }),
  fc.constant({
    bazaar: {
      info: {
        input: { type: 'http', method: 'POST' },
        output: { type: 'json', mimeType: 'application/json', example: DEEP },
      },
      schema: {},
    },
  }),
  fc.constant({
    bazaar: {
      info: { input: { type: 'http', method: 'GET' }, output: { type: 'json', mimeType: 'application/json' } },
      schema: { deep: DEEP },
    },
  }),
  fc.record({
    bazaar: fc.record({
      info: fc.record({
        input: fc.record({
          type: fc.constant('http'),
          method: nastyString,
          queryParams: fc.dictionary(nastyString, nastyString, { maxKeys: 3 }),
        }),
        output: fc.record({ type: nastyString, mimeType: nastyString, example: nastyJson }),
      }),
      schema: fc.dictionary(nastyString, nastyJson, { maxKeys: 3 }),
    }),
  }),
  nastyJson,
);

/** A VerifyRequest around a fresh voucher of `buyer` (signed when generated), with 0–2 patches. */
function verifyArb(w: World, buyer: FuzzBuyer): fc.Arbitrary<unknown> {
  const reqs = w.h.requirements();
  const any = <T>(known: readonly T[]): fc.Arbitrary<unknown> =>
    fc.oneof<fc.WeightedArbitrary<unknown>[]>(
      { arbitrary: fc.constantFrom(...known), weight: 3 },
      { arbitrary: nastyString, weight: 1 },
      { arbitrary: nastyJson, weight: 1 },
      { arbitrary: fc.constant(SKIP), weight: 1 },
    );
  const addresses = w.pool.valuesFor('address');
  const amounts = [
    '0',
    '1',
    '4999',
    '5000',
    '5001',
    '50000000000',
    '170141183460469231731687303715884105727',
    '170141183460469231731687303715884105728',
  ];
  const patches: fc.Arbitrary<Patch>[] = [
    patch(['paymentPayload', 'payload', 'channelId'], any(w.pool.valuesFor('channelId'))),
    patch(['paymentPayload', 'payload', 'cumulative'], any(amounts)),
    patch(['paymentPayload', 'payload', 'signature'], any(['0'.repeat(128), 'F'.repeat(128), `01${'0'.repeat(126)}`])),
    patch(['paymentPayload', 'accepted', 'network'], any(w.pool.valuesFor('network'))),
    patch(['paymentPayload', 'accepted', 'scheme'], any(['exact', 'CHANNEL'])),
    patch(['paymentPayload', 'x402Version'], any([1, 3, '2', 2.5])),
    patch(
      ['paymentPayload', 'resource'],
      any([
        { url: 'ftp://x' },
        { url: 'x'.repeat(3000) },
        { url: `${w.h.url}/a#b`, description: '\u0000\u001f', mimeType: 'x'.repeat(200) },
      ]),
    ),
    patch(['paymentPayload', 'extensions'], bazaarArb),
    patch(['paymentRequirements', 'payTo'], any(addresses)),
    patch(['paymentRequirements', 'asset'], any(addresses)),
    patch(['paymentRequirements', 'amount'], any(amounts)),
    patch(['paymentRequirements', 'unit'], any(['token', 'second', 'request'])),
    patch(['paymentRequirements', 'network'], any(w.pool.valuesFor('network'))),
    patch(['paymentRequirements', 'maxTimeoutSeconds'], any([0, 1, 86_400, 86_401, -1, 1.5])),
    patch(['paymentRequirements', 'extra', 'channelContract'], any(addresses)),
    patch(['paymentRequirements', 'extra', 'sliceAmount'], any(amounts)),
    patch(['paymentRequirements', 'extra', 'sliceTokens'], any([1, 50, 1_000_000, 1_000_001])),
    patch(['paymentRequirements', 'extra', 'facilitator'], any(w.pool.valuesFor('facilitator'))),
    patch(['method'], any(['GET', 'POST', 'get', 'A'.repeat(17)])),
    patch(['requestHash'], any([null, 'a'.repeat(64), 'A'.repeat(64)])),
    patch(['x402Version'], any([1, 2, 3])),
  ];
  const form = fc.constantFrom('v2', 'v2', 'v2', 'v2', 'flat', 'flat-v1');
  return fc.tuple(form, fc.array(fc.oneof(...patches), { maxLength: 2 }), fc.nat(1_000_000)).map(([shape, ps, n]) => {
    const payload = buyer.next();
    const requirements = structuredClone(reqs) as unknown as Record<string, unknown>;
    const paymentPayload: Record<string, unknown> =
      shape === 'v2'
        ? {
            x402Version: 2,
            accepted: structuredClone(reqs),
            payload,
            resource: { url: `${w.h.url}/fuzz/${n % 50}`, description: 'fuzz' },
          }
        : { x402Version: shape === 'flat' ? 2 : 1, scheme: 'channel', network: reqs.network, payload };
    const body: Record<string, unknown> = {
      x402Version: 2,
      paymentPayload,
      paymentRequirements: requirements,
      method: 'GET',
    };
    for (const p of ps) apply(body, p);
    return body;
  });
}

/** A slice voucher for a real channel: a fresh cumulative or a boundary one, correctly signed. */
function voucherArb(buyer: FuzzBuyer): fc.Arbitrary<unknown> {
  const boundary = fc.constantFrom(
    0n,
    1n,
    5000n,
    50_000_000_000n,
    50_000_000_001n,
    (1n << 64n) - 1n,
    (1n << 127n) - 1n,
  );
  return fc
    .tuple(
      fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: boundary, weight: 1 }),
      fc.option(fc.stringMatching(/^[0-9a-f]{32}$/), { nil: undefined }),
    )
    .map(([fixed, streamId]) => {
      const fresh = buyer.next();
      const cumulative = fixed === null ? fresh.cumulative : fixed.toString();
      const signature = fixed === null ? fresh.signature : buyer.signAny(buyer.channelId, fixed);
      return { cumulative, signature, ...(streamId ? { streamId } : {}) };
    });
}

/** A transaction correctly signed by a fresh source (seq 1), its args shaped by the op's own schema. */
function signedTxArb(w: World): fc.Arbitrary<unknown> {
  const ops = [...DEFAULT_OPS.entries()].map(([name, def]) =>
    shaped(jsonSchemaOf(def.args), w.pool).map((args) => [name, args] as const),
  );
  return fc.tuple(fc.oneof(...ops), fc.constantFrom(1, 1, 1, 0, 2, 2 ** 53)).map(([[op, args], seq]) => {
    const source = randomKeypair();
    const a =
      typeof args === 'object' && args !== null && !Array.isArray(args)
        ? (args as Record<string, unknown>)
        : { value: args };
    try {
      return signLedgerTx(source, w.passphrase, { source: source.address, seq, op, args: a });
    } catch {
      // RFC 8785 cannot encode the args (NaN, Infinity): sent unsigned.
      return { source: source.address, seq, op, args: a, signature: '0'.repeat(128) };
    }
  });
}

const mcpHeaders: fc.Arbitrary<Record<string, string>> = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constant('application/json, text/event-stream'), weight: 8 },
      { arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', '', 'text/html'), weight: 1 },
    ),
    fc.option(fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', 'x'), { nil: undefined }),
  )
  .map(([accept, version]) => ({ accept, ...(version ? { 'mcp-protocol-version': version } : {}) }));

/** JSON-RPC messages for the MCP server: initialize, lists, tool calls with real and nasty arguments. */
function jsonRpcArb(w: World): fc.Arbitrary<unknown> {
  const arg = fc.oneof(fc.constantFrom(...w.pool.all), nastyString, nastyNumber, nastyJson);
  const toolCall = fc.record({
    name: fc.oneof({ arbitrary: fc.constantFrom(...MCP_TOOLS), weight: 4 }, { arbitrary: nastyString, weight: 1 }),
    arguments: fc.oneof(
      fc.record({ channelId: arg }, { requiredKeys: [] }),
      fc.record({ address: arg }, { requiredKeys: [] }),
      fc.record({ payTo: arg, limit: arg, offset: arg }, { requiredKeys: [] }),
      nastyJson,
    ),
  });
  const initialize = fc.record({
    protocolVersion: fc.constantFrom('2025-06-18', '2025-03-26', 'x'),
    capabilities: fc.constant({}),
    clientInfo: fc.record({ name: nastyString, version: nastyString }),
  });
  const message = fc.record(
    {
      jsonrpc: fc.oneof({ arbitrary: fc.constant('2.0'), weight: 9 }, { arbitrary: nastyJson, weight: 1 }),
      id: fc.oneof(fc.integer(), nastyString, fc.constant(null), nastyNumber),
      method: fc.oneof(
        fc.constantFrom(
          'tools/call',
          'tools/call',
          'tools/list',
          'initialize',
          'ping',
          'notifications/initialized',
          'resources/list',
          'prompts/get',
          'logging/setLevel',
          'completion/complete',
        ),
        nastyString,
      ),
      params: fc.oneof(toolCall, initialize, fc.dictionary(nastyString, nastyJson, { maxKeys: 3 })),
      result: nastyJson,
      error: fc.record({ code: nastyNumber, message: nastyString }),
    },
    { requiredKeys: ['jsonrpc', 'method'] },
  );
  return fc.oneof(
    { arbitrary: message, weight: 6 },
    { arbitrary: fc.array(message, { minLength: 0, maxLength: 3 }), weight: 1 },
  );
}
