// What a `channel` verification is asked and what it answers (verifier.ts): the words its parts —
// the amount checks, the advance, the first answers kept for replays — share.
import type { Payment, PaymentRejection, PaymentRequirements, PaymentResponse, Receipt } from '@svc/core';
import type { WriteOp } from '../store/port.js';

export interface VerifyInput {
  payment: Payment;
  requirements: PaymentRequirements;
  resource: string;
  method: string;
  requestHash: string | null;
  idempotencyKey: string | null;
  /** x402's payment-identifier (payment-ids.ts): the buyer's name for this payment, if it gave one. */
  paymentId?: string | null;
  /**
   * More ops for the same atomic write as the advance (a stream slice credited with its voucher).
   * If one of them fails, nothing is accepted and the answer is CONFLICT: the caller, which knows
   * what its ops required, says why.
   */
  extraOps?: (accepted: { delta: bigint; receipt: Receipt }) => WriteOp[];
}

export type VerifyOutcome =
  | {
      ok: true;
      response: PaymentResponse;
      payer: string;
      /** The first answer to an earlier copy (Idempotency-Key), not a new acceptance. */ replayed?: true;
    }
  | { ok: false; code: PaymentRejection | 'CONFLICT'; message: string; payer?: string; retryAfter?: number };
