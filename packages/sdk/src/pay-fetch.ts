// payFetch: fetch that pays. On a 402 it reads the terms, signs exactly what is owed with the
// channel's signer, retries once with PAYMENT-SIGNATURE, and returns the response with the receipt
// after checking the receipt offline against the facilitator's published signer.
//
//   const res = await payFetch('http://127.0.0.1:4020/demo/book', {}, { signer });
//   res.status === 200; res.payment?.receipt.cumulative
import {
  ChannelViewSchema,
  decodeJsonHeader,
  encodeJsonHeader,
  globalFetch,
  owedPerPayment,
  PaymentRequiredSchema,
  readPaymentResponse,
  PAYMENT_ID_RE,
  safeParse,
  SupportedResponseSchema,
  verifyReceipt,
  withPaymentId,
} from '@svc/core';
import type { PaymentRequired, PaymentRequirements, PaymentResponse } from '@svc/core';
import type { ChannelSigner } from './channel-signer.js';

export type PaidResponse = Response & { payment: PaymentResponse | null };

export interface PayFetchOptions {
  /** The channel to pay from, or a function choosing one for the terms (opening one if need be). */
  signer: ChannelSigner | ((terms: PaymentRequirements) => Promise<ChannelSigner>);
  fetch?: typeof fetch;
  /** Refuse to pay more than this for one request (a guard against a misconfigured seller). */
  maxAmount?: bigint;
  /** Receipt signers to trust; read from the facilitator's /supported when omitted. */
  trustedSigners?: readonly string[];
  /**
   * x402's payment-identifier: this request's name for its payment (16–128 of [A-Za-z0-9_-]), sent
   * where the seller's 402 declares the extension. Call payFetch again for the same request with
   * the same id (after a lost answer, a 503): the payment is the same one, answered as charged and
   * not charged twice. A new request needs a new id (generatePaymentId from @svc/core).
   */
  paymentId?: string;
}

export class PaymentError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly response?: Response,
  ) {
    super(message);
    this.name = 'PaymentError';
  }
}

/** A facilitator's signers as last read, and when: a receipt by a signer not among them reads them again. */
const signerCache = new Map<string, { signers: Promise<readonly string[]>; at: number }>();
/**
 * How soon a facilitator's /supported is read again for a receipt by a signer it did not list (a
 * facilitator that rotated its key since): at most this often, so that receipts naming unknown
 * signers cost the facilitator one request per interval, not one per payment.
 */
const SIGNERS_REREAD_MS = 1_000;

export async function payFetch(
  url: string | URL,
  init: RequestInit = {},
  options: PayFetchOptions,
): Promise<PaidResponse> {
  const doFetch = options.fetch ?? globalFetch;
  const first = await doFetch(url, init);
  if (first.status !== 402) return withPayment(first, null);
  const terms = await readTerms(first);
  const accept = terms.accepts.find((a) => a.scheme === 'channel');
  if (!accept) throw new PaymentError('the seller offers no `channel` payment option', 'NO_CHANNEL_TERMS', first);
  const owed = owedPerPayment(accept);
  if (options.maxAmount !== undefined && owed > options.maxAmount) {
    throw new PaymentError(
      `the seller asks ${owed}, above the limit of ${options.maxAmount}`,
      'PRICE_ABOVE_LIMIT',
      first,
    );
  }
  if (options.paymentId !== undefined && !PAYMENT_ID_RE.test(options.paymentId))
    throw new PaymentError(
      'paymentId must be 16–128 characters of [A-Za-z0-9_-] (generatePaymentId makes one)',
      'BAD_PAYMENT_ID',
    );
  const signer = typeof options.signer === 'function' ? await options.signer(accept) : options.signer;
  checkChannelFits(signer, accept);
  const named = options.paymentId === undefined ? undefined : withPaymentId(terms.extensions, options.paymentId);
  return signer.exclusive(async () => {
    let paid = await payOnce(doFetch, url, init, terms, accept, signer, owed, named);
    const code = paid.res.status === 402 ? rejectionCode(paid.res) : null;
    if (code === 'VOUCHER_NOT_INCREASING' || code === 'VOUCHER_UNDERPAID') {
      // Our books were behind the facilitator's (a lost answer, a wallet file saved before its
      // last payment): catch up, once, but never past what this signer itself signed.
      await resync(doFetch, accept, signer, paid.res);
      paid = await payOnce(doFetch, url, init, terms, accept, signer, owed, named);
    }
    const { res, cumulative } = paid;
    // A seller whose handler failed after its gate took the payment still answers with the receipt:
    // the payment stands, and the books follow it.
    if (!res.ok && !res.headers.has('payment-response') && !res.headers.has('x-payment-response'))
      return withPayment(res, null);
    const payment = await checkReceipt(res, accept, signer, cumulative, options, doFetch);
    signer.confirm(cumulative);
    return withPayment(res, payment);
  });
}

