// payFetch: fetch that pays. On a 402 it reads the terms, signs exactly what is owed with the
// channel's signer, retries once with PAYMENT-SIGNATURE, and returns the response with the receipt
// after checking the receipt offline against the facilitator's published signer.
//
// It pays x402's `batch-settlement` where the seller offers it and the signer (a function, such as
// a Wallet's signerFor) gives a channel bound to its receiver authorizer: a voucher is then a
// ceiling (what was charged plus the price), the seller may charge less, and a buyer with no
// channel opens one inside its first paid request (a deposit payload) when the facilitator
// sponsors deposits. Otherwise it pays `channel`.
//
//   const res = await payFetch('http://127.0.0.1:4020/demo/book', {}, { signer });
//   res.status === 200; res.payment?.receipt.cumulative
import {
  channelTermsOf,
  ChannelViewSchema,
  decodeJsonHeader,
  encodeJsonHeader,
  globalFetch,
  isChannelTerms,
  owedPerPayment,
  PAYMENT_IDENTIFIER,
  PaymentRequiredSchema,
  readPaymentResponse,
  PAYMENT_ID_RE,
  safeParse,
  readSupported,
  verifyReceipt,
  withPaymentId,
} from '@svc/core';
import type { BatchRequirements, PaymentRequired, PaymentRequirements, PaymentResponse } from '@svc/core';
import {
  adoptAnswer,
  batchOptions,
  catchUp,
  chooseSigner,
  CORRECTIVE_CODES,
  readBatchAnswer,
  signBatch,
} from './batch-payment.js';
import type { SignerChoice } from './batch-payment.js';
import type { ChannelSigner } from './channel-signer.js';

export type PaidResponse = Response & {
  payment: PaymentResponse | null;
  /**
   * batch-settlement: the deposit this payment carried and the facilitator put on the ledger (the
   * channel's opening or top-up transaction, and what it deposited); null otherwise.
   */
  deposit: { transaction: string; amount: bigint } | null;
};

export interface PayFetchOptions {
  /**
   * The channel to pay from, or a function choosing one for the terms (opening one if need be).
   * Where the 402 offers batch-settlement, the function is asked for a channel bound to its
   * receiver authorizer, opened by the first payment's deposit where the facilitator sponsors it
   * (its second argument, as Wallet.signerFor takes it: pass it on); a channel bound to none pays `channel`.
   */
  signer: SignerChoice;
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
  const priced = (t: PaymentRequirements) => options.maxAmount === undefined || owedPerPayment(t) <= options.maxAmount;
  const offered = terms.accepts.find(isChannelTerms) ?? null;
  const accept = offered && priced(offered) ? offered : null;
  // batch-settlement where the seller offers it (for the same seller as its `channel` option).
  const offer =
    batchOptions(terms).find(
      (b) => priced(channelTermsOf(b)) && (offered === null || sameSeller(channelTermsOf(b), offered)),
    ) ?? null;
  if (!accept && !offer) {
    if (!offered && batchOptions(terms).length === 0)
      throw new PaymentError(
        'the seller offers no `channel` or `batch-settlement` payment option',
        'NO_CHANNEL_TERMS',
        first,
      );
    const asked = owedPerPayment(offered ?? channelTermsOf(batchOptions(terms)[0]!));
    throw new PaymentError(
      `the seller asks ${asked}, above the limit of ${options.maxAmount}`,
      'PRICE_ABOVE_LIMIT',
      first,
    );
  }
  if (options.paymentId !== undefined && !PAYMENT_ID_RE.test(options.paymentId))
    throw new PaymentError(
      'paymentId must be 16–128 characters of [A-Za-z0-9_-] (generatePaymentId makes one)',
      'BAD_PAYMENT_ID',
    );
  const chosen = await chooseSigner(options.signer, offer, accept);
  if (!chosen)
    throw new PaymentError(
      `the seller offers batch-settlement only (receiver authorizer ${offer!.extra.receiverAuthorizer}), and the channel given is not bound to it`,
      'NO_CHANNEL_TERMS',
      first,
    );
  const { signer, batch } = chosen;
  const named = options.paymentId === undefined ? undefined : withPaymentId(terms.extensions, options.paymentId);
  if (batch) return payBatch(doFetch, url, init, terms, batch, signer, named, options);
  const channelTerms = accept!;
  checkChannelFits(signer, channelTerms);
  const owed = owedPerPayment(channelTerms);
  return signer.exclusive(async () => {
    let paid = await payOnce(doFetch, url, init, terms, channelTerms, signer, owed, named);
    const code = paid.res.status === 402 ? rejectionCode(paid.res) : null;
    if (code === 'VOUCHER_NOT_INCREASING' || code === 'VOUCHER_UNDERPAID') {
      // Our books were behind the facilitator's (a lost answer, a wallet file saved before its
      // last payment): catch up, once, but never past what this signer itself signed.
      await resync(doFetch, channelTerms, signer, paid.res);
      paid = await payOnce(doFetch, url, init, terms, channelTerms, signer, owed, named);
    }
    const { res, cumulative } = paid;
    // A seller whose handler failed after its gate took the payment still answers with the receipt:
    // the payment stands, and the books follow it.
    if (!res.ok && !res.headers.has('payment-response') && !res.headers.has('x-payment-response'))
      return withPayment(res, null);
    const payment = await checkReceipt(res, channelTerms, signer, cumulative, options, doFetch);
    signer.confirm(cumulative);
    return withPayment(res, payment);
  });
}

