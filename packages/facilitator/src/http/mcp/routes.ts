// POST /mcp: the Model Context Protocol over streamable HTTP, stateless — a new server and
// transport per request (the SDK's documented stateless pattern), JSON answers rather than an SSE
// stream, no session. Every answer of POST /mcp is JSON-RPC, as the MCP specification (2025-11-25)
// has it: its own parser keeps the body as text, and jsonrpc.ts answers what is not a message
// (-32700, -32600) or calls no known tool (-32602) before the SDK sees it. A browser page of another
// origin is refused (403: the specification's defence against DNS rebinding). GET and DELETE /mcp
// (the SSE stream and the session end of a stateful server) answer 405 with the error body. The
// tools are in tools.ts.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBodySchema, SvcError } from '@svc/core';
import { z } from 'zod';
import { localGet } from '../in-process/get.js';
import { INVALID_REQUEST, JsonRpcErrorSchema, JsonRpcMessageSchema, checkMessages, rpcError } from './jsonrpc.js';
import { MCP_TOOLS, mcpServer } from './tools.js';
import type { McpToolDeps } from './tools.js';
import { defineRoute, mount } from '../route.js';
import type { AnyRoute } from '../route.js';
import type { Config } from '../../config.js';

/** What this module uses of the domain. */
export interface McpDeps extends McpToolDeps {
  config: Config;
  /** Marks the facilitator's own in-process requests (random per process, never logged). */
  internalToken: string;
  /** The facilitator's public base URL (PUBLIC_URL, or derived from the bound address). */
  publicUrl: () => string;
}

export const MCP_PATH = '/mcp';
const TAGS = ['mcp'];
/** JSON-RPC messages in one POST (protocol versions before 2025-06-18 may batch a few). */
export const MCP_BATCH_MAX = 16;
const FORBIDDEN_ORIGIN = -32000;
const UNSUPPORTED_MEDIA_TYPE = -32000;
/** The body of a POST whose Content-Type is not JSON, as its parser leaves it. */
const UNSUPPORTED_TYPE = Symbol('unsupported content type');

export function registerMcp(app: FastifyInstance, deps: McpDeps): void {
  // Its own scope: the body stays text, so that a body that is not JSON is a JSON-RPC parse error.
  void app.register((scope, _options, done) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, next) => next(null, body));
    // Any other type reaches the handler too (as nothing), which answers 415 in JSON-RPC; so does
    // a Content-Type header that is not a media type, which Fastify refuses before any parser.
    scope.addContentTypeParser('*', (_request, _payload, next) => next(null, UNSUPPORTED_TYPE));
    scope.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
      if (error.statusCode === 415) return reply.code(415).send(unsupportedType());
      if (error.statusCode === 413)
        return reply.code(413).send(rpcError(null, INVALID_REQUEST, 'Invalid Request: the body is too large.'));
      throw error; // the application's own error handler answers the rest
    });
    mount(scope, mcpRoutes(deps));
    done();
  });
}

/**
 * Whether a browser page of `origin` may call /mcp: this facilitator's own origin, loopback pages
 * (local tools such as the MCP Inspector; a rebinding attack's page has the attacker's origin), and
 * MCP_ALLOWED_ORIGINS (`*`: any). No Origin header (not a browser): allowed.
 */
export function mcpOriginAllowed(origin: string | undefined, deps: McpDeps): boolean {
  if (origin === undefined) return true;
  const allowed = deps.config.MCP_ALLOWED_ORIGINS;
  if (allowed === '*') return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin === new URL(deps.publicUrl()).origin) return true;
  if (
    ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) &&
    (url.protocol === 'http:' || url.protocol === 'https:')
  )
    return true;
  return allowed
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .includes(url.origin);
}

