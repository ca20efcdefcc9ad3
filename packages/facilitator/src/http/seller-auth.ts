// Who is calling: the payee's side proves itself with a seller token (`Authorization: Bearer …`,
// @svc/core seller-token.ts), and only the payee's side may do what a stranger could abuse with a
// public id — drive a stream session, receive a receipt's attest token, publish a listing.
import { SvcError } from '@svc/core';
import type { FastifyRequest } from 'fastify';
import type { SellerTokens } from '../domain/seller-tokens.js';

const NO_TOKEN = 'Send the seller’s token as Authorization: Bearer <token> (get one with `svc seller token`).';

/**
 * The token of `Authorization: Bearer <token>` (the scheme in any case, RFC 9110 §11.1); null when
 * the request sends no bearer credential. A bearer credential that is empty or too long is still
 * one: sellerOf answers it 401, so that a seller learns its credential is wrong rather than being
 * served as a stranger.
 */
export function bearerOf(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  if (typeof auth !== 'string') return null;
  const scheme = /^bearer(?:[ \t]+|$)/i.exec(auth);
  return scheme ? auth.slice(scheme[0].length).trim() : null;
}

/**
 * The seller a request proves itself to be; null when it sends no token. A token that is sent but
 * not valid (malformed, forged, expired) is 401: a seller must learn its credential is wrong.
 */
export function sellerOf(tokens: SellerTokens, request: FastifyRequest): string | null {
  const token = bearerOf(request);
  if (token === null) return null;
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
