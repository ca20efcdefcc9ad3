// POST /mcp: the Model Context Protocol over streamable HTTP, stateless — a new server and
// transport per request (the SDK's documented stateless pattern), JSON answers rather than an SSE
// stream, no session. GET and DELETE /mcp (the SSE stream and the session end of a stateful
// server) answer 405 with the error body. The tools are in ../mcp-tools.ts.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ErrorBodySchema, SvcError } from '@svc/core';
import { z } from 'zod';
import type { Services } from '../../services.js';
import { localGet } from '../local-get.js';
import { MCP_TOOLS, mcpServer } from '../mcp-tools.js';
import { defineRoute, mount } from '../route.js';
import type { AnyRoute } from '../route.js';

export const MCP_PATH = '/mcp';
const TAGS = ['mcp'];
/** JSON-RPC messages in one POST (MCP 2025-06-18 sends one; older clients may batch a few). */
export const MCP_BATCH_MAX = 16;

const JsonRpcMessageSchema = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string().max(256), z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER)]).optional(),
    method: z.string().max(256).optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'JsonRpcMessage', description: 'A JSON-RPC 2.0 request, notification or response (MCP 2025-06-18).' });

export function registerMcp(app: FastifyInstance, s: Services): void {
  mount(app, mcpRoutes(s));
}

/** The /mcp routes, also listed in the OpenAPI document and llms.txt. */
export function mcpRoutes(s: Services): AnyRoute[] {
  const notAllowed = (reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send(new SvcError('BAD_REQUEST', 'This MCP endpoint is stateless: send every JSON-RPC message with POST /mcp (there is no event stream and no session).').toBody());
  const refusal = { 405: { description: 'Stateless server: no SSE stream, no session (Allow: POST)', schema: ErrorBodySchema } };
  return [
    defineRoute({
      method: 'POST',
      url: MCP_PATH,
      summary: `Model Context Protocol (streamable HTTP, stateless; Accept: application/json, text/event-stream). Tools: ${MCP_TOOLS.join(', ')}.`,
      tags: TAGS,
      // A batch is bounded: each tool call is a request to the facilitator, inside one request's limits.
      body: z.union([JsonRpcMessageSchema, z.array(JsonRpcMessageSchema).min(1).max(MCP_BATCH_MAX)]),
      responses: {
        200: { description: 'The JSON-RPC response', schema: z.union([JsonRpcMessageSchema, z.array(JsonRpcMessageSchema)]) },
        202: { description: 'Accepted (notifications and responses only)' },
        406: { description: 'Accept must list application/json and text/event-stream (JSON-RPC error)', schema: JsonRpcMessageSchema },
      },
      handler: async ({ request, reply }) => {
        const server = mcpServer(s, localGet(request.server, s.internalToken));
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        // The transport writes the raw response: keep the headers hooks already set (CORS).
        void reply.hijack();
        const res = reply.raw;
        for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        try {
          await server.connect(transport);
          await transport.handleRequest(request.raw, res, request.body);
        } catch (err) {
          request.log.error({ err }, 'MCP request failed');
          if (!res.headersSent) {
            res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
            res.end(JSON.stringify(new SvcError('INTERNAL').toBody()));
          } else if (!res.writableEnded) res.end();
        }
      },
    }),
    defineRoute({ method: 'GET', url: MCP_PATH, summary: 'Not available: this MCP server is stateless and opens no event stream.', tags: TAGS, responses: refusal, handler: ({ reply }) => notAllowed(reply) }),
    defineRoute({ method: 'DELETE', url: MCP_PATH, summary: 'Not available: this MCP server keeps no session.', tags: TAGS, responses: refusal, handler: ({ reply }) => notAllowed(reply) }),
  ];
}
