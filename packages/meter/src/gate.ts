// The neutral core of the middleware: given a request, decide whether it is paid. Framework
// bindings (node.ts, fastify.ts, hono.ts) only translate requests and outcomes.
//
// Seller-side behaviour (spec "Endpoints", 1–4 and 6): no payment → 402 PAYMENT_REQUIRED with the
// terms in the body and PAYMENT-REQUIRED; a payment present but rejected → 402 with the reason
// code and the same accepts; a valid payment → the receipt (PAYMENT-RESPONSE) and on to the handler.
// A HEAD request gets the terms and is never charged.
import {
  DEFAULT_MESSAGES,
  batchCode,
  decodeBatchPayment,
  decodePayment,
  decodeJsonHeader,
  encodeJsonHeader,
  isBatchPaymentPayload,
  PAYMENT_IDENTIFIER,
  readPaymentId,
  requestHash,
  statusOf,
} from '@svc/core';
import type { Bazaar, ErrorBody, PaymentRequired, VerifyRequest } from '@svc/core';
import { SellerMisconfigured } from './facilitator-client.js';
import type { FacilitatorClient } from './facilitator-client.js';
import { EXPOSED_HEADERS } from './gate-outcome.js';
import type { Correction, GateOutcome, GateRequest, TermsOf } from './gate-outcome.js';
import { heldBatch } from './hold.js';
import type { Unsettled } from './hold.js';
import { bazaarFor, mimeTypeOf, paymentRequired, termsFor } from './terms.js';
import type { MeterOptions, Terms } from './terms.js';

/** The client as a binding sees it (client.ts): the gate of some terms, and the public URL it answers at. */
export interface GateSource {
  gate(options: MeterOptions): Gate;
  readonly publicUrl: string | undefined;
}

export interface GateDeps {
  facilitator: FacilitatorClient;
  payTo: string;
}

export class Gate {
  /** Charges this meter could not confirm (batch-settlement), by payment: see hold.ts. */
  private readonly unsettled: Unsettled = new Map();

  constructor(
    private readonly deps: GateDeps,
    readonly options: MeterOptions,
  ) {}

