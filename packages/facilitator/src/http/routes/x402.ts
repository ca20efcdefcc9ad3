// The x402 facilitator endpoints: GET /supported, POST /verify, POST /settle, in the shapes the
// x402 2.x facilitator client parses: a rejected payment is 200 with isValid/success false (the
// official client turns a non-2xx into a 502), a malformed request body is a 400.
import { ErrorBodySchema, SettleResponseSchema, SupportedResponseSchema, SvcError, VerifyRequestSchema, VerifyResponseSchema, decodePayment, fromHex, safeParse } from '@svc/core';
import type { PaymentRejection, PaymentResponse, VerifyRequest } from '@svc/core';
import { z } from 'zod';
import { listingOf } from '../../domain/catalog.js';
import type { Listing } from '../../domain/catalog.js';
import { paymentResponseOf } from '../../domain/payment-response.js';
import type { VerifyInput, VerifyOutcome } from '../../domain/verifier.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

const IDEMPOTENCY_KEY_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
const TAGS = ['x402'];
const IDEMPOTENCY_HEADER = { name: 'Idempotency-Key', description: 'A repeat of an accepted request with the same key and voucher gets the first answer (1–128 of [A-Za-z0-9_.:-]).' };

export function x402Routes(s: Services): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/supported',
      summary: 'Schemes, networks and receipt signers this facilitator handles.',
      tags: TAGS,
      responses: { 200: { description: 'Supported kinds', schema: SupportedResponseSchema } },
      handler: () => s.supported(),
    }),
    defineRoute({
      method: 'POST',
      url: '/verify',
      summary: "Verifies a payment; a valid channel voucher advances the channel's highest accepted cumulative.",
      tags: TAGS,
      body: VerifyRequestSchema,
      headers: [IDEMPOTENCY_HEADER],
      responses: {
        200: { description: 'isValid true with the receipt, or isValid false with the reason', schema: VerifyResponseSchema },
        400: { description: 'Malformed request', schema: ErrorBodySchema },
        429: { description: 'Voucher rate limit of the channel', schema: ErrorBodySchema },
        503: { description: 'Ledger unavailable (LEDGER_UNAVAILABLE), or the store cannot commit (FACILITATOR_UNAVAILABLE): nothing was accepted; Retry-After says when to retry', schema: ErrorBodySchema },
      },
      handler: async ({ body, request }) => {
        const input = verifyInput(body, idempotencyKey(request.headers['idempotency-key']));
        if ('rejection' in input) return { isValid: false, invalidReason: input.rejection, invalidMessage: input.message };
        // A stream's first slice: charge it only if a session can be opened for it.
        if (input.requirements.unit !== 'request') await s.streams.checkCapacity(input.payment.channelId);
        const outcome = await s.verifier.verify(input);
        if (outcome.ok) list(s, body, input, outcome);
        if (outcome.ok) return { isValid: true, payer: outcome.payer, receipt: outcome.response, attestToken: s.attestations.tokenFor(outcome.response.receipt.id) };
        throwIfRateLimited(outcome);
        return { isValid: false, invalidReason: outcome.code, invalidMessage: outcome.message, ...(outcome.payer ? { payer: outcome.payer } : {}) };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/settle',
      summary: 'Confirms an accepted voucher (verifying it first if it was not yet); settlement on the ledger is batched.',
      tags: TAGS,
      body: VerifyRequestSchema,
      headers: [IDEMPOTENCY_HEADER],
      responses: {
        200: { description: 'success true with the receipt, or success false with the reason', schema: SettleResponseSchema },
        400: { description: 'Malformed request', schema: ErrorBodySchema },
      },
      handler: async ({ body, request }) => {
        const network = s.ledgerInfo.network;
        const failure = (errorReason: PaymentRejection | 'CONFLICT', errorMessage: string) => ({ success: false as const, errorReason, errorMessage, transaction: '' as const, network });
        const input = verifyInput(body, idempotencyKey(request.headers['idempotency-key']));
        if ('rejection' in input) return failure(input.rejection, input.message);
        const confirmed = await confirmAccepted(s, input);
        if (confirmed) return settled(confirmed);
        const outcome = await s.verifier.verify(input);
        if (outcome.ok) list(s, body, input, outcome);
        if (outcome.ok) return settled(outcome.response);
        throwIfRateLimited(outcome);
        return failure(outcome.code, outcome.message);
      },
    }),
  ];
}

/** A fresh acceptance lists its resource in the discovery catalog (domain/catalog.ts). */
function list(s: Services, body: VerifyRequest, input: VerifyInput, outcome: Extract<VerifyOutcome, { ok: true }>): void {
  if (outcome.replayed) return;
  const listing: Listing | null = listingOf(body.paymentPayload, input.method, input.requirements.unit);
  if (listing) s.catalog.record(listing, input.requirements, outcome.response.receipt);
}

type Input = VerifyInput | { rejection: PaymentRejection; message: string };

/**
 * A settle answer: the svc envelope, plus its fields under `extra` and the amount — the official
 * x402 facilitator client keeps only standard fields and `extra`, so a seller on the official
 * middleware still relays the receipt to its buyer.
 */
function settled(response: PaymentResponse) {
  const { success: _s, transaction: _t, network: _n, payer: _p, ...svc } = response;
  return { ...response, amount: response.delta, extra: svc };
}

function verifyInput(body: VerifyRequest, key: string | null): Input {
  const decoded = decodePayment(body.paymentPayload);
  if (!decoded.ok) return { rejection: 'PAYMENT_MALFORMED', message: decoded.message };
  const resource = safeParse(z.object({ url: z.string().max(2048) }), body.paymentPayload['resource']);
  const requirements = body.paymentRequirements;
  const method = body.method ?? '';
  return {
    payment: decoded.value,
    requirements,
    resource: resource.success ? resource.data.url : '',
    method,
    requestHash: body.requestHash ?? null,
    idempotencyKey: key,
  };
}

function idempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY_RE.test(header)) {
    throw new SvcError('BAD_REQUEST', 'Idempotency-Key must be 1–128 characters of [A-Za-z0-9_.:-].');
  }
  return header;
}

/** RATE_LIMITED is the one rejection that is an HTTP status: 429 with Retry-After. */
function throwIfRateLimited(outcome: VerifyOutcome): void {
  if (!outcome.ok && outcome.code === 'RATE_LIMITED') {
    throw new SvcError('RATE_LIMITED', outcome.message, { retryAfter: outcome.retryAfter ?? 60 });
  }
}

/** x402 resource servers call /verify, serve, then /settle: the voucher is then already accepted. */
async function confirmAccepted(s: Services, input: VerifyInput): Promise<PaymentResponse | null> {
  const { payment, requirements } = input;
  const receipt = await s.store.findReceipt(payment.channelId, payment.cumulative);
  if (!receipt || receipt.payee !== requirements.payTo) return null;
  const channel = await s.book.get(payment.channelId);
  // Knowing a channel id and an amount is not enough: the payload must carry the buyer's signature.
  const signature = fromHex(payment.signature, 64);
  if (!channel?.keyIsStrict || !s.vouchers.verify(channel.voucherKey, payment.channelId, payment.cumulative, signature)) return null;
  return paymentResponseOf(receipt, channel.record.deposit);
}
