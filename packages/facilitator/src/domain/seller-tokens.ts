// Minting and checking seller tokens (@svc/core seller-token.ts says what they are for). A token is
// `svcs1.<payTo>.<expiry, unix s>.<HMAC-SHA256 of that prefix, base64url>` under a key derived from
// the facilitator's secret: stateless, the same on every instance of a cluster that shares
// FACILITATOR_SECRET, and revoked all at once by changing that secret.
import crypto from 'node:crypto';
import { SELLER_TOKEN_MAX_DAYS, parseSellerToken, sellerTokenBody } from '@svc/core';
import type { Clock } from './clock.js';

const DAY_MS = 86_400_000;

export interface SellerIdentity {
  payTo: string;
  expiresAt: string;
}

export class SellerTokens {
  private readonly key: Buffer;

  constructor(
    seed: Uint8Array,
    private readonly clock: Clock,
  ) {
    this.key = crypto.createHash('sha256').update('svc:seller-token:v1').update(seed).digest();
  }

  /** A token for `payTo` until `expiresAt` (clamped to the longest a token may live). */
  mint(payTo: string, expiresAt: number): { token: string; payTo: string; expiresAt: string } {
    const latest = this.clock.now() + SELLER_TOKEN_MAX_DAYS * DAY_MS;
    const expiresUnix = Math.floor(Math.min(expiresAt, latest) / 1000);
    const body = sellerTokenBody(payTo, expiresUnix);
    return { token: `${body}.${this.mac(body)}`, payTo, expiresAt: new Date(expiresUnix * 1000).toISOString() };
  }

  /** The seller a token proves, or null for anything else (malformed, forged, expired). */
  check(token: string): SellerIdentity | null {
    const parts = parseSellerToken(token);
    if (!parts) return null;
    const expected = Buffer.from(this.mac(parts.body));
    const given = Buffer.from(parts.mac);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
    if (parts.expiresUnix * 1000 <= this.clock.now()) return null;
    return { payTo: parts.payTo, expiresAt: new Date(parts.expiresUnix * 1000).toISOString() };
  }

  private mac(body: string): string {
    return crypto.createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
