// `voucher.accepted` in the audit log: one event per receipt, in the same write as the receipt, for
// a `channel` advance (voucher-advance.ts) and a batch-settlement charge (batch-payments.ts) alike,
// so that the event feed, the console and revenue read one shape whichever scheme paid.
import type { Receipt } from '@svc/core';
import type { WriteOp } from '../store/port.js';

/**
 * The event op of an accepted payment's receipt. Only a batch-settlement event names its scheme:
 * a `channel` one names none, as every event written before that scheme existed.
 */
export function acceptedEvent(receipt: Receipt, latencyMs: number, scheme?: string): WriteOp {
  return {
    op: 'event',
    event: {
      type: 'voucher.accepted',
      source: 'facilitator',
      ts: receipt.ts,
      channelId: BigInt(receipt.channelId),
      accounts: [receipt.payer, receipt.payee],
      data: {
        channelId: receipt.channelId,
        payer: receipt.payer,
        payee: receipt.payee,
        cumulative: receipt.cumulative,
        delta: receipt.amount,
        unit: receipt.unit,
        resource: receipt.resource,
        latencyMs,
        receiptId: receipt.id,
        ...(scheme === undefined ? {} : { scheme }),
      },
    },
  };
}