/**
 * One request paid under batch-settlement: a voucher whose ceiling is what was charged plus the
 * price — with the channel's opening or top-up as a deposit payload when the signer has one
 * pending. The charged total moves by what the answer charged (a seller may charge less than the
 * price, or nothing when its handler failed); a corrective 402 that proves the channel's state with
 * this channel's own voucher moves the books (also backwards) and the request is paid again, once.
 */
async function payBatch(
  doFetch: typeof fetch,
  url: string | URL,
  init: RequestInit,
  terms: PaymentRequired,
  offer: BatchRequirements,
  signer: ChannelSigner,
  extensions: Record<string, unknown> | undefined,
  options: PayFetchOptions,
): Promise<PaidResponse> {
  checkChannelFits(signer, channelTermsOf(offer));
  const price = BigInt(offer.amount);
  const send = async () => {
    const signed = signBatch(signer, price);
    const named =
      extensions && extensions[PAYMENT_IDENTIFIER]
        ? { extensions: { [PAYMENT_IDENTIFIER]: extensions[PAYMENT_IDENTIFIER] } }
        : {};
    const header = encodeJsonHeader({
      x402Version: 2,
      accepted: offer,
      payload: signed.payload,
      resource: terms.resource,
      ...named,
    });
    const headers = new Headers(init.headers);
    headers.set('PAYMENT-SIGNATURE', header);
    return { res: await doFetch(url, { ...init, headers }), signed };
  };
  return signer.exclusive(async () => {
    let sent = await send();
    const code = sent.res.status === 402 ? rejectionCode(sent.res) : null;
    if (code !== null && CORRECTIVE_CODES.has(code)) {
      const refused = await readTerms(sent.res).catch(() => null);
      if (catchUp(signer, refused)) sent = await send();
    }
    const { res, signed } = sent;
    const header = res.headers.get('payment-response') ?? res.headers.get('x-payment-response');
    const decoded = header ? decodeJsonHeader(header, 64 * 1024) : null;
    const answer = readBatchAnswer(decoded?.ok ? decoded.value : null);
    if (!answer?.success) {
      // Not paid: a deposit it carried may not be on the ledger; the wallet reads the ledger next time.
      if (signed.deposit) signer.depositRefused();
      if (header && !answer)
        throw new PaymentError('the paid response carries no readable PAYMENT-RESPONSE', 'BAD_RECEIPT', res);
      return withPayment(res, null);
    }
    const books = adoptAnswer(signer, signed, answer);
    if (!books.ok) throw new PaymentError(books.reason, 'BAD_RECEIPT', res);
    const deposit =
      signed.deposit && answer.amount !== null && /^[0-9]+$/.test(answer.amount)
        ? { transaction: answer.transaction, amount: BigInt(answer.amount) }
        : null;
    const receipt = answer.receipt;
    if (!receipt) {
      if (books.charged !== signed.previous)
        throw new PaymentError(
          `the answer charged ${books.charged - signed.previous} with no receipt`,
          'BAD_RECEIPT',
          res,
        );
      return withPayment(res, null, deposit);
    }
    const trusted =
      options.trustedSigners ?? (await trustedSigners(doFetch, offer.extra.facilitator, res, receipt.receipt.signer));
    const check = verifyReceipt(receipt.receipt, trusted);
    if (!check.ok) throw new PaymentError(`the receipt does not verify: ${check.reason}`, 'BAD_RECEIPT', res);
    const r = receipt.receipt;
    // The receipt of this payment names the channel's charged total after it.
    if (
      r.channelId !== signer.channelId.toString() ||
      r.payee !== offer.payTo ||
      BigInt(r.cumulative) !== books.charged
    )
      throw new PaymentError(
        `the receipt is for another channel, payee or amount (the channel's charged total is ${books.charged})`,
        'BAD_RECEIPT',
        res,
      );
    return withPayment(res, receipt, deposit);
  });
}

function sameSeller(a: PaymentRequirements, b: PaymentRequirements): boolean {
  return (
    a.payTo === b.payTo &&
    a.network === b.network &&
    a.asset === b.asset &&
    a.extra.channelContract === b.extra.channelContract &&
    a.extra.facilitator === b.extra.facilitator
  );
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
  if (offers.length > 0 && !accepts.some((a) => a?.scheme === 'channel' || a?.scheme === 'batch-settlement')) {
    const list = offers.slice(0, 8).join(', ');
    return new PaymentError(
      `the seller offers the x402 scheme${offers.length === 1 ? '' : 's'} ${list}; svc pays the \`channel\` and \`batch-settlement\` schemes`,
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
    pending = readSupported(facilitator, { fetch: doFetch }).then((supported) =>
      Object.values(supported.signers).flat(),
    );
    pending.catch(() => signerCache.delete(facilitator));
    signerCache.set(facilitator, { signers: pending, at: Date.now() });
  }
  return pending;
}

function withPayment(
  res: Response,
  payment: PaymentResponse | null,
  deposit: { transaction: string; amount: bigint } | null = null,
): PaidResponse {
  return Object.assign(res, { payment, deposit });
}
