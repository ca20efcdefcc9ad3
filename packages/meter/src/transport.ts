// How the meter sends its per-request calls to the facilitator (POST /verify, POST
// /receipts/:id/attest): a JSON POST with a deadline. On Node it is node:http with keep-alive
// sockets (transport-node.ts, the "#transport" import condition `node`); elsewhere, or with the
// seller's own `fetch` (svc({ fetch })), fetch. On Node, fetch costs the seller several times the
// CPU of node:http per call — the larger part of what the meter costs a paid request
// (bench/PROFILE-seller.md).

/** An answer: its status, its body parsed as JSON (null when empty or not JSON) and its headers. */
export interface JsonReply {
  status: number;
  json: unknown;
  header(name: string): string | null;
}

/**
 * POSTs `body` (JSON text) to `url` and resolves with the answer, whatever its status; rejects on a
 * network failure, or once `timeoutMs` has passed without the whole answer.
 */
export type PostJson = (
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
) => Promise<JsonReply>;

/** PostJson over a fetch. */
export function fetchPost(fetchImpl: typeof fetch): PostJson {
  return async (url, headers, body, timeoutMs) => {
    const res = await fetchImpl(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    const json: unknown = await res.json().catch(() => null);
    return { status: res.status, json, header: (name) => res.headers.get(name) };
  };
}
