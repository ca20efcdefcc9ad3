// The x402 facilitator endpoints: GET /supported, POST /verify, POST /settle, in the shapes the
// x402 2.x facilitator client parses: a rejected payment is 200 with isValid/success false (the
// official client turns a non-2xx into a 502), a malformed request body is a 400.
import {
  BATCH_SCHEME,
  BatchRequirementsSchema,
  batchCode,
  channelTermsOf,
  decodeBatchPayment,
  formatUnits,
  ErrorBodySchema,
  IDEMPOTENCY_KEY_RE,
  SettleResponseSchema,
  SupportedResponseSchema,
  SvcError,
  UnservedRequestSchema,
  UnservedResponseSchema,
  VerifyEnvelopeSchema,
  VerifyRequestSchema,
  VerifyResponseSchema,
  decodePayment,
  isBatchRefundPayload,
  readPaymentId,
  safeParse,
} from '@svc/core';
import type {
  BatchCode,
  ChannelState,
  PaymentIdRejection,
  PaymentRejection,
  SupportedResponse,
  VerifyEnvelope,
  VoucherState,
} from '@svc/core';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { listingOf } from '../../domain/catalog.js';
import type { BatchAttempt, PaymentAttempt, Payments, Refused } from '../../domain/payments.js';
import type { BatchInput, BatchRefused } from '../../domain/batch-types.js';
import type { BatchRefunds } from '../../domain/refunds.js';
import type { SellerTokens } from '../../domain/seller-tokens.js';
import type { VerifyInput } from '../../domain/verifier.js';
import type { Metrics } from '../../metrics/metrics.js';
import { bearerOf, requireSeller } from '../seller-auth.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import { settleRefund, verifyRefund } from './x402-refund.js';

/** Built once: zod compiles a schema's fast path on first use, which costs more than the parse. */
const ResourceUrlSchema = z.object({ url: z.string().max(2048) });
const TAGS = ['x402'];
/** The payee's side (its seller token) gets the attest token and its resource listed in discovery. */
const SELLER_AUTH = { scheme: 'sellerToken', optional: true } as const;
const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  description:
    'A repeat of an accepted request with the same key and voucher gets the first answer (1–128 of [A-Za-z0-9_.:-]).',
};

export interface X402Deps {
  payments: Payments;
  /** batch-settlement refund payloads (x402-refund.ts). */
  refunds: BatchRefunds;
  sellerTokens: SellerTokens;
  network: string;
  supported: () => SupportedResponse;
  /** Counts the payments refused here, before the verifier (which counts the others); null: off. */
  metrics: Metrics | null;
}

/** What /verify and /settle answer when the payment cannot be taken now (both with Retry-After). */
const REFUSED_FOR_NOW = {
  429: {
    description:
      'Voucher rate limit of the channel, or the sponsored-deposit limit (per payer, per client address) of a batch-settlement deposit payload',
    schema: ErrorBodySchema,
  },
  503: {
    description:
      'Ledger unavailable (LEDGER_UNAVAILABLE), or the store cannot commit (FACILITATOR_UNAVAILABLE): nothing was accepted; Retry-After says when to retry',
    schema: ErrorBodySchema,
  },
} as const;