  async handle(req: GateRequest): Promise<GateOutcome> {
    let supported;
    try {
      supported = await this.deps.facilitator.supported();
    } catch (err) {
      if (err instanceof SellerMisconfigured) return misconfigured(err.message);
      return unavailable((err as Error).message);
    }
    const url = new URL(req.url);
    const resourceUrl = `${url.origin}${url.pathname}`;
    const offered = termsFor(this.options, this.deps.payTo, supported);
    const requirements = offered.channel;
    const bazaar = bazaarFor(this.options, req.method.toUpperCase(), url.searchParams);
    const terms = (error: string, source: 'gateway' | 'facilitator', message: string, correction?: Correction) =>
      payment402(
        paymentRequired({
          error,
          source,
          message,
          resourceUrl,
          terms: offered,
          bazaar,
          options: this.options,
          correction,
        }),
      );

    // A HEAD answer has no body to pay for: it gets the terms, and its payment is never taken.
    if (req.method.toUpperCase() === 'HEAD')
      return terms('PAYMENT_REQUIRED', 'gateway', 'A HEAD request is not charged; send the payment with GET.');
    const v2Header = req.header('payment-signature');
    const header = v2Header ?? req.header('x-payment');
    if (header === undefined) return terms('PAYMENT_REQUIRED', 'gateway', DEFAULT_MESSAGES.PAYMENT_REQUIRED);
    const json = decodeJsonHeader(header);
    if (json.ok && isBatchPaymentPayload(json.value))
      return this.batch(req, json.value as Record<string, unknown>, offered, resourceUrl, bazaar, terms, v2Header);
    const decoded = json.ok ? decodePayment(json.value) : json;
    if (!json.ok || !decoded.ok) return terms('PAYMENT_MALFORMED', 'gateway', decoded.ok ? '' : decoded.message);
    const buyer = json.value as Record<string, unknown>;
    const named = readPaymentId(buyer);
    if (!named.ok)
      return passError(
        statusOf('invalid_payment_identifier'),
        paymentIdError('invalid_payment_identifier', 'gateway', named.message),
        {},
      );
    // The buyer's payment-identifier goes on with the payment; the rest of its extensions are the seller's to say.
    const buyerExtensions = buyer['extensions'] as Record<string, unknown> | undefined;
    const id = named.id === null ? {} : { [PAYMENT_IDENTIFIER]: buyerExtensions?.[PAYMENT_IDENTIFIER] };

    const body: VerifyRequest = {
      x402Version: decoded.value.x402Version,
      // The seller, not the buyer, says which resource and what discovery metadata this is.
      paymentPayload: {
        ...(json.value as Record<string, unknown>),
        resource: {
          url: resourceUrl,
          description: this.options.description ?? '',
          mimeType: mimeTypeOf(this.options.unit),
        },
        extensions: { ...id, bazaar },
      },
      paymentRequirements: requirements,
      method: req.method.toUpperCase(),
      requestHash: requestHash(req.method, req.url, req.rawBody ?? null),
    };
    const reply = await this.deps.facilitator.verify(body);
    if (reply.kind === 'unreachable') {
      // The facilitator may have accepted the payment without our hearing of it: it stays good for
      // this request, so the buyer's retry is served, not charged again.
      await this.deps.facilitator.unserved(reply.idempotencyKey);
      return unavailable(reply.message);
    }
    if (reply.kind === 'error') return this.facilitatorError(reply, terms);
    const { verdict } = reply;
    if (
      !verdict.isValid &&
      (verdict.invalidReason === 'invalid_payment_identifier' ||
        verdict.invalidReason === 'invalid_payment_identifier_conflict')
    )
      return passError(
        statusOf(verdict.invalidReason),
        paymentIdError(verdict.invalidReason, 'facilitator', verdict.invalidMessage),
        {},
      );
    if (!verdict.isValid) return terms(verdict.invalidReason, 'facilitator', verdict.invalidMessage);
    if (!('receipt' in verdict.extra)) return unavailable('the facilitator answered /verify without a receipt');
    const { receipt: payment, attestToken: token } = verdict.extra;
    if (payment.receipt.payee !== this.deps.payTo)
      return unavailable('the facilitator returned a receipt for another payee');
    const headers: Record<string, string> = {
      'payment-response': encodeJsonHeader(payment),
      'access-control-expose-headers': EXPOSED_HEADERS,
    };
    if (v2Header === undefined) headers['x-payment-response'] = headers['payment-response']!;
    const receiptId = payment.receipt.id;
    const attest =
      this.options.unit === 'request' && token
        ? (hash: string) => this.deps.facilitator.attest(receiptId, token, hash)
        : null;
    return { kind: 'paid', payment, headers, attest };
  }

  /**
   * A `batch-settlement` payment: the facilitator verifies it and reserves the channel (POST
   * /verify, the voucher a ceiling: what was charged plus the price); the handler runs, and the
   * charge it asked for is settled once its answer is complete (hold.ts). A ceiling that does not
   * match what was charged is answered with a 402 that carries the channel's state, for the buyer
   * to catch up (the corrective 402).
   */
  private async batch(
    req: GateRequest,
    payload: Record<string, unknown>,
    offered: Terms,
    resourceUrl: string,
    bazaar: Bazaar,
    terms: TermsOf,
    v2Header: string | undefined,
  ): Promise<GateOutcome> {
    const batchTerms = offered.batch;
    if (!batchTerms)
      return terms(
        'UNSUPPORTED_SCHEME',
        'gateway',
        'This seller’s facilitator does not offer batch-settlement; pay with the channel option.',
      );
    const decoded = decodeBatchPayment(payload);
    if (!decoded.ok) return terms(batchCode('voucher_payload'), 'gateway', decoded.message);
    const named = readPaymentId(payload);
    if (!named.ok)
      return passError(
        statusOf('invalid_payment_identifier'),
        paymentIdError('invalid_payment_identifier', 'gateway', named.message),
        {},
      );
    return heldBatch({
      facilitator: this.deps.facilitator,
      payTo: this.deps.payTo,
      unit: this.options.unit,
      unsettled: this.unsettled,
      v2Header,
      request: {
        x402Version: 2,
        paymentPayload: {
          ...payload,
          resource: {
            url: resourceUrl,
            description: this.options.description ?? '',
            mimeType: mimeTypeOf(this.options.unit),
          },
          extensions: { ...(payload['extensions'] as Record<string, unknown> | undefined), bazaar },
        },
        paymentRequirements: batchTerms,
        method: req.method.toUpperCase(),
        requestHash: requestHash(req.method, req.url, req.rawBody ?? null),
      },
      payment: decoded.value,
      terms: (error, source, message, correction) =>
        // x402's payment-identifier: the id is another payment's (409), or malformed (400). A copy
        // of a payment charged under its id is answered as charged, and served again: the meter
        // keeps no body to replay, so the handler runs again and the buyer is not charged again.
        error === 'invalid_payment_identifier' || error === 'invalid_payment_identifier_conflict'
          ? passError(statusOf(error), paymentIdError(error, source, message), {})
          : terms(error, source, message, correction),
      unavailable,
      facilitatorError: (reply) => this.facilitatorError(reply, terms),
    });
  }

