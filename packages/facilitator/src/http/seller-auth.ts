// Who is calling: the payee's side proves itself with a seller token (`Authorization: Bearer …`,
// @svc/core seller-token.ts), and only the payee's side may do what a stranger could abuse with a
// public id — drive a stream session, receive a receipt's attest token, publish a listing.
import { SvcError } from '@svc/core';
import type { FastifyRequest } from 'fastify';
import type { SellerTokens } from '../domain/seller-tokens.js';

const NO_TOKEN = 'Send the seller’s token as Authorization: Bearer <token> (get one with `svc seller token`).';
const SCHEME = 'bearer';
const NOT_CANONICAL =
  'Send the seller’s token as exactly Authorization: Bearer <token>: one space after Bearer, and no whitespace in or around the token.';

/**
 * The credential of `Authorization: Bearer <token>` (the scheme in any case, RFC 9110 §11.1), as
 * sent: one space after the scheme is the separator, and anything else stays in the credential, so
 * that a token has one spelling (sellerOf refuses a credential with whitespace in it). Null when the
 * request sends no bearer credential. A bearer credential that is empty, too long or badly spaced
 * is still one: sellerOf answers it 401, so that a seller learns its credential is wrong rather
 * than being served as a stranger.
 */
export function bearerOf(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  if (typeof auth !== 'string' || !/^bearer(?:\s|$)/i.test(auth)) return null;
  const credential = auth.slice(SCHEME.length);
  return credential.startsWith(' ') ? credential.slice(1) : credential;
}

/**
 * The seller a request proves itself to be; null when it sends no token. A token that is sent but
 * not valid (badly spaced, malformed, forged, expired) is 401: a seller must learn its credential is
 * wrong.
 */
export function sellerOf(tokens: SellerTokens, request: FastifyRequest): string | null {
  const token = bearerOf(request);
  if (token === null) return null;
  if (/\s/.test(token)) throw new SvcError('UNAUTHORIZED', NOT_CANONICAL);
  const seller = tokens.check(token);
  if (!seller)
    throw new SvcError(
      'UNAUTHORIZED',
      'The seller token is not valid here (malformed, expired, or minted by another facilitator): get a new one with `svc seller token`.',
    );
  return seller.payTo;
}

/** Only `payTo`'s own side: 401 without a valid token, 403 with another seller's. */
export function requireSeller(tokens: SellerTokens, request: FastifyRequest, payTo: string): void {
  const seller = sellerOf(tokens, request);
  if (seller === null) throw new SvcError('UNAUTHORIZED', NO_TOKEN);
  if (seller !== payTo)
    throw new SvcError('FORBIDDEN', `This token is ${seller}’s; only ${payTo}’s own token may do this.`);
}