export function x402Routes(deps: X402Deps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/supported',
      summary: 'Schemes, networks and receipt signers this facilitator handles.',
      tags: TAGS,
      responses: { 200: { description: 'Supported kinds', schema: SupportedResponseSchema } },
      handler: () => deps.supported(),
    }),
    defineRoute({
      method: 'POST',
      url: '/verify',
      summary:
        "Verifies a payment; a valid channel voucher advances the channel's highest accepted cumulative. A batch-settlement refund payload is checked without acting.",
      tags: TAGS,
      body: VerifyEnvelopeSchema,
      headers: [IDEMPOTENCY_HEADER],
      auth: SELLER_AUTH,
      responses: {
        200: {
          description:
            'isValid true with the receipt, or isValid false with the reason. A payment named with x402’s payment-identifier (paymentPayload.extensions["payment-identifier"].info.id) and accepted before is answered again for the same request; the id on another payment is invalid_payment_identifier_conflict, a malformed id invalid_payment_identifier',
          schema: VerifyResponseSchema,
        },
        400: { description: 'Malformed request', schema: ErrorBodySchema },
        401: {
          description: 'A seller token was sent but is not valid (expired, malformed, another facilitator’s)',
          schema: ErrorBodySchema,
        },
        403: { description: 'The seller token is another payTo’s', schema: ErrorBodySchema },
        ...REFUSED_FOR_NOW,
      },
      handler: async ({ body, request }) => {
        if (isBatch(body) && isBatchRefundPayload(body.paymentPayload)) return verifyRefund(deps, body);
        if (isBatch(body)) return verifyBatch(deps, request, body);
        const attempt = attemptOf(deps, request, body);
        if ('rejection' in attempt)
          return { isValid: false, invalidReason: attempt.rejection, invalidMessage: attempt.message };
        const outcome = await deps.payments.verify(attempt);
        if (outcome.ok) {
          const attest = outcome.attestToken !== null ? { attestToken: outcome.attestToken } : {};
          return {
            isValid: true,
            payer: outcome.payer,
            receipt: outcome.response.receipt,
            extra: { receipt: outcome.response, ...attest },
          };
        }
        throwIfRateLimited(outcome);
        return {
          isValid: false,
          invalidReason: outcome.code,
          invalidMessage: outcome.message,
          ...(outcome.payer ? { payer: outcome.payer } : {}),
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/verify/unserved',
      summary:
        'A meter that got no answer to its POST /verify (or, for batch-settlement, its POST /settle) in time, and served nothing, says so under the same Idempotency-Key: the payment accepted under it is accepted again, once, for the same request (the same payment, resource, method and request hash), instead of being refused as VOUCHER_NOT_INCREASING (batch-settlement: with the channel’s state, to be paid again).',
      tags: TAGS,
      body: UnservedRequestSchema,
      responses: {
        200: { description: 'Whether a payment was accepted under the key', schema: UnservedResponseSchema },
        400: { description: 'Malformed request', schema: ErrorBodySchema },
        503: {
          description: 'The store cannot commit now (FACILITATOR_UNAVAILABLE); Retry-After says when to retry',
          schema: ErrorBodySchema,
        },
      },
      handler: async ({ body }) => ({ recoverable: await deps.payments.unserved(body.idempotencyKey) }),
    }),
    defineRoute({
      method: 'POST',
      url: '/settle',
      summary:
        'Confirms an accepted voucher (verifying it first if it was not yet); settlement on the ledger is batched. A batch-settlement refund payload claims what was charged and refunds the rest (or its amount) to the payer at once: transaction and amount are the refund, once per refund nonce.',
      tags: TAGS,
      body: VerifyEnvelopeSchema,
      headers: [IDEMPOTENCY_HEADER],
      auth: SELLER_AUTH,
      responses: {
        200: {
          description:
            'success true with the receipt, or success false with the reason; for a batch-settlement deposit payload (the payer’s signed opening or top-up, which the facilitator submits at its own fees), transaction is that transaction’s hash and amount what it deposited. A payment named with x402’s payment-identifier and charged before is answered with its first charge again, not charged twice; the id on another payment is invalid_payment_identifier_conflict, a malformed id invalid_payment_identifier',
          schema: SettleResponseSchema,
        },
        400: { description: 'Malformed request', schema: ErrorBodySchema },
        401: {
          description: 'A seller token was sent but is not valid (expired, malformed, another facilitator’s)',
          schema: ErrorBodySchema,
        },
        403: { description: 'The seller token is another payTo’s', schema: ErrorBodySchema },
        ...REFUSED_FOR_NOW,
      },
      handler: async ({ body, request }) => {
        if (isBatch(body) && isBatchRefundPayload(body.paymentPayload)) return settleRefund(deps, body);
        if (isBatch(body)) return settleBatch(deps, request, body);
        const attempt = attemptOf(deps, request, body);
        const failure = (errorReason: PaymentRejection | 'CONFLICT', errorMessage: string) => ({
          success: false as const,
          errorReason,
          errorMessage,
          transaction: '' as const,
          network: deps.network,
        });
        if ('rejection' in attempt) return failure(attempt.rejection, attempt.message);
        const outcome = await deps.payments.settle(attempt);
        if (outcome.ok) return outcome.answer;
        throwIfRateLimited(outcome);
        return failure(outcome.code, outcome.message);
      },
    }),
  ];
}

/**
 * The request as a payment attempt, or the refusal the official client understands. Only the
 * payee's side (its seller token) gets the attest token and its resource listed in discovery —
 * anyone may pay a seller, but what the seller publishes is the seller's to say. A token sent for
 * another payTo is refused (403).
 */