  /** A facilitator's error answer (not a refusal): a limit, a malformed request, or it is unavailable. */
  private facilitatorError(
    reply: Extract<Awaited<ReturnType<FacilitatorClient['verify']>>, { kind: 'error' }>,
    terms: TermsOf,
  ): GateOutcome {
    if (reply.status === 429) return passError(429, reply.body, { 'retry-after': reply.retryAfter ?? '60' });
    if (reply.status === 400)
      return terms('PAYMENT_MALFORMED', 'facilitator', reply.body?.message ?? DEFAULT_MESSAGES.PAYMENT_MALFORMED);
    if (reply.status === 503 && reply.body)
      return passError(503, reply.body, { 'retry-after': reply.retryAfter ?? '5' });
    // 401/403: the facilitator refused this seller's token; 404: the URL is not a facilitator's. The
    // seller's mistakes: the buyer is told not to retry, the seller's log says what to fix.
    if (reply.status === 401 || reply.status === 403)
      return misconfigured(
        `the facilitator at ${this.deps.facilitator.baseUrl} answered ${reply.status} ${reply.body?.error ?? ''} to this seller's token${reply.body ? `: ${reply.body.message}` : ''} — get a token for payTo ${this.deps.payTo} from this facilitator with \`svc-seller token\` (SVC_FACILITATOR=${this.deps.facilitator.baseUrl})`,
      );
    if (reply.status === 404)
      return misconfigured(
        `the facilitator at ${this.deps.facilitator.baseUrl} answered 404 to a payment: check svc({ facilitator }), the facilitator's base URL`,
      );
    return unavailable(
      reply.body
        ? `the facilitator answered ${reply.status} ${reply.body.error}: ${reply.body.message}`
        : `the facilitator answered HTTP ${reply.status}`,
    );
  }
}

function paymentIdError(
  error: 'invalid_payment_identifier' | 'invalid_payment_identifier_conflict',
  source: 'gateway' | 'facilitator',
  message: string | undefined,
): ErrorBody {
  return { error, source, message: message ?? DEFAULT_MESSAGES[error] };
}

function payment402(body: PaymentRequired): GateOutcome {
  return {
    kind: 'respond',
    status: 402,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'payment-required': encodeJsonHeader(body),
      'cache-control': 'no-store',
      'access-control-expose-headers': EXPOSED_HEADERS,
    },
    body,
  };
}

/** What was said in the seller's log already: each mistake once per process, not once per request. */
const told = new Set<string>();

/** The seller's own setup is wrong: 502 without Retry-After for the buyer, the fix in the seller's log. */
function misconfigured(detail: string): GateOutcome {
  if (!told.has(detail)) {
    if (told.size < 100) told.add(detail);
    console.warn(`@svc/meter: SELLER_MISCONFIGURED: this seller cannot take payments: ${detail}.`);
  }
  return passError(
    502,
    { error: 'SELLER_MISCONFIGURED', source: 'gateway', message: DEFAULT_MESSAGES.SELLER_MISCONFIGURED },
    {},
  );
}

export function unavailable(detail: string): GateOutcome {
  return passError(
    503,
    {
      error: 'FACILITATOR_UNAVAILABLE',
      source: 'gateway',
      message: `${DEFAULT_MESSAGES.FACILITATOR_UNAVAILABLE.replace(/\.$/, '')} (${detail}).`,
    },
    { 'retry-after': '5' },
  );
}

function passError(status: number, body: ErrorBody | null, extra: Record<string, string>): GateOutcome {
  return {
    kind: 'respond',
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'access-control-expose-headers': EXPOSED_HEADERS,
      ...extra,
    },
    body: body ?? {
      error: 'FACILITATOR_UNAVAILABLE',
      source: 'gateway',
      message: DEFAULT_MESSAGES.FACILITATOR_UNAVAILABLE,
    },
  };
}
