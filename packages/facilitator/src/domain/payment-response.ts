import { formatUnits } from '@svc/core';
import type { PaymentResponse, Receipt } from '@svc/core';

/** The PAYMENT-RESPONSE envelope for a receipt issued earlier (a settle, a stream's paid slice). */
export function paymentResponseOf(receipt: Receipt, deposit: bigint): PaymentResponse {
  return {
    success: true,
    transaction: '',
    network: receipt.network,
    payer: receipt.payer,
    scheme: 'channel',
    channelId: receipt.channelId,
    cumulative: receipt.cumulative,
    delta: receipt.amount,
    remaining: formatUnits(deposit - BigInt(receipt.cumulative)),
    latencyMs: 0,
    receipt,
  };
}
