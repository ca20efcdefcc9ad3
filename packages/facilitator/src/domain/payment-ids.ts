// x402's `payment-identifier` extension (core/src/payment-identifier.ts) at the facilitator: the
// answer to a payment its buyer named with an id is kept per (payTo, id) — in the same write as the
// charge it answers, so a charged payment always has its answer — until PAYMENT_ID_TTL_MS later.
// A copy of that payment for that request under the same id gets the answer again, charged once;
// the id on anything else (another voucher, another resource, method or request body, other
// terms) is refused with `invalid_payment_identifier_conflict`. The lookup runs before the
// payment's checks (a settled payment no longer passes them), so the record is bound to the exact
// payment: its voucher and signature, its request, its terms.
import { sha256, toHex, utf8 } from '@svc/core';
import type { PaymentIdRejection } from '@svc/core';
import type { Store, WriteOp } from '../store/port.js';
import type { Clock } from './clock.js';

/**
 * How long an answer stays good for a retry: a day, far beyond any client's retry loop and any
 * reservation (batch-payments.ts RESERVATION_MAX_S), and short enough that records do not pile up.
 */
export const PAYMENT_ID_TTL_MS = 24 * 60 * 60 * 1000;

/** A payment and the request it pays for, as either scheme's input holds them (VerifyInput, BatchInput). */
export interface PaidRequest {
  /** The payment itself: its voucher's channel, amount and signature. */
  payment: { channelId: bigint; cumulative: bigint; signature: string };
  /** The terms it pays on. */
  requirements: { network: string; asset: string; payTo: string };
  /** The request it pays for. */
  resource: string;
  method: string;
  requestHash: string | null;
}

export type PaymentIdLookup =
  | { kind: 'new' }
  | { kind: 'same'; response: string }
  | { kind: 'conflict'; code: PaymentIdRejection; message: string };

export class PaymentIds {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** The answer kept for this payment under (payTo, id); a conflict when the id names another payment. */
  async lookup(payTo: string, id: string, fingerprint: string): Promise<PaymentIdLookup> {
    const kept = await this.store.getPaymentId(payTo, id, new Date(this.clock.now()).toISOString());
    if (!kept) return { kind: 'new' };
    if (kept.fingerprint === fingerprint) return { kind: 'same', response: kept.response };
    return conflict(id);
  }

  /** The op that keeps `response` as the answer of this payment, for the write of its charge. */
  record(payTo: string, id: string, fingerprint: string, response: string, at: string): WriteOp {
    const expiresAt = new Date(Date.parse(at) + PAYMENT_ID_TTL_MS).toISOString();
    return { op: 'payment.id', payTo, id, fingerprint, response, at, expiresAt };
  }
}

/**
 * What a payment id is bound to: this payment, for this request, on these terms of `scheme`. The
 * parts are joined as a JSON array, then hashed: records already stored are matched by this very
 * hash, so neither the parts nor their order may change.
 */
export function paymentIdFingerprint(scheme: string, input: PaidRequest): string {
  const { payment, requirements } = input;
  const parts = [
    scheme,
    requirements.network,
    requirements.asset,
    requirements.payTo,
    payment.channelId.toString(),
    payment.cumulative.toString(),
    payment.signature.toLowerCase(),
    input.resource,
    input.method,
    input.requestHash ?? '',
  ];
  return toHex(sha256(utf8(JSON.stringify(parts))));
}

export function conflict(id: string): Extract<PaymentIdLookup, { kind: 'conflict' }> {
  return {
    kind: 'conflict',
    code: 'invalid_payment_identifier_conflict',
    message: `The payment identifier ${id} was used for another payment or request to this seller; send this payment with a new identifier (a retry of the same request sends the same payment again).`,
  };
}
