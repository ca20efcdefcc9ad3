// What the parts of a stream session (streams.ts) say alike: the bus topic its waits listen on,
// the events it writes, and the conflicts a voucher meets on a session that cannot take it.
import { BATCH_SCHEME, SvcError } from '@svc/core';
import type { StreamRecord, StreamScheme, WriteOp } from '../store/port.js';

/** How long a refused session (a cap reached) tells its caller to wait, in seconds. */
export const RATE_LIMIT_RETRY_SECONDS = 10;

export function topicOf(id: string): string {
  return `stream:${id}`;
}

/** A batch-settlement session's events say so; a `channel` one's are as they always were. */
export function schemeOf(s: StreamRecord): { scheme?: StreamScheme } {
  return s.scheme === BATCH_SCHEME ? { scheme: s.scheme } : {};
}

export function streamEvent(type: string, s: StreamRecord, ts: string, data: Record<string, unknown>): WriteOp {
  return {
    op: 'event',
    event: { type, source: 'facilitator', ts, channelId: s.channelId, accounts: [s.payTo], data },
  };
}

export function endedConflict(s: StreamRecord): SvcError {
  return new SvcError('CONFLICT', `Stream session ${s.id} has ended (${s.reason ?? 'ended'}).`);
}

export function pendingConflict(s: StreamRecord): SvcError {
  return new SvcError(
    'CONFLICT',
    `Stream session ${s.id} has a slice already paid and waiting for the seller: nothing was charged. Send the next voucher after the next payment-required event.`,
  );
}
