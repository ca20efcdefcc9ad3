// The x402 facilitator endpoints: GET /supported, POST /verify, POST /settle, in the shapes the
// x402 2.x facilitator client parses: a rejected payment is 200 with isValid/success false (the
// official client turns a non-2xx into a 502), a malformed request body is a 400.
import {
  ErrorBodySchema,
  SettleResponseSchema,
  SupportedResponseSchema,
  SvcError,
  VerifyEnvelopeSchema,
  VerifyRequestSchema,
  VerifyResponseSchema,
  decodePayment,
  fromHex,
  safeParse,
} from '@svc/core';
import type { PaymentRejection, PaymentResponse, SettleSuccess, VerifyEnvelope } from '@svc/core';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { listingOf } from '../../domain/catalog.js';
import type { Listing } from '../../domain/catalog.js';
import { paymentResponseOf } from '../../domain/payment-response.js';
import type { VerifyInput, VerifyOutcome } from '../../domain/verifier.js';
import type { WriteOp } from '../../store/port.js';
import type { Services } from '../../services.js';
import { bearerOf, requireSeller } from '../seller-auth.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

const IDEMPOTENCY_KEY_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
const TAGS = ['x402'];
/** The payee's side (its seller token) gets the attest token and its resource listed in discovery. */
const SELLER_AUTH = { scheme: 'sellerToken', optional: true } as const;
const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  description:
    'A repeat of an accepted request with the same key and voucher gets the first answer (1–128 of [A-Za-z0-9_.:-]).',
};

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
      body: VerifyEnvelopeSchema,
      headers: [IDEMPOTENCY_HEADER],
      auth: SELLER_AUTH,
      responses: {
        200: {
          description: 'isValid true with the receipt, or isValid false with the reason',
          schema: VerifyResponseSchema,
        },
        400: { description: 'Malformed request', schema: ErrorBodySchema },
        401: {
          description: 'A seller token was sent but is not valid (expired, malformed, another facilitator’s)',
          schema: ErrorBodySchema,
        },
        403: { description: 'The seller token is another payTo’s', schema: ErrorBodySchema },
        429: { description: 'Voucher rate limit of the channel', schema: ErrorBodySchema },
        503: {
          description:
            'Ledger unavailable (LEDGER_UNAVAILABLE), or the store cannot commit (FACILITATOR_UNAVAILABLE): nothing was accepted; Retry-After says when to retry',
          schema: ErrorBodySchema,
        },
      },
      handler: async ({ body, request }) => {
        const input = verifyInput(body, idempotencyKey(request.headers['idempotency-key']));
        if ('rejection' in input)
          return { isValid: false, invalidReason: input.rejection, invalidMessage: input.message };
        const payee = payeeSide(s, request, input);
        // A stream's first slice: charge it only if a session can be opened for it.
        if (input.requirements.unit !== 'request') await s.streams.checkCapacity(input.payment.channelId);
        const outcome = await s.verifier.verify(input);
        if (outcome.ok && payee) list(s, body, input, outcome);
        // The attest token is the payee's side's alone: a buyer calling /verify itself gets none.
        if (outcome.ok) {
          const attest = payee ? { attestToken: s.attestations.tokenFor(outcome.response.receipt.id) } : {};
          return { isValid: true, payer: outcome.payer, extra: { receipt: outcome.response, ...attest } };
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
      url: '/settle',
      summary:
        'Confirms an accepted voucher (verifying it first if it was not yet); settlement on the ledger is batched.',
      tags: TAGS,
      body: VerifyEnvelopeSchema,
      headers: [IDEMPOTENCY_HEADER],
      auth: SELLER_AUTH,
      responses: {
        200: {
          description: 'success true with the receipt, or success false with the reason',
          schema: SettleResponseSchema,
        },
        400: { description: 'Malformed request', schema: ErrorBodySchema },
        401: {
          description: 'A seller token was sent but is not valid (expired, malformed, another facilitator’s)',
          schema: ErrorBodySchema,
        },
        403: { description: 'The seller token is another payTo’s', schema: ErrorBodySchema },
      },
      handler: async ({ body, request }) => {
        const network = s.ledgerInfo.network;
        const failure = (errorReason: PaymentRejection | 'CONFLICT', errorMessage: string) => ({
          success: false as const,
          errorReason,
          errorMessage,
          transaction: '' as const,
          network,
        });
        const key = idempotencyKey(request.headers['idempotency-key']);
        const input = verifyInput(body, key);
        if ('rejection' in input) return failure(input.rejection, input.message);
        const payee = payeeSide(s, request, input);
        const accepted = await acceptedBefore(s, input);
        if (accepted) {
          // Confirmed once (a seller that settles before serving must not serve a replay again):
          // a repeat is refused unless it is the same request again, under its Idempotency-Key.
          const answer = settled(accepted);
          const first = await s.store.write([
            settledOnce(accepted.receipt.id, key, answer, new Date(s.clock.now()).toISOString()),
          ]);
          if (first.ok) return answer;
          const earlier = await s.store.getIdempotent(settledKey(accepted.receipt.id));
          if (key !== null && earlier?.fingerprint === key) {
            if (earlier.response !== '') return JSON.parse(earlier.response) as ReturnType<typeof settled>;
            // /settle accepted it itself: the verifier's record under the key has the first answer.
            const again = await s.verifier.verify(input);
            if (again.ok) return settled(again.response);
          }
          return failure(
            'VOUCHER_NOT_INCREASING',
            'This voucher was settled already; send a new one (a retry of the same request carries its Idempotency-Key).',
          );
        }
        const outcome = await s.verifier.verify({
          ...input,
          extraOps: ({ receipt }) => [settledOnce(receipt.id, key, null, receipt.ts)],
        });
        if (outcome.ok && payee) list(s, body, input, outcome);
        if (outcome.ok) return settled(outcome.response);
        throwIfRateLimited(outcome);
        return failure(outcome.code, outcome.message);
      },
    }),
  ];
}

