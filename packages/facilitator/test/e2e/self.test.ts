// Self-description: GET /openapi.json validates as OpenAPI 3.1 with a third-party validator, lists
// every route the server registered (and no other), and describes what the routes really answer;
// GET /llms.txt is generated from the live configuration.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const VECTOR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../core/test/fixtures/voucher-vector.json',
);

// Non-default prices: what llms.txt and the document show must come from this configuration.
const PRICES = {
  PRICE_BOOK_PER_REQUEST: '7300',
  PRICE_TICKER_PER_SECOND: '1700',
  TICKER_SLICE_SECONDS: '4',
  PRICE_CHAT_PER_TOKEN: '230',
  CHAT_SLICE_TOKENS: '30',
};

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};
type Operation = {
  operationId: string;
  summary: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
};

/**
 * `METHOD /path` of every route Fastify registered, from its route tree (printRoutes). HEAD
 * (added by Fastify for each GET) and OPTIONS (the CORS preflight `*`) are left out.
 */
function registeredRoutes(app: FastifyInstance): string[] {
  const out: string[] = [];
  const byDepth: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const full = (depth > 0 ? byDepth[depth - 1]! : '') + m[2]!;
    byDepth[depth] = full;
    for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD' && x !== 'OPTIONS'))
      out.push(`${method} ${full}`);
  }
  return out.sort();
}

/**
 * A validator for one of the document's schemas (JSON Schema 2020-12 as zod writes it, whose
 * keywords read the same in the draft-07 ajv of the MCP SDK), with the components its $refs name.
 */
function validatorFor(schema: Record<string, unknown> | undefined, doc: Doc) {
  return new AjvJsonSchemaValidator().getValidator({ ...schema, components: doc.components } as JsonSchemaType);
}

function documentedRoutes(doc: Doc): string[] {
  return Object.entries(doc.paths)
    .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{([^}]+)\}/g, ':$1')}`))
    .sort();
}

describe('GET /openapi.json', () => {
  let h: Harness;
  let doc: Doc;
  beforeAll(async () => {
    h = await startHarness(PRICES);
    const res = await fetch(`${h.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await res.json()) as Doc;
  });
  afterAll(() => h.close());

  /** Checks a real answer against the document's schema for that path, method and status. */
  const conforms = (pathKey: string, status: number, body: unknown, method = 'get') => {
    const schema = doc.paths[pathKey]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
    expect(schema, `${method} ${pathKey} ${status} has a JSON schema`).toBeDefined();
    const result = validatorFor(schema, doc)(body);
    expect(result.errorMessage).toBeUndefined();
    expect(result.valid).toBe(true);
  };

  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('lists exactly the routes the server registered: the table, /mcp, the demo seller and /ledger', () => {
    const registered = registeredRoutes(h.f.app);
    expect(registered.length).toBeGreaterThan(35);
    expect(registered).toEqual(
      expect.arrayContaining([
        'GET /channels/:id',
        'POST /mcp',
        'GET /mcp',
        'DELETE /mcp',
        'GET /demo/book',
        'POST /demo/chat',
        'POST /ledger/tx',
        'GET /openapi.json',
        'GET /llms.txt',
      ]),
    );
    expect(documentedRoutes(doc)).toEqual(registered);
  });

  it('declares the shared wire types once, as components referenced by the paths', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names).toEqual(
      expect.arrayContaining([
        'Error',
        'PaymentRequirements',
        'PaymentRequired',
        'Receipt',
        'PaymentResponse',
        'Channel',
        'Supported',
        'VerifyRequest',
        'Account',
        'Stats',
      ]),
    );
    const channel = doc.paths['/channels/{id}']!['get']!;
    expect(channel.responses['200']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/Channel',
    });
    expect(channel.responses['404']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
    expect(channel.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    expect(doc.paths['/verify']!['post']!).toMatchObject({
      requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/VerifyRequest' } } } },
    });
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes the query parameters one by one, with their defaults', () => {
    const revenue = doc.paths['/sellers/{payTo}/revenue']!['get']!;
    expect(revenue.parameters).toEqual([
      expect.objectContaining({ name: 'payTo', in: 'path', required: true }),
      expect.objectContaining({
        name: 'bucket',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ enum: ['hour', 'day'], default: 'day' }),
      }),
      expect.objectContaining({
        name: 'days',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ default: '30' }),
      }),
    ]);
  });

  it('describes the demo seller with its live price and its 402', () => {
    const book = doc.paths['/demo/book']!['get']!;
    expect(book.summary).toContain('7300 base units per request');
    expect(book.responses['402']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/PaymentRequired',
    });
    expect(doc.paths['/demo/ticker/stream']!['get']!.summary).toContain('paid 4 seconds (6800 base units) per voucher');
  });

  it('matches what the routes really answer: channel, account, stats, supported, health, receipts, discovery, errors', async () => {
    const b = await h.buyer();
    // As the seller's middleware (its token), so the resource is listed in discovery.
    const paid = await h.verify(b.signer.next(5000n), h.requirements(), {
      authorization: `Bearer ${h.sellerToken(b.payee)}`,
    });
    expect(paid.body['isValid']).toBe(true);
    await h.f.services.catalog.flush(); // the catalog is written every second
    const get = async (p: string) => {
      const res = await fetch(`${h.url}${p}`);
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const cases: [string, string, number][] = [
      [`/channels/${b.channelId}`, '/channels/{id}', 200],
      ['/channels', '/channels', 200],
      [`/accounts/${b.keys.address}`, '/accounts/{address}', 200],
      [`/accounts/${b.keys.address}/ledger`, '/accounts/{address}/ledger', 200],
      ['/stats', '/stats', 200],
      ['/supported', '/supported', 200],
      ['/health', '/health', 200],
      ['/receipts', '/receipts', 200],
      ['/discovery/resources', '/discovery/resources', 200],
      ['/channels/99999999', '/channels/{id}', 404],
      ['/accounts/nope', '/accounts/{address}', 400],
    ];
    for (const [url, key, status] of cases) {
      const answer = await get(url);
      expect(answer.status, url).toBe(status);
      conforms(key, status, answer.body);
    }
    const channel = (await get(`/channels/${b.channelId}`)).body as { lastAccepted: string };
    expect(channel.lastAccepted).toBe('5000');
    const catalog = (await get('/discovery/resources')).body as { items: unknown[] };
    expect(catalog.items.length).toBeGreaterThan(0);
    const unpaid = await fetch(`${h.url}/demo/book`);
    expect(unpaid.status).toBe(402);
    conforms('/demo/book', 402, await unpaid.json());
  });

  it('would catch a document that does not describe the answer', () => {
    // The check above is not vacuous: a channel missing a required field fails it.
    const schema = doc.paths['/channels/{id}']!['get']!.responses['200']!.content!['application/json']!.schema;
    expect(validatorFor(schema, doc)({ id: '1' }).valid).toBe(false);
  });
});

