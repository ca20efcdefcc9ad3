import { formatUnits } from '@svc/core';
import type { PaymentResponse, Receipt } from '@svc/core';

/** The PAYMENT-RESPONSE envelope for a receipt issued earlier (a settle, a stream's paid slice). */
export function paymentResponseOf(receipt: Receipt, deposit: bigint): PaymentResponse {
  return answerOf(receipt, formatUnits(deposit - BigInt(receipt.cumulative)), 0);
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
