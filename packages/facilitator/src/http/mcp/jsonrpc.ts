// What /mcp checks itself before the MCP SDK sees a message, so that every failure is the JSON-RPC
// error the MCP specification (2025-11-25) names, never svc's error body: -32700 for a body that is
// not JSON, -32600 for one that is not a JSON-RPC message (or a batch the negotiated protocol
// version no longer has), -32602 for tools/call without a known tool name or with arguments that
// are not an object. The SDK answers the rest.
import { MAX_JSON_DEPTH, jsonDepth, safeParse } from '@svc/core';
import { z } from 'zod';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
/** Protocol versions from which JSON-RPC batching is gone (MCP 2025-06-18 removed it). */
const NO_BATCH_FROM = '2025-06-18';

const zId = z.union([z.string().max(256), z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER)]);
const zParams = z.record(z.string(), z.unknown()).optional();

export const JsonRpcMessageSchema = z
  .union([
    z.looseObject({ jsonrpc: z.literal('2.0'), id: zId, method: z.string().max(256), params: zParams }),
    z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string().max(256), params: zParams }),
    z.looseObject({ jsonrpc: z.literal('2.0'), id: zId, result: z.unknown() }),
    z.looseObject({
      jsonrpc: z.literal('2.0'),
      id: zId.nullable(),
      error: z.looseObject({ code: z.number().int(), message: z.string() }),
    }),
  ])
  .meta({ id: 'JsonRpcMessage', description: 'A JSON-RPC 2.0 request, notification or response (MCP 2025-11-25).' });
export type JsonRpcMessage = z.infer<typeof JsonRpcMessageSchema>;

export const JsonRpcErrorSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: zId.nullable(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  })
  .meta({
    id: 'JsonRpcError',
    description: 'A JSON-RPC 2.0 error response; `id` is null when the request’s id could not be read.',
  });

export interface JsonRpcError {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export type Checked =
  { ok: true; messages: JsonRpcMessage | JsonRpcMessage[] } | { ok: false; status: number; error: JsonRpcError };

export function rpcError(id: string | number | null, code: number, message: string): JsonRpcError {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** Parses and checks a POST /mcp body (the raw text). */
export function checkMessages(
  raw: string,
  protocolVersion: string | undefined,
  tools: readonly string[],
  maxBatch: number,
): Checked {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, status: 400, error: rpcError(null, PARSE_ERROR, 'Parse error: the body is not JSON.') };
  }
  if (jsonDepth(value) > MAX_JSON_DEPTH)
    return invalid(null, `the body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) {
    if (protocolVersion !== undefined && protocolVersion >= NO_BATCH_FROM)
      return invalid(null, `protocol version ${protocolVersion} has no batches: send one message per request`);
    if (value.length === 0 || value.length > maxBatch) return invalid(null, `a batch holds 1 to ${maxBatch} messages`);
  }
  const messages: unknown[] = Array.isArray(value) ? value : [value];
  for (const m of messages) {
    const parsed = safeParse(JsonRpcMessageSchema, m);
    if (!parsed.success) return invalid(idOf(m), 'not a JSON-RPC 2.0 request, notification or response');
    // A notification has no id: an id that is there must be a string or an integer (MCP).
    if (typeof m === 'object' && m !== null && 'id' in m && !safeParse(zId.nullable(), m.id).success)
      return invalid(null, 'an id is a string or an integer');
  }
  const checked = messages as JsonRpcMessage[];
  if (!Array.isArray(value)) {
    const refused = checkToolCall(checked[0]!, tools);
    if (refused) return { ok: false, status: 200, error: refused };
  }
  return { ok: true, messages: Array.isArray(value) ? checked : checked[0]! };
}

/**
 * tools/call must name a tool this server has, with arguments that are an object if any: -32602
 * otherwise (the SDK would answer a tool result, or an internal error).
 */
function checkToolCall(m: JsonRpcMessage, tools: readonly string[]): JsonRpcError | null {
  const { method, id, params } = m as { method?: unknown; id?: string | number; params?: Record<string, unknown> };
  if (method !== 'tools/call' || id === undefined) return null;
  const name = params?.['name'];
  if (typeof name !== 'string')
    return rpcError(id, INVALID_PARAMS, 'Invalid params: tools/call needs params.name, the tool to call.');
  if (!tools.includes(name))
    return rpcError(
      id,
      INVALID_PARAMS,
      `Invalid params: unknown tool ${JSON.stringify(name.slice(0, 64))} (tools: ${tools.join(', ')}).`,
    );
  // The SDK would answer -32603 with zod's issues for arguments of another type.
  const args = params?.['arguments'];
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
    return rpcError(id, INVALID_PARAMS, 'Invalid params: tools/call params.arguments must be an object.');
  return null;
}

function invalid(id: string | number | null, why: string): Checked {
  return { ok: false, status: 400, error: rpcError(id, INVALID_REQUEST, `Invalid Request: ${why}.`) };
}

function idOf(m: unknown): string | number | null {
  const id = typeof m === 'object' && m !== null ? (m as Record<string, unknown>)['id'] : undefined;
  return safeParse(zId, id).success ? (id as string | number) : null;
}