async function payOnce(
  doFetch: typeof fetch,
  url: string | URL,
  init: RequestInit,
  terms: PaymentRequired,
  accept: PaymentRequirements,
  signer: ChannelSigner,
  owed: bigint,
  extensions: Record<string, unknown> | undefined,
): Promise<{ res: Response; cumulative: bigint }> {
  const payload = signer.next(owed);
  // The same request again signs the same voucher (its books moved only with a paid answer), under the same id.
  const named =
    extensions && extensions['payment-identifier']
      ? { extensions: { 'payment-identifier': extensions['payment-identifier'] } }
      : {};
  const header = encodeJsonHeader({ x402Version: 2, accepted: accept, payload, resource: terms.resource, ...named });
  const headers = new Headers(init.headers);
  headers.set('PAYMENT-SIGNATURE', header);
  return { res: await doFetch(url, { ...init, headers }), cumulative: BigInt(payload.cumulative) };
}

/** The x402 v2 terms of a 402: the PAYMENT-REQUIRED header, else the JSON body. */
export async function readTerms(res: Response): Promise<PaymentRequired> {
  const header = res.headers.get('payment-required');
  const fromHeader = header ? decodeJsonHeader(header, 64 * 1024) : null;
  const candidate: unknown = fromHeader?.ok
    ? fromHeader.value
    : await res
        .clone()
        .json()
        .catch(() => null);
  const parsed = safeParse(PaymentRequiredSchema, candidate);
  if (!parsed.success) throw unreadableTerms(candidate, res);
  return parsed.data;
}

/** Why a 402's terms cannot be paid: another scheme only (named), or no x402 v2 terms at all. */
function unreadableTerms(candidate: unknown, res: Response): PaymentError {
  const terms = candidate as { x402Version?: unknown; accepts?: unknown } | null;
  const accepts =
    terms?.x402Version === 2 && Array.isArray(terms.accepts)
      ? (terms.accepts as { scheme?: unknown; network?: unknown }[])
      : [];
  const offers = accepts
    .filter((a) => typeof a?.scheme === 'string')
    .map((a) => `${String(a.scheme)}${typeof a.network === 'string' ? ` (on ${a.network})` : ''}`);
  if (offers.length > 0 && !accepts.some((a) => a?.scheme === 'channel')) {
    const list = offers.slice(0, 8).join(', ');
    return new PaymentError(
      `the seller offers the x402 scheme${offers.length === 1 ? '' : 's'} ${list}; svc pays only the \`channel\` scheme`,
      'UNSUPPORTED_SCHEME',
      res,
    );
  }
  return new PaymentError('the 402 carries no readable x402 v2 terms', 'BAD_TERMS', res);
}

function checkChannelFits(signer: ChannelSigner, accept: PaymentRequirements): void {
  const mismatch =
    signer.payee !== accept.payTo
      ? `pays ${signer.payee}, the seller is ${accept.payTo}`
      : signer.network !== accept.network
        ? `is on ${signer.network}, the seller wants ${accept.network}`
        : signer.asset !== accept.asset
          ? `holds ${signer.asset}, the seller wants ${accept.asset}`
          : signer.channelContract !== accept.extra.channelContract
            ? 'belongs to another channel contract'
            : null;
  if (mismatch) throw new PaymentError(`channel ${signer.channelId} ${mismatch}`, 'CHANNEL_MISMATCH');
}

/** The reason code of a refused payment's 402 (its PAYMENT-REQUIRED header), or null. */
export function rejectionCode(res: Response): string | null {
  const header = res.headers.get('payment-required');
  const decoded = header ? decodeJsonHeader(header, 64 * 1024) : null;
  const body = decoded?.ok ? (decoded.value as { error?: unknown }) : null;
  return typeof body?.error === 'string' ? body.error : null;
}

/**
 * Catches the books up with the channel as the terms' facilitator shows it (`channel` scheme). The seller names that
 * facilitator, so its word is believed only up to what this signer has itself signed: no voucher
 * above that exists, and one that pays for more than the price must not be signed.
 */
