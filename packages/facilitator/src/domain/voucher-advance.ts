// The advance of a `channel` voucher that passed its checks: the receipt signed, and one atomic write
// of its op list — the channel's compare-and-set, the receipt, `voucher.accepted`, the payment id
// and the client's Idempotency-Key with the first answer, and any extra ops of the caller. The
// write is durable before the receipt leaves: two copies of one voucher give exactly one
// acceptance, in one process or many. What a refused write means is advance-refusals.ts.
import { formatUnits } from '@svc/core';
import type { PaymentResponse, Receipt } from '@svc/core';
import type { ChannelRecord, WriteOp } from '../store/port.js';
import { acceptedEvent, signedReceipt } from './accepted-receipt.js';
import type { ReceiptSigning } from './accepted-receipt.js';
import { refusalOf, withoutForeignKey } from './advance-refusals.js';
import type { AdvanceRefusal } from './advance-refusals.js';
import type { CachedChannel, ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import type { LatencyWindow } from './latency.js';
import { paymentIdFingerprint } from './payment-ids.js';
import type { PaymentIds } from './payment-ids.js';
import { fingerprint, verifyKey } from './verify-keys.js';
import type { FirstAnswer } from './verify-keys.js';
import type { VerifyInput } from './verify-types.js';

export type Advanced = { kind: 'accepted'; response: PaymentResponse } | AdvanceRefusal;

export interface VoucherAdvanceDeps extends ReceiptSigning {
  book: ChannelBook;
  events: EventLog;
  clock: Clock;
  latency: LatencyWindow;
  ids: PaymentIds;
}

export class VoucherAdvance {
  constructor(private readonly deps: VoucherAdvanceDeps) {}

  /** Signs the receipt and commits the advance with any extra ops, atomically. */
  async advance(channel: CachedChannel, input: VerifyInput, started: number): Promise<Advanced> {
    const { record } = channel;
    const { payment } = input;
    const ts = new Date(this.deps.clock.now()).toISOString();
    const delta = payment.cumulative - record.charged;
    const receipt = await signedReceipt(this.deps, record, input, {
      unit: input.requirements.unit,
      amount: delta,
      cumulative: payment.cumulative,
      ts,
    });
    const latencyMs = round2(performance.now() - started);
    const response: PaymentResponse = {
      success: true,
      transaction: '',
      network: this.deps.network,
      payer: record.payer,
      scheme: 'channel',
      channelId: record.id.toString(),
      cumulative: receipt.cumulative,
      delta: receipt.amount,
      remaining: formatUnits(record.deposit - payment.cumulative),
      latencyMs,
      receipt,
    };
    let ops = [
      ...this.advanceOps(record, input, receipt, response, latencyMs),
      ...(input.extraOps?.({ delta, receipt }) ?? []),
    ];
    let result = await this.deps.events.commit(ops);
    const retry = withoutForeignKey(ops, result);
    if (retry) {
      ops = retry;
      result = await this.deps.events.commit(ops);
    }
    if (!result.ok) return refusalOf(ops, result);
    this.deps.book.advanced(record.id, payment.cumulative, payment.signature, ts);
    this.deps.latency.record(performance.now() - started);
    return { kind: 'accepted', response };
  }

  private advanceOps(
    record: ChannelRecord,
    input: VerifyInput,
    receipt: Receipt,
    response: PaymentResponse,
    latencyMs: number,
  ): WriteOp[] {
    const { payment } = input;
    const ops: WriteOp[] = [
      {
        op: 'channel.advance',
        channelId: payment.channelId,
        expected: record.lastAccepted,
        expectedCharged: record.charged,
        cumulative: payment.cumulative,
        signature: payment.signature,
        at: receipt.ts,
      },
      { op: 'receipt', receipt },
      acceptedEvent(receipt, latencyMs),
    ];
    if (input.paymentId) {
      const first: FirstAnswer = {
        receiptId: receipt.id,
        remaining: response.remaining,
        latencyMs: response.latencyMs,
      };
      ops.push(
        this.deps.ids.record(
          input.requirements.payTo,
          input.paymentId,
          paymentIdFingerprint('channel', input),
          JSON.stringify(first),
          receipt.ts,
        ),
      );
    }
    if (input.idempotencyKey) {
      // The first answer, kept as what rebuilds it: the receipt is stored beside it (answerOf).
      const first: FirstAnswer = {
        receiptId: receipt.id,
        remaining: response.remaining,
        latencyMs: response.latencyMs,
      };
      ops.push({
        op: 'idempotency',
        key: verifyKey(input.idempotencyKey),
        fingerprint: fingerprint(payment),
        response: JSON.stringify(first),
        at: receipt.ts,
      });
    }
    return ops;
  }
}

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}