/**
 * Whether the caller proved to be the payee's side (its seller token): only then does an acceptance
 * hand out the attest token and write the discovery listing — anyone may pay a seller, but what the
 * seller publishes is the seller's to say. A token sent for another payTo is refused (403).
 */
function payeeSide(s: Services, request: FastifyRequest, input: VerifyInput): boolean {
  if (bearerOf(request) === null) return false;
  requireSeller(s.sellerTokens, request, input.requirements.payTo);
  return true;
}

/** A fresh acceptance lists its resource in the discovery catalog (domain/catalog.ts). */
function list(
  s: Services,
  body: VerifyEnvelope,
  input: VerifyInput,
  outcome: Extract<VerifyOutcome, { ok: true }>,
): void {
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
  return { ...response, amount: response.delta, extra: svc } satisfies SettleSuccess;
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
      message: `This facilitator handles the \`channel\` scheme only, not ${JSON.stringify(scheme ?? null).slice(0, 64)}.`,
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

/**
 * The write that confirms a receipt's voucher once through /settle. The answer is kept for a retry
 * of the same request (same Idempotency-Key); null when /settle itself accepted the voucher — the
 * verifier's own idempotency record then answers a retry.
 */
function settledOnce(
  receiptId: string,
  key: string | null,
  answer: ReturnType<typeof settled> | null,
  at: string,
): WriteOp {
  return {
    op: 'idempotency',
    key: settledKey(receiptId),
    fingerprint: key ?? '',
    response: answer === null ? '' : JSON.stringify(answer),
    at,
  };
}

function settledKey(receiptId: string): string {
  return `settled:${receiptId}`;
}

/** x402 resource servers call /verify, serve, then /settle: the voucher is then already accepted. */
async function acceptedBefore(s: Services, input: VerifyInput): Promise<PaymentResponse | null> {
  const { payment, requirements } = input;
  const receipt = await s.store.findReceipt(payment.channelId, payment.cumulative);
  if (!receipt || receipt.payee !== requirements.payTo) return null;
  const channel = await s.book.get(payment.channelId);
  // Knowing a channel id and an amount is not enough: the payload must carry the buyer's signature.
  const signature = fromHex(payment.signature, 64);
  if (!channel?.keyIsStrict || !s.vouchers.verify(channel.voucherKey, payment.channelId, payment.cumulative, signature))
    return null;
  return paymentResponseOf(receipt, channel.record.deposit);
}