export async function resync(
  doFetch: typeof fetch,
  accept: PaymentRequirements,
  signer: ChannelSigner,
  refused: Response,
): Promise<void> {
  const res = await doFetch(`${accept.extra.facilitator}/channels/${signer.channelId}`);
  const view = safeParse(ChannelViewSchema, await res.json().catch(() => null));
  if (!view.success) return;
  const accepted = BigInt(view.data.lastAccepted);
  if (accepted > signer.signed)
    throw new PaymentError(
      `${accept.extra.facilitator} says channel ${signer.channelId} accepted ${accepted}, but this signer never signed more than ${signer.signed}: not paying on that account (if another process pays from this channel, it must share its books)`,
      'RESYNC_REFUSED',
      refused,
    );
  signer.confirm(accepted);
}

async function checkReceipt(
  res: Response,
  accept: PaymentRequirements,
  signer: ChannelSigner,
  signed: bigint,
  options: PayFetchOptions,
  doFetch: typeof fetch,
): Promise<PaymentResponse> {
  const header = res.headers.get('payment-response') ?? res.headers.get('x-payment-response');
  const decoded = header ? decodeJsonHeader(header, 64 * 1024) : null;
  const payment = readPaymentResponse(decoded?.ok ? decoded.value : null);
  if (!payment) throw new PaymentError('the paid response carries no readable PAYMENT-RESPONSE', 'BAD_RECEIPT', res);
  // The seller answered (and was paid): the answer goes with an error, to be read or retried.
  const trusted =
    options.trustedSigners ?? (await trustedSigners(doFetch, accept.extra.facilitator, res, payment.receipt.signer));
  const check = verifyReceipt(payment.receipt, trusted);
  if (!check.ok) throw new PaymentError(`the receipt does not verify: ${check.reason}`, 'BAD_RECEIPT', res);
  const r = payment.receipt;
  // The receipt of this payment names the voucher just signed: another cumulative is not its receipt.
  if (r.channelId !== signer.channelId.toString() || r.payee !== accept.payTo || BigInt(r.cumulative) !== signed) {
    throw new PaymentError(
      `the receipt is for another channel, payee or amount (this payment signed ${signed})`,
      'BAD_RECEIPT',
      res,
    );
  }
  return payment;
}

/**
 * The receipt signers to trust for `facilitator`, or PaymentError FACILITATOR_UNREADABLE (with
 * `res`, the seller's answer, attached) when its /supported cannot be read. With `signer`, the
 * signer of the receipt at hand: when the list read earlier lacks it, the list is read again (not
 * more often than every SIGNERS_REREAD_MS): the facilitator may have rotated its key since.
 */
export async function trustedSigners(
  doFetch: typeof fetch,
  facilitator: string,
  res: Response,
  signer?: string,
): Promise<readonly string[]> {
  try {
    const signers = await facilitatorSigners(doFetch, facilitator);
    if (signer === undefined || signers.includes(signer)) return signers;
    const cached = signerCache.get(facilitator);
    if (cached && Date.now() - cached.at < SIGNERS_REREAD_MS) return signers;
    signerCache.delete(facilitator);
    return await facilitatorSigners(doFetch, facilitator);
  } catch (err) {
    throw new PaymentError(
      `the receipt cannot be checked: ${facilitator}/supported did not give the receipt signers (${(err as Error).message})`,
      'FACILITATOR_UNREADABLE',
      res,
    );
  }
}

/** The facilitator's published receipt signers (GET /supported), cached per facilitator. */
export function facilitatorSigners(doFetch: typeof fetch, facilitator: string): Promise<readonly string[]> {
  let pending = signerCache.get(facilitator)?.signers;
  if (!pending) {
    pending = (async () => {
      const res = await doFetch(`${facilitator}/supported`);
      const supported = safeParse(SupportedResponseSchema, await res.json().catch(() => null));
      if (!supported.success) throw new Error(`HTTP ${res.status}, not the x402 /supported answer`);
      return Object.values(supported.data.signers).flat();
    })();
    pending.catch(() => signerCache.delete(facilitator));
    signerCache.set(facilitator, { signers: pending, at: Date.now() });
  }
  return pending;
}

function withPayment(res: Response, payment: PaymentResponse | null): PaidResponse {
  return Object.assign(res, { payment });
}
