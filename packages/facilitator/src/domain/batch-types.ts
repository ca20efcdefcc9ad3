// What batch-settlement payments take and answer (batch-payments.ts): the input of /verify, /settle
// and a stream slice's charge, the refusal, the outcomes, and the hook that sees them.
import type {
  BatchCode,
  BatchPayment,
  BatchRequirements,
  ChannelState,
  PaymentIdRejection,
  PaymentRequirements,
  PaymentResponse,
  Receipt,
  VoucherState,
} from '@svc/core';
import type { WriteOp } from '../store/port.js';

export interface BatchInput {
  payment: BatchPayment;
  requirements: BatchRequirements;
  /** The same terms as svc's `channel` terms (unit, unit price, slices): for receipts, listings and streams. */
  terms: PaymentRequirements;
  /** The most this payment may charge: at /verify its price, at /settle the charge (≤ the price). */
  amount: bigint;
  resource: string;
  method: string;
  requestHash: string | null;
  idempotencyKey: string | null;
  /**
   * More ops for the same atomic write as the charge (a stream slice credited with its voucher).
   * If one of them fails, nothing is charged and the refusal says `conflict`: the caller, which
   * knows what its ops required, says why.
   */
  extraOps?: (charged: { receipt: Receipt }) => WriteOp[];
  /** The client's address, for the sponsored-deposit limit per address (deposits.ts). */
  ip?: string | null;
  /** x402's payment-identifier (payment-ids.ts): the buyer's name for this payment, if it gave one. */
  paymentId?: string | null;
}

export interface BatchRefused {
  ok: false;
  code: BatchCode | 'RATE_LIMITED' | PaymentIdRejection;
  message: string;
  payer?: string;
  retryAfter?: number;
  /** With cumulative_amount_mismatch: what the buyer's books must catch up to. */
  channelState?: ChannelState;
  voucherState?: VoucherState;
  /** One of the input's extraOps refused the write: nothing was charged. */
  conflict?: true;
}

/**
 * Runs after every /verify and /settle judged here (a stream slice's charge included), with its
 * outcome (or the error it threw: the store unavailable) and how long it took, in ms. It runs on
 * the payment's path: it must cost O(1).
 */
export type BatchJudgedHook = (
  event: { kind: 'verify' | 'settle'; ms: number } & ({ outcome: BatchVerified | BatchSettled } | { error: unknown }),
) => void;

export type BatchVerified = { ok: true; payer: string; channelState: ChannelState } | BatchRefused;

export type BatchSettled =
  | {
      ok: true;
      payer: string;
      chargedAmount: bigint;
      channelState: ChannelState;
      /** The svc envelope of the receipt; null for a charge of nothing (no receipt is issued). */
      response: PaymentResponse | null;
      /** The first answer to an earlier copy (Idempotency-Key), not a new charge. */
      replayed?: true;
      /** A deposit payload's transaction (its hash) and what it deposited: the deposit response. */
      deposit?: { transaction: string; amount: bigint };
    }
  | BatchRefused;
