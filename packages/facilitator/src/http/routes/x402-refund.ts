// A `batch-settlement` refund payload at POST /verify and POST /settle (domain/refunds.ts): /verify
// says whether it would be refunded now and leaves everything as it is; /settle claims what was
// charged and refunds the rest (or the amount asked), answering the refund transaction, the amount
// refunded and the channel after it, in the shapes of a batch-settlement answer.
import { BatchRequirementsSchema, SvcError, batchCode, decodeBatchRefund, formatUnits, safeParse } from '@svc/core';
import type { BatchCode, ChannelState, PaymentIdRejection, VerifyEnvelope } from '@svc/core';
import type { BatchRefunds, RefundInput } from '../../domain/refunds.js';

export type RefundRoutesDeps = { refunds: BatchRefunds; network: string };

type Refusal = { rejection: BatchCode; message: string };

export async function verifyRefund(deps: RefundRoutesDeps, body: VerifyEnvelope) {
  const input = refundInput(body);
  if ('rejection' in input)
    return { isValid: false as const, invalidReason: input.rejection, invalidMessage: input.message };
  const outcome = await deps.refunds.verify(input);
  if (outcome.ok)
    return { isValid: true as const, payer: outcome.payer, extra: { channelState: outcome.channelState } };
  return {
    isValid: false as const,
    invalidReason: outcome.code,
    invalidMessage: outcome.message,
    ...(outcome.payer ? { payer: outcome.payer } : {}),
    ...stateOf(outcome.channelState),
  };
}

export async function settleRefund(deps: RefundRoutesDeps, body: VerifyEnvelope) {
  const failure = (errorReason: BatchCode | PaymentIdRejection | 'RATE_LIMITED', errorMessage: string) => ({
    success: false as const,
    errorReason,
    errorMessage,
    transaction: '' as const,
    network: deps.network,
  });
  const input = refundInput(body);
  if ('rejection' in input) return failure(input.rejection, input.message);
  const outcome = await deps.refunds.refund(input);
  // As for a payment: the one refusal that is an HTTP status, 429 with Retry-After.
  if (!outcome.ok && outcome.code === 'RATE_LIMITED')
    throw new SvcError('RATE_LIMITED', outcome.message, { retryAfter: outcome.retryAfter ?? 60 });
  if (!outcome.ok) return { ...failure(outcome.code, outcome.message), ...stateOf(outcome.channelState) };
  // As the scheme answers a refund: the transaction, the amount refunded, no charge.
  return {
    success: true as const,
    transaction: outcome.tx,
    network: deps.network,
    payer: outcome.payer,
    amount: formatUnits(outcome.refunded),
    extra: { channelState: outcome.channelState },
  };
}

function stateOf(state: ChannelState | undefined): { extra?: { channelState: ChannelState } } {
  return state ? { extra: { channelState: state } } : {};
}

/** The refund and the seller's terms it came with (x402 version 2 only). */
function refundInput(body: VerifyEnvelope): RefundInput | Refusal {
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
  const decoded = decodeBatchRefund(body.paymentPayload);
  if (!decoded.ok) return { rejection: batchCode('refund_payload'), message: decoded.message };
  return { refund: decoded.value, requirements: terms.data };
}
