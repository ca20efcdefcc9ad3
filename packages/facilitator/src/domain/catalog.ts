// The discovery catalog (spec: "a resource is listed once it has received at least one verified
// payment through the facilitator"). What a payment may write, and what it may not:
//
//   - A listing is keyed by (resource URL, payTo). A payment only ever writes the listing of its
//     own channel's payee, so a third party can list the same URL under its own address but never
//     touch another seller's listing: changing it takes a payment to that seller, at its price.
//   - A payment whose payer is its payee (paying oneself a stroop) lists and updates nothing.
//   - Payments are tallied off the hot path and written every second (catalog-recorder.ts).
//   - The URL must be an absolute http(s) URL of at most 2048 characters, without credentials;
//     the fragment is dropped. Anything else is not listed (the payment itself still stands).
//   - The bazaar metadata the middleware forwards is validated against the 402 schema and bounded
//     (8 KiB of JSON); metadata that fails is replaced by the one derived from the HTTP method and
//     unit, as the middleware derives it when a seller gives none. description ≤ 1024 characters,
//     mimeType ≤ 128, both without control characters.
import { BATCH_SCHEME, BazaarSchema, PaymentRequirementsSchema, batchTermsOf, safeParse } from '@svc/core';
import type { Bazaar, Unit } from '@svc/core';
import { mimeTypeOf } from '@svc/meter';
import { z } from 'zod';
import type { CatalogEntry } from '../store/port.js';

export const CATALOG_LIMITS = {
  urlChars: 2048,
  descriptionChars: 1024,
  mimeTypeChars: 128,
  bazaarBytes: 8 * 1024,
} as const;

/** What the seller's middleware says about the resource, taken from the payment payload. */
export interface Listing {
  url: string;
  description: string;
  mimeType: string;
  bazaar: Bazaar;
}

const ResourceFields = z.looseObject({
  url: z.string().max(CATALOG_LIMITS.urlChars),
  description: z.string().max(CATALOG_LIMITS.descriptionChars).optional(),
  mimeType: z.string().max(CATALOG_LIMITS.mimeTypeChars).optional(),
});

/** The listing a verified payment would record, or null when its resource cannot be listed. */
export function listingOf(payload: Record<string, unknown>, method: string, unit: Unit): Listing | null {
  const resource = safeParse(ResourceFields, payload['resource']);
  if (!resource.success) return null;
  const url = listingUrl(resource.data.url);
  if (url === null) return null;
  const extensions = payload['extensions'];
  const given =
    typeof extensions === 'object' && extensions !== null
      ? (extensions as Record<string, unknown>)['bazaar']
      : undefined;
  return {
    url,
    description: printable(resource.data.description ?? ''),
    mimeType: printable(resource.data.mimeType ?? '') || mimeTypeOf(unit),
    bazaar: bazaarOf(given, method, unit),
  };
}

/** Control characters (NUL included, which PostgreSQL text cannot hold) removed. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, '');
}

/** An absolute http(s) URL without credentials, fragment dropped; null otherwise. */
export function listingUrl(raw: string): string | null {
  if (raw.length > CATALOG_LIMITS.urlChars) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '')
    return null;
  url.hash = '';
  return url.href.length > CATALOG_LIMITS.urlChars ? null : url.href;
}

/** The forwarded bazaar metadata when valid and within bounds, else the derived one. */
export function bazaarOf(given: unknown, method: string, unit: Unit): Bazaar {
  const parsed = safeParse(BazaarSchema, given);
  if (parsed.success && Buffer.byteLength(JSON.stringify(parsed.data)) <= CATALOG_LIMITS.bazaarBytes)
    return parsed.data;
  return {
    info: {
      input: { type: 'http', method: /^[A-Z]{1,16}$/.test(method) ? method : 'GET' },
      output: { type: 'json', mimeType: mimeTypeOf(unit) },
    },
    schema: {},
  };
}

/**
 * A catalog listing as GET /discovery/resources shows it (the x402 discovery item, plus counts).
 * Its `accepts` are those of a 402 of this facilitator: each `channel` option first, then the same
 * terms as `batch-settlement`, bound to `receiverAuthorizer` (this facilitator's key). The store
 * keeps the `channel` terms a payment was verified against; the second option is derived here, so
 * listings recorded before it existed show it too.
 */
export function discoveryItem(entry: CatalogEntry, receiverAuthorizer: string) {
  const batch = entry.accepts.some((a) => (a as { scheme?: unknown } | null)?.scheme === BATCH_SCHEME)
    ? []
    : entry.accepts.flatMap((a) => {
        const terms = safeParse(PaymentRequirementsSchema, a);
        return terms.success ? [batchTermsOf(terms.data, receiverAuthorizer)] : [];
      });
  return {
    resource: entry.resource,
    type: 'http' as const,
    x402Version: 2 as const,
    accepts: [...entry.accepts, ...batch],
    lastUpdated: entry.lastUpdated,
    extensions: { bazaar: entry.bazaar },
    description: entry.description,
    mimeType: entry.mimeType,
    payTo: entry.payTo,
    payments: entry.payments,
    payers: entry.payers,
    firstSeen: entry.firstSeen,
  };
}
