// The names an accepted `channel` voucher is kept under, and what is kept: the advance writes them
// (voucher-advance.ts), the replays read them (first-answers.ts).
import type { Payment } from '@svc/core';

/**
 * What an idempotency record keeps of an accepted voucher's answer: the rest is its receipt, stored
 * in the same write. A whole answer is ~1.5 KB a record, on every meter's /verify.
 */
export interface FirstAnswer {
  receiptId: string;
  remaining: string;
  latencyMs: number;
}

/** Idempotency records are shared (attestations, reports): a client's key lives in its own namespace. */
const VERIFY_KEY_PREFIX = 'verify:';

export function verifyKey(key: string): string {
  return `${VERIFY_KEY_PREFIX}${key}`;
}

/** Whether an idempotency key is a client's Idempotency-Key on /verify (verifyKey). */
export function isVerifyKey(key: string): boolean {
  return key.startsWith(VERIFY_KEY_PREFIX);
}

/** A payment whose meter gave up on its answer: accepted again, once, for its own request. */
export function recoverKey(channelId: string, cumulative: string): string {
  return `recover:${channelId}:${cumulative}`;
}

/** Written by every unserved() before it reads: a write that commits after the writes queued before it. */
export const UNSERVED_BARRIER_KEY = 'verify.unserved.last';

export function fingerprint(payment: Payment): string {
  return `${payment.channelId}:${payment.cumulative}:${payment.signature}`;
}