/** The /mcp routes, also listed in the OpenAPI document and llms.txt. */
export function mcpRoutes(deps: McpDeps): AnyRoute[] {
  const notAllowed = (reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send(
        new SvcError(
          'BAD_REQUEST',
          'This MCP endpoint is stateless: send every JSON-RPC message with POST /mcp (there is no event stream and no session).',
        ).toBody(),
      );
  const refusal = {
    405: { description: 'Stateless server: no SSE stream, no session (Allow: POST)', schema: ErrorBodySchema },
  };
  const rpcErrors = (description: string) => ({ description, schema: JsonRpcErrorSchema });
  return [
    defineRoute({
      method: 'POST',
      url: MCP_PATH,
      summary: `Model Context Protocol (streamable HTTP, stateless; Accept: application/json, text/event-stream). Tools: ${MCP_TOOLS.join(', ')}. Answers are JSON-RPC, errors included.`,
      tags: TAGS,
      // Checked by the handler (JSON-RPC errors, not the error body); a batch is bounded.
      body: z.union([JsonRpcMessageSchema, z.array(JsonRpcMessageSchema).min(1).max(MCP_BATCH_MAX)]),
      selfValidated: true,
      responses: {
        200: {
          description:
            'The JSON-RPC response (a JSON-RPC error for a method-level failure, e.g. -32602 for an unknown tool)',
          schema: z.union([JsonRpcMessageSchema, z.array(JsonRpcMessageSchema)]),
        },
        202: { description: 'Accepted (notifications and responses only)' },
        400: rpcErrors(
          'Not JSON (-32700), not a JSON-RPC message, or a batch the protocol version does not have (-32600)',
        ),
        403: rpcErrors('A browser page of an origin that is not allowed (MCP_ALLOWED_ORIGINS); id null'),
        406: rpcErrors('Accept must list application/json and text/event-stream; id null'),
        413: rpcErrors('The body is larger than the limit (-32600); id null'),
        415: rpcErrors('Content-Type must be application/json; id null'),
      },
      handler: async ({ request, reply }) => {
        if (!mcpOriginAllowed(request.headers.origin, deps)) {
          return reply
            .code(403)
            .send(
              rpcError(
                null,
                FORBIDDEN_ORIGIN,
                `Origin ${String(request.headers.origin).slice(0, 200)} may not call this MCP server.`,
              ),
            );
        }
        if (request.body === UNSUPPORTED_TYPE) return reply.code(415).send(unsupportedType());
        const checked = checkMessages(
          typeof request.body === 'string' ? request.body : '',
          protocolVersion(request),
          MCP_TOOLS,
          MCP_BATCH_MAX,
        );
        if (!checked.ok) return reply.code(checked.status).send(checked.error);
        await answer(deps, request, reply, checked.messages);
        return reply;
      },
    }),
    defineRoute({
      method: 'GET',
      url: MCP_PATH,
      summary: 'Not available: this MCP server is stateless and opens no event stream.',
      tags: TAGS,
      responses: refusal,
      handler: ({ reply }) => notAllowed(reply),
    }),
    defineRoute({
      method: 'DELETE',
      url: MCP_PATH,
      summary: 'Not available: this MCP server keeps no session.',
      tags: TAGS,
      responses: refusal,
      handler: ({ reply }) => notAllowed(reply),
    }),
  ];
}

function unsupportedType() {
  return rpcError(null, UNSUPPORTED_MEDIA_TYPE, 'Unsupported Media Type: Content-Type must be application/json.');
}

function protocolVersion(request: FastifyRequest): string | undefined {
  const v = request.headers['mcp-protocol-version'];
  return typeof v === 'string' ? v : undefined;
}

/** Hands checked messages to a fresh server and transport, which write the raw response. */
async function answer(deps: McpDeps, request: FastifyRequest, reply: FastifyReply, messages: unknown): Promise<void> {
  const server = mcpServer(deps, localGet(request.server, deps.internalToken));
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
    await transport.handleRequest(request.raw, res, messages);
  } catch (err) {
    request.log.error({ err }, 'MCP request failed');
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(rpcError(null, -32603, 'Internal error.')));
    } else if (!res.writableEnded) res.end();
  }
}
