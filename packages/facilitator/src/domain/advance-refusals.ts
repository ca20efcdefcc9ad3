// What a refused advance means, read from the position of the op the store refused in the advance's
// op list (voucher-advance.ts: the channel's compare-and-set first, then the receipt, the event, the
// payment id and the client's Idempotency-Key, then the caller's extra ops).
import type { WriteOp, WriteResult } from '../store/port.js';
import { isVerifyKey } from './verify-keys.js';

export type AdvanceRefusal =
  /** The compare-and-set lost: another voucher advanced the channel. */
  | { kind: 'lost' }
  /** An op after it failed (a caller's extra op): nothing is accepted. */
  | { kind: 'conflict' }
  /** The payment id was taken meanwhile: nothing accepted; what the id holds answers. */
  | { kind: 'named' };

type Refused = Extract<WriteResult, { ok: false }>;

/**
 * The op list again without the client's Idempotency-Key, when that key is what was refused as a
 * duplicate: it belongs to another voucher, and this one is accepted without remembering it. Null
 * when the refusal was anything else.
 */
export function withoutForeignKey(ops: readonly WriteOp[], result: WriteResult): WriteOp[] | null {
  if (result.ok || result.reason !== 'duplicate') return null;
  const refused = ops[result.op];
  if (refused?.op !== 'idempotency' || !isVerifyKey(refused.key)) return null;
  return ops.filter((_, i) => i !== result.op);
}

export function refusalOf(ops: readonly WriteOp[], result: Refused): AdvanceRefusal {
  if (result.reason === 'duplicate' && ops[result.op]?.op === 'payment.id') return { kind: 'named' };
  return result.op === 0 ? { kind: 'lost' } : { kind: 'conflict' };
}
