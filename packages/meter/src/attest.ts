// Hashes the response body a seller served, for the payee's attestation of it (POST
// /receipts/:id/attest): as a node:http response is written (node:http, Express, Fastify's
// reply.raw), or from a copy of a web Response (Hono). Both hash with @svc/core's incremental
// sha256, so this module imports no Node module and the Hono binding runs where there are none.
import type { ServerResponse } from 'node:http';
import { createSha256, toHex } from '@svc/core';
import type { Sha256 } from '@svc/core';

/** Calls `done(sha256 hex of the body)` once the node:http response has finished. */
export function hashResponse(res: ServerResponse, done: (hash: string) => void): void {
  const hash = createSha256();
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    feed(hash, chunk, rest[0]);
    return write(chunk, ...rest);
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') feed(hash, chunk, rest[0]);
    return end(chunk, ...rest);
  }) as ServerResponse['end'];
  // Only a response sent in full is attested: 'finish' does not come if the client left first.
  res.once('finish', () => done(toHex(hash.digest())));
}

/**
 * Calls `done(sha256 hex of the body)` once `res`'s body has been read, from a copy (the original
 * still goes to the client), piece by piece so that a long body is never held whole.
 */
export function hashWebResponse(res: Response, done: (hash: string) => void): void {
  hashStream(res.clone().body).then(done, () => undefined);
}

async function hashStream(body: ReadableStream<Uint8Array> | null): Promise<string> {
  const hash = createSha256();
  if (body) {
    const reader = body.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      // A body of anything but bytes is no body a client gets: attest nothing rather than guess.
      if (!(next.value instanceof Uint8Array)) throw new TypeError('a response body chunk is not bytes');
      hash.update(next.value);
    }
  }
  return toHex(hash.digest());
}

/** A chunk as res.write/res.end take it: bytes, or a string in the encoding given (utf8 by default). */
function feed(hash: Sha256, chunk: unknown, encoding: unknown): void {
  if (chunk instanceof Uint8Array) hash.update(chunk);
  else if (typeof chunk === 'string')
    // Buffer is a global wherever a ServerResponse exists: this branch only runs on Node.
    hash.update(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
}
