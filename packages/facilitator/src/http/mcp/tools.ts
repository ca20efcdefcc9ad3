// The MCP tools (spec: svc_list_resources, svc_price_list, svc_get_channel, svc_get_account,
// svc_stats, svc_supported). Each one that mirrors an endpoint answers through that endpoint, in
// process (in-process/get.ts), and declares the endpoint's own response schema as its output schema:
// the structured result is the endpoint's JSON, and an endpoint's error body is a tool error
// (isError: true, the body as JSON text) rather than a protocol failure.
//
// Inputs are loose strings on purpose: the route validates them, so a malformed address gets the
// same BAD_REQUEST error body as over HTTP.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  AccountSchema,
  ChannelViewSchema,
  DiscoveryResponseSchema,
  StatsSchema,
  SupportedResponseSchema,
} from '@svc/core';
import { z } from 'zod';
import type { LocalAnswer, LocalGet } from '../in-process/get.js';
import { segment } from '../in-process/get.js';
import { PriceListShape, priceList } from './prices.js';
import type { PriceListDeps } from './prices.js';
import { SERVICE_VERSION } from '../openapi/document.js';

/** What this module uses of the domain. */
export type McpToolDeps = PriceListDeps;

export const MCP_TOOLS = [
  'svc_list_resources',
  'svc_price_list',
  'svc_get_channel',
  'svc_get_account',
  'svc_stats',
  'svc_supported',
] as const;

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;
const INSTRUCTIONS =
  'svc meters HTTP APIs with x402 v2 payments in the `channel` scheme: cumulative vouchers signed against a deposit in a payment channel. ' +
  'These tools read this facilitator: paid resources and their prices, channels, accounts, totals and the payment kinds it supports. ' +
  'Amounts are decimal strings of base units (7 decimals). The plain-text guide is GET /llms.txt; the API reference GET /openapi.json.';

/** A tool result from an endpoint's answer: its JSON as structured content, or its error body as an error. */
export function toolResult(answer: LocalAnswer): CallToolResult {
  const text = JSON.stringify(answer.body);
  if (answer.status >= 200 && answer.status < 300)
    return { content: [{ type: 'text', text }], structuredContent: answer.body as Record<string, unknown> };
  return { content: [{ type: 'text', text }], isError: true };
}

/** A new server with the six tools (stateless transport: one per request). */
export function mcpServer(deps: McpToolDeps, get: LocalGet): McpServer {
  const server = new McpServer(
    { name: 'svc', title: 'svc facilitator', version: SERVICE_VERSION },
    { instructions: INSTRUCTIONS },
  );
  server.registerTool(
    'svc_list_resources',
    {
      title: 'Paid resources (discovery catalog)',
      description:
        'Resources that have received at least one verified payment through this facilitator, with their 402 terms (accepts) and bazaar metadata; as GET /discovery/resources.',
      inputSchema: {
        payTo: z
          .string()
          .max(64)
          .optional()
          .meta({ description: 'Only this seller’s resources (a G… or C… address).' }),
        limit: z
          .number()
          .int()
          .min(1)
          .max(200)
          .optional()
          .meta({ description: 'Listings per page, 1 to 200 (default 50).' }),
        offset: z
          .number()
          .int()
          .min(0)
          .max(1_000_000)
          .optional()
          .meta({ description: 'Listings to skip (default 0).' }),
      },
      outputSchema: DiscoveryResponseSchema.shape,
      annotations: READ_ONLY,
    },
    async ({ payTo, limit, offset }) => {
      const query = Object.fromEntries(
        Object.entries({ payTo, limit, offset })
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, String(v)]),
      );
      return toolResult(await get('/discovery/resources', query));
    },
  );
  server.registerTool(
    'svc_price_list',
    {
      title: 'Prices',
      description:
        'The demo seller’s live prices and slices (from configuration) and every price listed in the discovery catalog, in base units; each resource with both its payment options, `channel` first, then x402’s `batch-settlement`.',
      inputSchema: {},
      outputSchema: PriceListShape,
      annotations: READ_ONLY,
    },
    async () => {
      const list = await priceList(deps, get);
      return toolResult('status' in list ? list : { status: 200, body: list });
    },
  );
  server.registerTool(
    'svc_get_channel',
    {
      title: 'A channel',
      description:
        'One payment channel: deposit, claimed, last accepted, remaining, expiry, status; as GET /channels/{id}.',
      inputSchema: {
        channelId: z
          .union([z.string().max(64), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)])
          .meta({ description: 'Channel id: a decimal u64, as a string ("42") or, up to 2^53, a number (42).' }),
      },
      outputSchema: ChannelViewSchema.shape,
      annotations: READ_ONLY,
    },
    async ({ channelId }) => toolResult(await get(`/channels/${segment(String(channelId))}`)),
  );
  server.registerTool(
    'svc_get_account',
    {
      title: 'An account',
      description:
        'An account: kind, smart-account policy, today’s spend, frozen flag, balances, open channels; as GET /accounts/{address}.',
      inputSchema: {
        address: z.string().max(128).meta({ description: 'A Stellar account (G…) or contract (C…) address.' }),
      },
      outputSchema: AccountSchema.shape,
      annotations: READ_ONLY,
    },
    async ({ address }) => toolResult(await get(`/accounts/${segment(address)}`)),
  );
  server.registerTool(
    'svc_stats',
    {
      title: 'Totals',
      description:
        'Vouchers accepted and rejected, on-chain transactions, volume, open channels, median verification latency; as GET /stats.',
      inputSchema: {},
      outputSchema: StatsSchema.shape,
      annotations: READ_ONLY,
    },
    async () => toolResult(await get('/stats')),
  );
  server.registerTool(
    'svc_supported',
    {
      title: 'Supported payment kinds',
      description:
        'Schemes, networks, asset, channel contract and receipt signer this facilitator handles; as GET /supported.',
      inputSchema: {},
      outputSchema: SupportedResponseSchema.shape,
      annotations: READ_ONLY,
    },
    async () => toolResult(await get('/supported')),
  );
  return server;
}