function attemptOf(
  deps: X402Deps,
  request: FastifyRequest,
  body: VerifyEnvelope,
): PaymentAttempt | { rejection: PaymentRejection; message: string } {
  const input = verifyInput(body, idempotencyKey(request.headers['idempotency-key']));
  if ('rejection' in input) {
    // Past the scheme's check a refusal is a `channel` payment's; before it, of no known scheme.
    const known = input.rejection === 'PAYMENT_MALFORMED' ? 'channel' : null;
    deps.metrics?.paymentRefused(input.rejection, null, known);
    return input;
  }
  const payeeSide = bearerOf(request) !== null;
  if (payeeSide) requireSeller(deps.sellerTokens, request, input.requirements.payTo);
  const listing = payeeSide ? listingOf(body.paymentPayload, input.method, input.requirements.unit) : null;
  return { input, payeeSide, listing };
}

type Input = VerifyInput | { rejection: PaymentRejection; message: string };

function isBatch(body: VerifyEnvelope): boolean {
  return (body.paymentRequirements as Record<string, unknown>)['scheme'] === BATCH_SCHEME;
}

/** POST /verify of a `batch-settlement` payment: valid (and its channel reserved), or refused with the scheme's code. */
async function verifyBatch(deps: X402Deps, request: FastifyRequest, body: VerifyEnvelope) {
  const attempt = batchAttemptOf(deps, request, body);
  if ('rejection' in attempt)
    return { isValid: false as const, invalidReason: attempt.rejection, invalidMessage: attempt.message };
  const outcome = await deps.payments.verifyBatch(attempt);
  if (outcome.ok)
    return { isValid: true as const, payer: outcome.payer, extra: { channelState: outcome.channelState } };
  throwIfRateLimited(outcome);
  return {
    isValid: false as const,
    invalidReason: outcome.code,
    invalidMessage: outcome.message,
    ...(outcome.payer ? { payer: outcome.payer } : {}),
    ...correctionOf(outcome),
  };
}

/**
 * POST /settle of a `batch-settlement` payment: the channel charged `paymentRequirements.amount`
 * (what the request cost, an x402 settlement override included), with the charge and the channel
 * after it. A voucher moves nothing on the ledger, so `transaction` and `amount` are empty; a
 * deposit's answer is the deposit response: `transaction` the opening (or top-up) the facilitator
 * submitted, `amount` what it deposited.
 */
async function settleBatch(deps: X402Deps, request: FastifyRequest, body: VerifyEnvelope) {
  const attempt = batchAttemptOf(deps, request, body);
  const failure = (errorReason: BatchCode | PaymentRejection, errorMessage: string) => ({
    success: false as const,
    errorReason,
    errorMessage,
    transaction: '' as const,
    network: deps.network,
  });
  if ('rejection' in attempt) return failure(attempt.rejection, attempt.message);
  const outcome = await deps.payments.settleBatch(attempt);
  if (!outcome.ok) {
    throwIfRateLimited(outcome);
    return { ...failure(outcome.code, outcome.message), ...correctionOf(outcome) };
  }
  const receipt = outcome.response
    ? { receipt: outcome.response, ...(outcome.attestToken ? { attestToken: outcome.attestToken } : {}) }
    : {};
  return {
    success: true as const,
    transaction: outcome.deposit?.transaction ?? '',
    network: deps.network,
    payer: outcome.payer,
    amount: outcome.deposit ? formatUnits(outcome.deposit.amount) : '',
    extra: { chargedAmount: formatUnits(outcome.chargedAmount), channelState: outcome.channelState, ...receipt },
  };
}

/** The channel's state and its highest voucher, when a refusal carries them (a cumulative mismatch). */
function correctionOf(refused: BatchRefused): { extra?: { channelState: ChannelState; voucherState?: VoucherState } } {
  if (!refused.channelState) return {};
  return {
    extra: {
      channelState: refused.channelState,
      ...(refused.voucherState ? { voucherState: refused.voucherState } : {}),
    },
  };
}

