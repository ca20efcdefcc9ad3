// Self-description: GET /openapi.json (generated from the route table and the schemas the routes
// validate with) and GET /llms.txt (generated from configuration and the same routes).
//
// Besides the table (the demo seller's routes among them), the documents list the routes mounted
// outside it from their own declarations — /mcp (its own scope) and the local ledger under /ledger
// (@svc/ledger's LEDGER_ROUTES) — each only if this server registered it (Fastify's hasRoute), so
// the documents describe exactly the server that answers.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { demoPrices } from '../../demo/prices.js';
import { llmsText } from './llms.js';
import { OPENAPI_VERSION, openApiDocument } from './document.js';
import type { RouteDoc } from './document.js';
import { LEDGER_PREFIX, ledgerRouteDocs } from './ledger.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import { mcpRoutes } from '../mcp/routes.js';
import type { McpDeps } from '../mcp/routes.js';
import type { Config } from '../../config.js';
import type { Keypair, SupportedResponse } from '@svc/core';
import type { LedgerInfo } from '@svc/ledger';

/** What this module uses of the domain. */
export interface SelfDeps extends McpDeps {
  config: Config;
  keys: Keypair;
  ledgerInfo: LedgerInfo;
  /** The facilitator's public base URL (PUBLIC_URL, or derived from the bound address). */
  publicUrl: () => string;
  /** Every signer whose receipts count here: this key's address first, then those a rotation retired. */
  receiptSigners: readonly string[];
  supported: () => SupportedResponse;
}

const TAGS = ['meta'];
const TAG_DESCRIPTIONS: Record<string, string> = {
  x402: 'The x402 facilitator endpoints: supported kinds, verify, settle.',
  channels: 'Payment channels as the facilitator sees them, and manual claims.',
  streams: 'Streaming sessions for token and second units, and slice vouchers.',
  accounts: 'Accounts and their audit ledger.',
  receipts: 'Receipts as issued, their checks and attestations.',
  events: 'The live event feed.',
  reports: 'Reports of on-chain transactions.',
  sellers: 'Seller revenue from the audit ledger.',
  meta: 'Health, totals and self-description.',
  mcp: 'The Model Context Protocol endpoint.',
  demo: 'The demo seller’s metered resources (per request, per second, per token).',
  ledger: 'The embedded local ledger (docs/protocol.md#the-local-ledger), present when it runs in-process.',
  console: 'The web console (a static page and its build files) that reads this API.',
  discovery: 'The catalog of paid resources (x402 discovery).',
  float: 'The credit pool, read-only: size, share price, credit lines and positions.',
};

const OpenApiDocumentSchema = z
  .looseObject({ openapi: z.literal(OPENAPI_VERSION), paths: z.record(z.string(), z.unknown()) })
  .meta({ description: 'An OpenAPI 3.1 document.' });

export function selfRoutes(deps: SelfDeps, allRoutes: () => readonly AnyRoute[]): AnyRoute[] {
  // Routes cannot change once the server is ready: the document is generated once, on first use.
  let openapi: Record<string, unknown> | null = null;
  return [
    defineRoute({
      method: 'GET',
      url: '/openapi.json',
      summary: 'This OpenAPI 3.1 document, generated from the route declarations and the schemas they validate with.',
      tags: TAGS,
      responses: { 200: { description: 'The OpenAPI document', schema: OpenApiDocumentSchema } },
      handler: ({ request }) =>
        (openapi ??= openApiDocument({
          routes: documentedRoutes(deps, allRoutes(), request.server),
          serverUrl: deps.publicUrl(),
          description: description(deps),
          tags: TAG_DESCRIPTIONS,
        })),
    }),
    defineRoute({
      method: 'GET',
      url: '/llms.txt',
      summary:
        'A plain-text guide for language models: the batch-settlement and channel schemes, voucher bytes, payment header, live prices, limits, endpoints, an example flow.',
      tags: TAGS,
      responses: { 200: { description: 'The guide', schema: z.string(), contentType: 'text/plain' } },
      handler: ({ request, reply }) => {
        void reply.type('text/plain; charset=utf-8');
        return llmsText({
          baseUrl: deps.publicUrl(),
          config: deps.config,
          ledger: deps.ledgerInfo,
          receiptSigner: deps.keys.address,
          retiredSigners: deps.receiptSigners.slice(1),
          routes: documentedRoutes(deps, allRoutes(), request.server),
          demo: request.server.hasRoute({ method: 'GET', url: '/demo/book' })
            ? demoPrices(deps.config, deps.supported())
            : [],
          ledgerServed: request.server.hasRoute({ method: 'GET', url: `${LEDGER_PREFIX}/info` }),
        });
      },
    }),
  ];
}

/** The route table, then the routes mounted outside it that this server has. */
export function documentedRoutes(deps: SelfDeps, table: readonly AnyRoute[], app: FastifyInstance): RouteDoc[] {
  const outside = [...mcpRoutes(deps), ...ledgerRouteDocs()];
  return [...table, ...outside.filter((r) => app.hasRoute({ method: r.method, url: r.url }))];
}

function description(deps: SelfDeps): string {
  const { network, asset } = deps.ledgerInfo;
  return [
    `The svc facilitator: x402 version 2 payments on payment channels on ${network}, in x402's standard \`batch-settlement\` scheme (a voucher is a ceiling: what was charged on the channel plus the price; the channel is bound to this facilitator's receiver authorizer) and in \`channel\`, the svc specification's name for its subset (a voucher is what is owed in all, the whole price charged). Every 402 offers \`channel\` first, then \`batch-settlement\` for the same price. Test network only; the contracts are unaudited.`,
    `Amounts are decimal strings of integer base units of ${asset.code} (${asset.decimals} decimals). Every non-2xx answer carries the Error body (docs/protocol.md#errors), except those of POST /mcp, which are JSON-RPC error objects as the MCP specification has them.`,
    'A plain-text guide for language models: GET /llms.txt. Model Context Protocol: POST /mcp.',
  ].join('\n\n');
}
