// Seller tokens: the credential of a seller's side (its middleware) at a facilitator. A buyer or a
// stranger can call /verify with a payment to any seller, so what only the payee's side may do —
// receive the attest token of a receipt, open and drive stream sessions, publish the discovery
// listing — needs proof that the caller is the payee. The facilitator mints a token for a `payTo`
// (a G… account) once the account's key signs a request; the token is stateless (an HMAC of the
// facilitator's) and expires; the middleware sends it as `Authorization: Bearer <token>`.
//
// The request's signature covers, as everywhere here, a domain, then RFC 8785 JSON:
//   sha256("svc:seller-token:v1" ‖ RFC 8785 JSON of { network, facilitator, payTo, ts, expiresAt })
// with `facilitator` the facilitator's receipt signer (so a request for one facilitator cannot be
// replayed at another) and `ts` the time of the request (refused when not within minutes of now).
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { sha256 } from '#crypto';
import type { Ed25519Signer } from '#crypto';
import { concatBytes, fromHex, toHex, utf8 } from './bytes.js';
import { verifyStrict } from './ed25519.js';
import { isAccountAddress, publicKeyFromAccount } from './strkey.js';
import { zAddress, zSignatureHex } from './schemas.js';

export const SELLER_TOKEN_DOMAIN = 'svc:seller-token:v1';
export const SELLER_TOKEN_PREFIX = 'svcs1';
/** The longest a token may live. */
export const SELLER_TOKEN_MAX_DAYS = 366;

export interface SellerTokenRequest {
  /** The network (CAIP-2), e.g. stellar:local. */
  network: string;
  /** The facilitator's receipt signer (GET /supported `extra.receiptSigner`). */
  facilitator: string;
  /** The seller's address: the signing key's. */
  payTo: string;
  /** When the request was made (ISO 8601). */
  ts: string;
  /** When the token should expire (ISO 8601). */
  expiresAt: string;
}

const zIso = z.iso.datetime({ offset: false });

/** POST /sellers/:payTo/token */
export const SellerTokenRequestBodySchema = z.object({ ts: zIso, expiresAt: zIso, signature: zSignatureHex }).meta({
  id: 'SellerTokenRequest',
  description: 'Signed by the payTo account’s key (see @svc/core seller-token.ts).',
});

export const SellerTokenSchema = z
  .object({ token: z.string(), payTo: zAddress, expiresAt: z.string() })
  .meta({ id: 'SellerToken' });
export type SellerToken = z.infer<typeof SellerTokenSchema>;

export function sellerTokenRequestHash(req: SellerTokenRequest): Uint8Array {
  const json = canonicalize({
    network: req.network,
    facilitator: req.facilitator,
    payTo: req.payTo,
    ts: req.ts,
    expiresAt: req.expiresAt,
  });
  if (json === undefined) throw new TypeError('seller token request is not serialisable');
  return sha256(concatBytes(utf8(SELLER_TOKEN_DOMAIN), utf8(json)));
}

export function signSellerTokenRequest(signer: Ed25519Signer, req: SellerTokenRequest): string {
  return toHex(signer.sign(sellerTokenRequestHash(req)));
}

/** Strict: the signature must be the payTo account's own (a G… address). */
export function verifySellerTokenRequest(req: SellerTokenRequest, signatureHex: string): boolean {
  if (!isAccountAddress(req.payTo) || !/^[0-9a-fA-F]{128}$/.test(signatureHex)) return false;
  return verifyStrict(publicKeyFromAccount(req.payTo), sellerTokenRequestHash(req), fromHex(signatureHex, 64));
}

/** The part of a token its MAC covers: prefix, payTo and expiry (unix seconds). */
export function sellerTokenBody(payTo: string, expiresUnix: number): string {
  return `${SELLER_TOKEN_PREFIX}.${payTo}.${expiresUnix}`;
}

/**
 * A token's parts, or null when it is not shaped like one (its MAC is the facilitator's to check).
 * One spelling only: the expiry in plain decimal, as sellerTokenBody writes it (a leading zero would
 * read to the same body, and so the same MAC, under a second string), nothing around the token.
 */
export function parseSellerToken(
  token: string,
): { payTo: string; expiresUnix: number; body: string; mac: string } | null {
  const m = /^svcs1\.([A-Z2-7]{56})\.([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m || !isAccountAddress(m[1])) return null;
  return { payTo: m[1], expiresUnix: Number(m[2]), body: sellerTokenBody(m[1], Number(m[2])), mac: m[3]! };
}