/** The request as a `batch-settlement` payment, or the scheme's refusal (x402 version 2 only). */
function batchAttemptOf(
  deps: X402Deps,
  request: FastifyRequest,
  body: VerifyEnvelope,
): BatchAttempt | { rejection: BatchCode | PaymentIdRejection; message: string } {
  const read = readBatchAttempt(deps, request, body);
  // Refused before the batch machinery (which counts the others): of this scheme all the same.
  if ('rejection' in read) deps.metrics?.paymentRefused(read.rejection, null, 'batch-settlement');
  return read;
}

function readBatchAttempt(
  deps: X402Deps,
  request: FastifyRequest,
  body: VerifyEnvelope,
): BatchAttempt | { rejection: BatchCode | PaymentIdRejection; message: string } {
  if (body.x402Version !== 2)
    return { rejection: batchCode('scheme'), message: 'batch-settlement is paid with x402 version 2.' };
  const terms = safeParse(BatchRequirementsSchema, body.paymentRequirements);
  if (!terms.success) {
    const issue = terms.error.issues[0];
    return {
      rejection: batchCode('scheme'),
      message: `paymentRequirements are not batch-settlement terms: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}.`,
    };
  }
  const decoded = decodeBatchPayment(body.paymentPayload);
  if (!decoded.ok) return { rejection: batchCode('voucher_payload'), message: decoded.message };
  const paymentId = readPaymentId(body.paymentPayload);
  if (!paymentId.ok) return { rejection: 'invalid_payment_identifier', message: paymentId.message };
  const requirements = terms.data;
  const channelTerms = channelTermsOf(requirements);
  const resource = safeParse(ResourceUrlSchema, body.paymentPayload['resource']);
  const method = body.method ?? '';
  const input: BatchInput = {
    payment: decoded.value,
    requirements,
    terms: channelTerms,
    amount: BigInt(requirements.amount),
    resource: resource.success ? resource.data.url : '',
    method,
    requestHash: body.requestHash ?? null,
    idempotencyKey: idempotencyKey(request.headers['idempotency-key']),
    ip: request.ip,
    paymentId: paymentId.id,
  };
  const payeeSide = bearerOf(request) !== null;
  if (payeeSide) requireSeller(deps.sellerTokens, request, requirements.payTo);
  const listing = payeeSide ? listingOf(body.paymentPayload, method, channelTerms.unit) : null;
  return { input, payeeSide, listing };
}

/**
 * The request as svc's channel terms, or the refusal the official client understands: another x402
 * version or scheme, or requirements that are not channel terms, are rejections, not 400s.
 */
function verifyInput(envelope: VerifyEnvelope, key: string | null): Input {
  if (envelope.x402Version !== 1 && envelope.x402Version !== 2) {
    return {
      rejection: 'UNSUPPORTED_VERSION',
      message: `This facilitator speaks x402 versions 1 and 2, not ${envelope.x402Version}.`,
    };
  }
  const scheme = (envelope.paymentRequirements as Record<string, unknown>)['scheme'];
  if (scheme !== 'channel') {
    return {
      rejection: 'UNSUPPORTED_SCHEME',
      message: `This facilitator handles the \`channel\` and \`batch-settlement\` schemes, not ${JSON.stringify(scheme ?? null).slice(0, 64)}.`,
    };
  }
  const parsed = safeParse(VerifyRequestSchema, envelope);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      rejection: 'PAYMENT_MALFORMED',
      message: `paymentRequirements are not channel terms: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}.`,
    };
  }
  const body = parsed.data;
  const decoded = decodePayment(body.paymentPayload);
  if (!decoded.ok) return { rejection: 'PAYMENT_MALFORMED', message: decoded.message };
  const paymentId = readPaymentId(body.paymentPayload);
  if (!paymentId.ok) return { rejection: 'invalid_payment_identifier', message: paymentId.message };
  const resource = safeParse(ResourceUrlSchema, body.paymentPayload['resource']);
  const requirements = body.paymentRequirements;
  const method = body.method ?? '';
  return {
    payment: decoded.value,
    requirements,
    resource: resource.success ? resource.data.url : '',
    method,
    requestHash: body.requestHash ?? null,
    idempotencyKey: key,
    paymentId: paymentId.id,
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
function throwIfRateLimited(outcome: {
  code: Refused['code'] | BatchRefused['code'];
  message: string;
  retryAfter?: number | undefined;
}): void {
  if (outcome.code === 'RATE_LIMITED') {
    throw new SvcError('RATE_LIMITED', outcome.message, { retryAfter: outcome.retryAfter ?? 60 });
  }
}
