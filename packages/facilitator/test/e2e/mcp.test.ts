// POST /mcp with the official MCP client: the six tools are listed with input and output schemas,
// and each tool's structured result is what the matching HTTP endpoint answers for the same data.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { payFetch } from '@svc/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const PRICES = {
  PRICE_BOOK_PER_REQUEST: '7300',
  PRICE_TICKER_PER_SECOND: '1700',
  TICKER_SLICE_SECONDS: '4',
  PRICE_CHAT_PER_TOKEN: '230',
  CHAT_SLICE_TOKENS: '30',
};
const TOOLS = [
  'svc_get_account',
  'svc_get_channel',
  'svc_list_resources',
  'svc_price_list',
  'svc_stats',
  'svc_supported',
];

type ToolResult = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
};

describe('POST /mcp', () => {
  let h: Harness;
  let client: Client;
  let buyer: Buyer;

  const http = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${h.url}${path}`, init);
    return { status: res.status, headers: res.headers, body: (await res.json()) as unknown };
  };
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  const errorBody = (r: ToolResult) => JSON.parse(r.content[0]?.text ?? 'null') as unknown;

  /**
   * The tool's structured result equals the endpoint's JSON. Channel views count ledgers to
   * expiry and the ledger closes every second: compare within one ledger (the endpoint answers the
   * same before and after the call), retrying if a ledger closed in between.
   */
  const matches = async (name: string, args: Record<string, unknown>, path: string) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await http(path);
      const result = await call(name, args);
      const after = await http(path);
      if (JSON.stringify(before.body) !== JSON.stringify(after.body)) continue;
      expect(before.status).toBe(200);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual(before.body);
      expect(JSON.parse(result.content[0]?.text ?? 'null')).toEqual(before.body);
      return result.structuredContent!;
    }
    throw new Error(`${path} kept changing`);
  };

  beforeAll(async () => {
    h = await startHarness(PRICES);
    buyer = await h.buyer({ deposit: 50_000_000n });
    // One real paid request through the demo seller, so the catalog lists a resource.
    const paid = await payFetch(`${h.url}/demo/book`, {}, { signer: buyer.signer });
    expect(paid.status).toBe(200);
    await h.f.services.catalog.flush(); // the catalog is written every second
    client = new Client({ name: 'svc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await h.close();
  });

  it('lists exactly the six tools, each with an object input schema and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description).toBeTruthy();
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    const channel = tools.find((t) => t.name === 'svc_get_channel')!;
    expect(channel.inputSchema.required).toEqual(['channelId']);
    expect(Object.keys(channel.outputSchema?.properties ?? {})).toEqual(
      expect.arrayContaining(['deposit', 'lastAccepted', 'remaining', 'expiryLedger']),
    );
  });

  it('svc_get_channel is GET /channels/:id', async () => {
    const view = await matches(
      'svc_get_channel',
      { channelId: String(buyer.channelId) },
      `/channels/${buyer.channelId}`,
    );
    expect(view['lastAccepted']).toBe('7300');
  });

  it('svc_get_account is GET /accounts/:address', async () => {
    const account = await matches(
      'svc_get_account',
      { address: buyer.keys.address },
      `/accounts/${buyer.keys.address}`,
    );
    expect((account['channels'] as { id: string }[]).map((c) => c.id)).toEqual([String(buyer.channelId)]);
  });

  it('svc_stats is GET /stats', async () => {
    const stats = await matches('svc_stats', {}, '/stats');
    expect(stats['vouchersAccepted']).toBeGreaterThanOrEqual(1);
  });

  it('svc_supported is GET /supported', async () => {
    const supported = await matches('svc_supported', {}, '/supported');
    expect((supported['kinds'] as { scheme: string }[])[0]?.scheme).toBe('channel');
  });

  it('svc_list_resources is GET /discovery/resources, with the paid demo resource in it', async () => {
    const all = await matches('svc_list_resources', {}, '/discovery/resources');
    expect((all['items'] as { resource: string }[]).map((i) => i.resource)).toContain(`${h.url}/demo/book`);
    const page = await matches(
      'svc_list_resources',
      { payTo: h.f.demoPayTo, limit: 1, offset: 0 },
      `/discovery/resources?payTo=${h.f.demoPayTo}&limit=1&offset=0`,
    );
    expect(page['items']).toHaveLength(1);
  });

  it('svc_price_list gives the demo prices the demo’s 402s ask, and the catalog’s listed prices', async () => {
    const result = await call('svc_price_list');
    expect(result.isError).toBeFalsy();
    const list = result.structuredContent as {
      demo: Record<string, unknown>[];
      catalog: Record<string, unknown>[];
      catalogTotal: number;
    };
    const terms = async (path: string, method: string) => {
      const res = await http(path, { method });
      expect(res.status).toBe(402);
      return (res.body as { accepts: { amount: string; extra: Record<string, unknown> }[] }).accepts;
    };
    const offers = [
      await terms('/demo/book', 'GET'),
      await terms('/demo/summary', 'GET'),
      await terms('/demo/ticker/stream', 'GET'),
      await terms('/demo/chat', 'POST'),
    ];
    const [book, summary, ticker, chat] = offers.map((o) => o[0]!) as [
      (typeof offers)[0][0],
      (typeof offers)[0][0],
      (typeof offers)[0][0],
      (typeof offers)[0][0],
    ];
    // Each demo resource carries the options its 402 offers: `channel`, then `batch-settlement`.
    expect(list.demo.map((d) => d['accepts'])).toEqual(offers);
    for (const accepts of offers)
      expect(accepts.map((a) => (a as { scheme?: string }).scheme)).toEqual(['channel', 'batch-settlement']);
    expect(list.demo).toEqual([
      expect.objectContaining({
        path: '/demo/book',
        url: `${h.url}/demo/book`,
        unit: 'request',
        price: book.amount,
        slice: null,
        sliceAmount: null,
        minDeposit: book.extra['minDeposit'],
      }),
      expect.objectContaining({
        path: '/demo/summary',
        unit: 'request',
        price: summary.amount,
        slice: null,
        minDeposit: summary.extra['minDeposit'],
      }),
      expect.objectContaining({
        path: '/demo/ticker/stream',
        unit: 'second',
        price: ticker.amount,
        slice: ticker.extra['sliceSeconds'],
        sliceAmount: ticker.extra['sliceAmount'],
        minDeposit: ticker.extra['minDeposit'],
      }),
      expect.objectContaining({
        path: '/demo/chat',
        unit: 'token',
        price: chat.amount,
        slice: chat.extra['sliceTokens'],
        sliceAmount: chat.extra['sliceAmount'],
        minDeposit: chat.extra['minDeposit'],
      }),
    ]);
    // The summary's price is its most tokens (100) at the chat's per-token price.
    expect(summary.amount).toBe('23000');
    // Configuration, not defaults: 7300 per request, 4 s × 1700, 30 tokens × 230.
    expect([book.amount, ticker.extra['sliceAmount'], chat.extra['sliceAmount']]).toEqual(['7300', '6800', '6900']);
    const discovery = (await http('/discovery/resources')).body as {
      items: { resource: string; accepts: { scheme: string; amount: string; payTo: string }[] }[];
      pagination: { total: number };
    };
    expect(list.catalogTotal).toBe(discovery.pagination.total);
    expect(list.catalog.map((c) => [c['resource'], c['scheme'], c['payTo']])).toEqual(
      discovery.items.flatMap((i) => i.accepts.map((a) => [i.resource, a.scheme, a.payTo])),
    );
    // Both options of the paid book, `channel` first, at the same price per unit.
    expect(list.catalog.filter((c) => c['resource'] === `${h.url}/demo/book`)).toEqual([
      expect.objectContaining({ scheme: 'channel', amount: '7300', unit: 'request', payTo: h.f.demoPayTo }),
      expect.objectContaining({ scheme: 'batch-settlement', amount: '7300', unit: 'request', payTo: h.f.demoPayTo }),
    ]);
  });

  it('answers an unknown channel and a malformed address with a tool error carrying the endpoint’s error body', async () => {
    const unknown = await call('svc_get_channel', { channelId: '987654321' });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toBeUndefined();
    const http404 = await http('/channels/987654321');
    expect(http404.status).toBe(404);
    expect(errorBody(unknown)).toEqual(http404.body);
    expect(errorBody(unknown)).toMatchObject({ error: 'NOT_FOUND', source: 'facilitator' });

    const bad = await call('svc_get_account', { address: 'not-an-address' });
    expect(bad.isError).toBe(true);
    const http400 = await http('/accounts/not-an-address');
    expect(http400.status).toBe(400);
    expect(errorBody(bad)).toEqual(http400.body);
    expect(errorBody(bad)).toMatchObject({ error: 'BAD_REQUEST' });
  });

  it('keeps a path argument one segment: "../stats" and ".." are refused, not followed', async () => {
    for (const channelId of ['../stats', '..', '1/claim']) {
      const r = await call('svc_get_channel', { channelId });
      expect(r.isError, channelId).toBe(true);
      expect(errorBody(r), channelId).toMatchObject({ error: 'BAD_REQUEST' });
    }
  });

  it('refuses GET and DELETE /mcp with 405 and the error body (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await http('/mcp', { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.body).toMatchObject({ error: 'BAD_REQUEST', source: 'facilitator' });
    }
  });

  /** A raw POST /mcp, as a client that did initialize would send it. */
  const rpc = (body: string, headers: Record<string, string> = {}) =>
    http('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });

  it('answers in JSON-RPC, as the specification has it: -32700, -32600, -32602', async () => {
    const notJson = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(notJson).toMatchObject({ status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32700 } } });
    const noMethod = await rpc('{"jsonrpc":"2.0","id":1}');
    expect(noMethod).toMatchObject({ status: 400, body: { jsonrpc: '2.0', id: 1, error: { code: -32600 } } });
    const notRpc = await rpc(JSON.stringify({ hello: 'world' }));
    expect(notRpc).toMatchObject({ status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32600 } } });
    const unknownTool = await rpc(
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'svc_nothing', arguments: {} } }),
    );
    expect(unknownTool).toMatchObject({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32602, message: expect.stringMatching(/unknown tool "svc_nothing"/) },
      },
    });
    const noName = await rpc(
      JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { arguments: {} } }),
    );
    expect(noName).toMatchObject({ status: 200, body: { jsonrpc: '2.0', id: 8, error: { code: -32602 } } });
    // arguments that are not an object: bad params, said in one line, not an internal error.
    for (const args of [null, [], 'x', 3]) {
      const bad = await rpc(
        JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'svc_stats', arguments: args } }),
      );
      expect(bad, JSON.stringify(args)).toMatchObject({
        status: 200,
        body: { jsonrpc: '2.0', id: 9, error: { code: -32602, message: expect.stringMatching(/arguments/) } },
      });
      expect(JSON.stringify(bad.body)).not.toMatch(/invalid_type|"path"|\\n/);
    }
    // An id is a string or an integer (MCP): a fractional one is not echoed back as if it were.
    const fractional = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 0.5, method: 'tools/call', params: {} }));
    expect(fractional).toMatchObject({ status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32600 } } });
    // Another Content-Type: 415, still in JSON-RPC.
    const text = await rpc('{"jsonrpc":"2.0","id":1,"method":"ping"}', { 'content-type': 'text/plain' });
    expect(text).toMatchObject({ status: 415, body: { jsonrpc: '2.0', id: null, error: { code: -32000 } } });
    const notAType = await rpc('{"jsonrpc":"2.0","id":1,"method":"ping"}', { 'content-type': 'application/' });
    expect(notAType).toMatchObject({ status: 415, body: { jsonrpc: '2.0', id: null, error: { code: -32000 } } });
    expect(JSON.stringify(noName.body)).not.toMatch(/ZodError|"path"/);
    // The official client sees the protocol error as such.
    await expect(client.callTool({ name: 'svc_nothing', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('takes a batch only under a protocol version that has batches (before 2025-06-18)', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    const now = await rpc(batch, { 'mcp-protocol-version': '2025-11-25' });
    expect(now).toMatchObject({
      status: 400,
      body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/no batches/) } },
    });
    const before = await rpc(batch, { 'mcp-protocol-version': '2025-03-26' });
    expect(before.status).toBe(200);
    expect((before.body as { id: number }[]).map((m) => m.id).sort()).toEqual([1, 2]);
  });

  it('refuses a browser page of another origin with 403, and serves its own origin and loopback pages', async () => {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const evil = await rpc(ping, { origin: 'http://evil.example' });
    expect(evil).toMatchObject({ status: 403, body: { jsonrpc: '2.0', id: null, error: { code: -32000 } } });
    for (const origin of [new URL(h.url).origin, 'http://localhost:6274']) {
      expect((await rpc(ping, { origin })).status, origin).toBe(200);
    }
  });

  it('bounds tool inputs in their schemas, and takes a channel id as a number too', async () => {
    const { tools } = await client.listTools();
    const list = tools.find((t) => t.name === 'svc_list_resources')!;
    expect(list.inputSchema.properties?.['limit']).toMatchObject({ minimum: 1, maximum: 200 });
    expect(list.inputSchema.properties?.['offset']).toMatchObject({ minimum: 0 });
    const outOfBounds = await call('svc_list_resources', { limit: 500 });
    expect(outOfBounds.isError).toBe(true);
    // Channel ids are u64 (derived from the voucher key), most beyond a JSON number's integers:
    // a number is taken where it is exact, and read as the id it names.
    const byString = await call('svc_get_channel', { channelId: String(buyer.channelId) });
    expect(byString.isError).toBeFalsy();
    expect(byString.structuredContent).toMatchObject({ id: String(buyer.channelId) });
    const byNumber = await call('svc_get_channel', { channelId: 42 });
    expect(JSON.stringify(byNumber.content)).not.toMatch(/Input validation|-32602/);
    expect(JSON.stringify(byNumber.content)).toMatch(/Channel 42/);
  });
});