describe('GET /llms.txt', () => {
  let h: Harness;
  let text: string;
  beforeAll(async () => {
    h = await startHarness(PRICES);
    const res = await fetch(`${h.url}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    text = await res.text();
  });
  afterAll(() => h.close());

  it('shows the live demo prices from configuration, with slices and minimum deposits', () => {
    expect(text).toContain(
      `GET ${h.url}/demo/book: 7300 base units (0.0007300 USDC) per request; minimum deposit 7300000 base units`,
    );
    expect(text).toContain(
      `GET ${h.url}/demo/ticker/stream: 1700 base units (0.0001700 USDC) per second, 4 seconds per voucher = 6800 base units`,
    );
    expect(text).toContain(
      `POST ${h.url}/demo/chat: 230 base units (0.0000230 USDC) per token, 30 tokens per voucher = 6900 base units`,
    );
    expect(text).not.toContain('5000 base units (0.0005000 USDC) per request');
    expect(text).toContain('cumulative 7300 (the bytes above)');
  });

  it('carries the voucher test vector of docs/protocol.md#voucher, byte for byte', () => {
    const vector = JSON.parse(fs.readFileSync(VECTOR, 'utf8')) as { expected: Record<string, string> };
    for (const value of Object.values(vector.expected)) expect(text).toContain(value);
    expect(text).toContain('"svc:voucher:v1"');
  });

  it('names the network, asset, contracts and receipt signer of this facilitator', async () => {
    const info = await h.ledger.info();
    for (const value of [
      info.passphrase,
      info.contracts.asset,
      info.contracts.channel,
      h.f.address,
      `${h.url}/openapi.json`,
    ])
      expect(text).toContain(value);
  });

  it('lists every route of the OpenAPI document, with its summary', async () => {
    const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as Doc;
    const lines = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `- ${m.toUpperCase()} ${p}: `),
    );
    expect(lines.length).toBeGreaterThan(35);
    for (const line of lines) expect(text).toContain(line);
  });

  it('includes the payment header, errors, limits and an example flow', () => {
    for (const heading of [
      '## batch-settlement and channel',
      '## The channel scheme',
      '## Voucher bytes',
      '## Payment header',
      '## Errors',
      '## Limits',
      '## Endpoints',
      '## Example flow',
    ])
      expect(text).toContain(heading);
    expect(text).toContain('PAYMENT-SIGNATURE');
    expect(text).toContain('`batch-settlement` is x402’s standard scheme');
    expect(text).toContain('`channel` is the svc specification’s name for its subset');
    expect(text).toContain('every 402 offers `channel` first, then `batch-settlement`');
    expect(text).toContain('- 402: PAYMENT_REQUIRED, CHANNEL_NOT_FOUND');
    expect(text).toContain('Vouchers per channel: 1200 per minute');
    expect(text).toContain('curl -i $BASE/demo/book');
  });
});

describe('llms.txt without the demo seller', () => {
  it('says the demo is off and lists no demo route', async () => {
    const h = await startHarness({ DEMO: '0' });
    try {
      const text = await (await fetch(`${h.url}/llms.txt`)).text();
      expect(text).toContain('The demo seller is off');
      expect(text).not.toContain('/demo/book');
      const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as Doc;
      expect(Object.keys(doc.paths).filter((p) => p.startsWith('/demo'))).toEqual([]);
      expect(documentedRoutes(doc)).toEqual(registeredRoutes(h.f.app));
    } finally {
      await h.close();
    }
  });
});
