import { formatUnits } from '@svc/core';
import type { PaymentResponse, Receipt } from '@svc/core';

/**
 * The PAYMENT-RESPONSE envelope for a receipt issued earlier (a settle, a stream's paid slice),
 * under the scheme it was paid with (the signed receipt itself does not name one).
 */
export function paymentResponseOf(
  receipt: Receipt,
  deposit: bigint,
  scheme: PaymentResponse['scheme'] = 'channel',
): PaymentResponse {
  return { ...answerOf(receipt, formatUnits(deposit - BigInt(receipt.cumulative)), 0), scheme };
}

/** The envelope of a receipt with the figures of its first answer (what remained then, how long it took). */
export function answerOf(receipt: Receipt, remaining: string, latencyMs: number): PaymentResponse {
  return {
    success: true,
    transaction: '',
    network: receipt.network,
    payer: receipt.payer,
    scheme: 'channel',
    channelId: receipt.channelId,
    cumulative: receipt.cumulative,
    delta: receipt.amount,
    remaining,
    latencyMs,
    receipt,
  };
}
