// The market under load: sellers (each a payee with its own per-request price and resource) and
// buyers (one channel each, to one seller). A buyer signs a voucher for exactly what it owes —
// its last accepted cumulative plus the price — and keeps the new cumulative only once the
// facilitator accepted it, so at most one of its requests is in flight.
import { randomBytes } from 'node:crypto';
import { requestHash, toHex } from '@svc/core';
import type { Keypair, PaymentRequirements, SupportedResponse, VoucherContext } from '@svc/core';
import { bazaarFor, mimeTypeOf, requirementsFor } from '@svc/meter';
import type { MeterOptions } from '@svc/meter';
import { configDefaults } from '../../packages/facilitator/src/config.js';
import type { OpenedChannel } from './channels.js';
import type { VoucherKind } from './tally.js';

const METHOD = 'GET';

/**
 * What every seller asks: the demo seller's per-request price (GET /demo/book, the default of
 * PRICE_BOOK_PER_REQUEST). The load sends per-request vouchers only, and that is the demo's one
 * per-request price (its ticker and chat are paid per slice, over streams), so what the run shows
 * of settlement is what the demo's prices give.
 */
export const LOAD_PRICE: bigint = configDefaults().PRICE_BOOK_PER_REQUEST;

export interface Seller {
  index: number;
  address: string;
  price: bigint;
  requirements: PaymentRequirements;
  /** What the seller's middleware adds to the buyer's payload (packages/meter/src/gate.ts). */
  resource: { url: string; description: string; mimeType: string };
  bazaar: ReturnType<typeof bazaarFor>;
  requestHash: string;
  /** Sum and count of vouchers the facilitator accepted for this seller, as the client saw them. */
  acceptedSum: bigint;
  acceptedCount: number;
}

export interface Buyer {
  channel: OpenedChannel;
  seller: Seller;
  /** The last cumulative the facilitator accepted. */
  last: bigint;
  /** Idempotency-Key of the next good voucher; kept until it is accepted. */
  key: string;
  /** The last good voucher's answer was lost (network error, 5xx): resend the same one. */
  unsure: boolean;
  /** Why the buyer stopped, if it did. */
  retired: string | null;
  /** Not before this time (performance.now()), after a 429. */
  notBefore: number;
}

export interface Request {
  kind: VoucherKind;
  cumulative: bigint;
  key: string;
  payload: string;
}

export function newKey(): string {
  return randomBytes(16).toString('hex');
}

/** A seller asking `price` base units per request. */
export function makeSeller(index: number, address: string, supported: SupportedResponse, price: bigint): Seller {
  const options: MeterOptions = {
    price,
    unit: 'request',
    description: `Load test seller ${index}`,
  };
  const url = `http://seller-${index}.load.test/v1/quote`;
  return {
    index,
    address,
    price: options.price,
    requirements: requirementsFor(options, address, supported),
    resource: { url, description: options.description ?? '', mimeType: mimeTypeOf('request') },
    bazaar: bazaarFor(options, METHOD, new URLSearchParams()),
    requestHash: requestHash(METHOD, url, null),
    acceptedSum: 0n,
    acceptedCount: 0,
  };
}

export function makeBuyer(channel: OpenedChannel, seller: Seller): Buyer {
  return { channel, seller, last: 0n, key: newKey(), unsure: false, retired: null, notBefore: 0 };
}

export interface Signing {
  ctx: VoucherContext;
  /** Signs forged vouchers: a key that is not the channel's. */
  forger: Keypair;
  /** Where wrong-payee vouchers are sent: another seller (or a stranger when there is one seller). */
  otherSeller(seller: Seller): Seller;
}

/** The /verify body a seller's middleware sends for `kind` of voucher from `b`. */
export function buildRequest(b: Buyer, kind: VoucherKind, s: Signing): Request {
  const owed = b.last + b.seller.price;
  const cumulative = kind === 'stale' ? b.last : owed;
  const signer = kind === 'forged' ? s.forger : b.channel.voucherKey;
  const seller = kind === 'payee' ? s.otherSeller(b.seller) : b.seller;
  const signature = toHex(s.ctx.sign(signer, b.channel.id, cumulative));
  const buyerHeader = {
    x402Version: 2,
    accepted: seller.requirements,
    payload: { channelId: b.channel.id.toString(), cumulative: cumulative.toString(), signature },
  };
  const body = {
    x402Version: 2,
    paymentPayload: { ...buyerHeader, resource: seller.resource, extensions: { bazaar: seller.bazaar } },
    paymentRequirements: seller.requirements,
    method: METHOD,
    requestHash: seller.requestHash,
  };
  return { kind, cumulative, key: kind === 'good' ? b.key : newKey(), payload: JSON.stringify(body) };
}

/** A good voucher was accepted: the buyer's books and its seller's move on. */
export function accepted(b: Buyer, cumulative: bigint): void {
  b.seller.acceptedSum += cumulative - b.last;
  b.seller.acceptedCount++;
  b.last = cumulative;
  b.key = newKey();
  b.unsure = false;
}
