// Hashes a web Response's body (Hono, or any fetch-style framework) for the payee's attestation of
// what it served: the same sha256 hex as attest.ts computes as a node:http response is written,
// without Node's modules, so the binding also runs where there are none.
import { sha256, toHex } from '@svc/core';

/** Calls `done(sha256 hex of the body)` once `res`'s body (read from a copy) has been read. */
export function hashWebResponse(res: Response, done: (hash: string) => void): void {
  void res
    .clone()
    .arrayBuffer()
    .then((body) => done(toHex(sha256(new Uint8Array(body)))))
    .catch(() => undefined);
}
