// Hashes a response body as it is written, for the payee's attestation of what it served.
import crypto from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** Calls `done(sha256 hex of the body)` once the response has finished. */
export function hashResponse(res: ServerResponse, done: (hash: string) => void): void {
  const hash = crypto.createHash('sha256');
  const feed = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string')
      hash.update(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    else if (chunk instanceof Uint8Array) hash.update(chunk);
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    feed(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') feed(chunk, rest[0]);
    return end(chunk, ...rest);
  }) as ServerResponse['end'];
  res.once('finish', () => done(hash.digest('hex')));
}
