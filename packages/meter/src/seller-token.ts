// Getting a seller token (the payee side's credential at a facilitator; @svc/core seller-token.ts):
// the seller's key signs a request naming this facilitator, and the facilitator answers a token.
//
//   const { token } = await requestSellerToken({ facilitator: 'http://127.0.0.1:4020', secret: process.env.SELLER_SECRET! });
//   const { meter, stream } = svc({ facilitator, payTo, sellerToken: token });
//
// The command line does the same: `svc-seller token` (the key stays in its file).
import {
  globalFetch,
  keypairFromSecret,
  readSupported,
  safeParse,
  SellerTokenSchema,
  signSellerTokenRequest,
  SupportedUnreadable,
} from '@svc/core';
import type { SellerToken } from '@svc/core';

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 365;

export interface SellerTokenOptions {
  /** Base URL of the facilitator. */
  facilitator: string;
  /** The seller's secret (S… or 64 hex): the key of its payTo address. Never sent anywhere. */
  secret: string;
  /** How long the token lives, in days (default 365, at most 366). */
  days?: number;
  fetch?: typeof fetch;
}

export async function requestSellerToken(o: SellerTokenOptions): Promise<SellerToken> {
  const base = o.facilitator.replace(/\/+$/, '');
  const doFetch = o.fetch ?? globalFetch;
  const keys = keypairFromSecret(o.secret);
  // Nothing answering is its own trouble; an answer that is no facilitator's is told below.
  const supported = await readSupported(base, { fetch: doFetch }).catch((err: unknown) => {
    if (err instanceof SupportedUnreadable && err.status !== null) return null;
    throw err instanceof SupportedUnreadable ? err.cause : err;
  });
  const kind = supported?.kinds[0];
  const facilitator = kind?.extra?.['receiptSigner'];
  if (!kind || typeof facilitator !== 'string')
    throw new Error(`${base}/supported does not name the facilitator's signer`);
  const now = Date.now();
  const request = {
    network: kind.network,
    facilitator,
    payTo: keys.address,
    ts: new Date(now).toISOString(),
    expiresAt: new Date(now + (o.days ?? DEFAULT_DAYS) * DAY_MS).toISOString(),
  };
  const res = await doFetch(`${base}/sellers/${keys.address}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      ts: request.ts,
      expiresAt: request.expiresAt,
      signature: signSellerTokenRequest(keys, request),
    }),
  });
  const json: unknown = await res.json().catch(() => null);
  const token = safeParse(SellerTokenSchema, json);
  if (!res.ok || !token.success) {
    const err = json as { error?: string; message?: string } | null;
    throw new Error(
      `${base} refused the seller token request: ${err?.error ?? res.status} ${err?.message ?? ''}`.trim(),
    );
  }
  return token.data;
}
