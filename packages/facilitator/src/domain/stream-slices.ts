// Paying a stream session's slices: POST /channels/:id/voucher. A session is paid with the scheme of
// its first slice. Under `channel` a slice's voucher is what is owed in all, accepted by the
// verifier (verifier.ts); under x402's `batch-settlement` it is a ceiling — what was charged on the
// channel plus the slice — charged by batch-payments.ts. Either way the slice's credit is written
// with the payment itself, and the numbers are the same: a slice is charged whole, so what was
// charged after it is its voucher. One voucher pays one slice, which one wait delivers (streams.ts).
import { BATCH_SCHEME, SvcError, batchTermsOf, formatUnits, svcCodeOfBatch } from '@svc/core';
import type { BatchPayment, PaymentResponse, PaymentRequirements } from '@svc/core';
import type { Bus } from '../bus/port.js';
import type { StreamRecord, Store, WriteOp } from '../store/port.js';
import type { BatchInput, BatchSettled } from './batch-types.js';
import type { ChannelBook } from './channel-book.js';
import { endedConflict, pendingConflict, topicOf } from './stream-records.js';
import type { Verifier } from './verifier.js';

export interface StreamSlicesDeps {
  store: Store;
  bus: Bus;
  book: ChannelBook;
  verifier: Verifier;
  /** `batch-settlement` charges (batch-payments.ts): a batch session's slices. */
  batch: { settle(input: BatchInput): Promise<BatchSettled> };
  /** This facilitator's key: the receiver authorizer a batch-settlement session's channel is bound to. */
  receiverAuthorizer: string;
  network: string;
  asset: string;
  channelContract: string;
}

export class StreamSlices {
  constructor(private readonly deps: StreamSlicesDeps) {}

  /** POST /channels/:id/voucher: a voucher for a session's next slice (or a bare one). */
  async voucher(
    channelId: bigint,
    v: { streamId?: string; cumulative: bigint; signature: string },
    facilitatorUrl: string,
  ): Promise<{ receipt: PaymentResponse; streamId: string | null; requiredCumulative: bigint | null }> {
    const stream = v.streamId === undefined ? null : await this.deps.store.getStream(v.streamId);
    if (v.streamId !== undefined && (!stream || stream.channelId !== channelId))
      throw new SvcError('STREAM_NOT_FOUND', `No stream session ${v.streamId} on channel ${channelId}.`);
    if (stream && stream.status !== 'open') throw endedConflict(stream);
    // Decided again, atomically, by the credit below; asked here first so a voucher sent too early
    // is refused before any signature is checked.
    if (stream?.pendingReceiptId) throw pendingConflict(stream);
    if (stream?.scheme === BATCH_SCHEME) return this.batchVoucher(stream, v, facilitatorUrl);
    let delta: bigint | null = null;
    const channel = await this.deps.book.get(channelId);
    const payTo = stream?.payTo ?? channel?.record.payee ?? '';
    const outcome = await this.deps.verifier.verify({
      payment: {
        x402Version: 2,
        network: this.deps.network,
        channelId,
        cumulative: v.cumulative,
        signature: v.signature,
      },
      requirements: this.requirements(payTo, stream, facilitatorUrl),
      resource: stream?.resource ?? '',
      method: stream ? 'STREAM' : 'VOUCHER',
      requestHash: null,
      idempotencyKey: null,
      ...(stream
        ? {
            extraOps: (accepted): WriteOp[] => {
              delta = accepted.delta;
              return [
                {
                  op: 'stream.credit',
                  streamId: stream.id,
                  cumulative: v.cumulative,
                  delta: accepted.delta,
                  receiptId: accepted.receipt.id,
                  required: v.cumulative + stream.sliceCost,
                  at: accepted.receipt.ts,
                },
              ];
            },
          }
        : {}),
    });
    // The credit was refused, and the channel's advance with it: say why, from the session as it is now.
    if (stream && !outcome.ok && outcome.code === 'CONFLICT') throw await this.creditRefused(stream, delta);
    if (!outcome.ok)
      throw new SvcError(
        outcome.code,
        outcome.message,
        outcome.retryAfter === undefined ? {} : { retryAfter: outcome.retryAfter },
      );
    if (stream) this.deps.bus.signal(topicOf(stream.id));
    return {
      receipt: outcome.response,
      streamId: stream?.id ?? null,
      requiredCumulative: stream ? v.cumulative + stream.sliceCost : null,
    };
  }

  /**
   * A `batch-settlement` session's slice: the voucher is a ceiling, exactly what was charged on the
   * channel plus the slice, charged by the batch machinery with the slice's credit in its write.
   */
  private async batchVoucher(
    stream: StreamRecord,
    v: { cumulative: bigint; signature: string },
    facilitatorUrl: string,
  ): Promise<{ receipt: PaymentResponse; streamId: string; requiredCumulative: bigint }> {
    const terms = this.requirements(stream.payTo, stream, facilitatorUrl);
    const requirements = batchTermsOf(terms, this.deps.receiverAuthorizer);
    const payment: BatchPayment = {
      scheme: BATCH_SCHEME,
      kind: 'voucher',
      x402Version: 2,
      network: this.deps.network,
      channelId: stream.channelId,
      cumulative: v.cumulative,
      signature: v.signature,
      accepted: { scheme: BATCH_SCHEME, network: this.deps.network, amount: requirements.amount },
    };
    let required: bigint | null = null;
    const outcome = await this.deps.batch.settle({
      payment,
      requirements,
      terms,
      amount: stream.sliceCost,
      resource: stream.resource,
      method: 'STREAM',
      requestHash: null,
      idempotencyKey: null,
      extraOps: ({ receipt }): WriteOp[] => {
        required = BigInt(receipt.cumulative) + stream.sliceCost;
        return [
          {
            op: 'stream.credit',
            streamId: stream.id,
            cumulative: BigInt(receipt.cumulative),
            delta: BigInt(receipt.amount),
            receiptId: receipt.id,
            required,
            at: receipt.ts,
          },
        ];
      },
    });
    if (!outcome.ok && outcome.conflict) throw await this.creditRefused(stream, null);
    if (!outcome.ok) {
      if (outcome.code === 'RATE_LIMITED')
        throw new SvcError('RATE_LIMITED', outcome.message, { retryAfter: outcome.retryAfter ?? 60 });
      // A stream slice carries no payment id: its refusals are the scheme's own.
      const code =
        outcome.code === 'invalid_payment_identifier' || outcome.code === 'invalid_payment_identifier_conflict'
          ? 'CONFLICT'
          : svcCodeOfBatch(outcome.code);
      throw new SvcError(code, `${outcome.message} (${outcome.code})`);
    }
    if (!outcome.response || required === null)
      throw new SvcError(
        'CONFLICT',
        'The slice was not charged: sign the requiredCumulative of the latest payment-required.',
      );
    this.deps.bus.signal(topicOf(stream.id));
    return { receipt: outcome.response, streamId: stream.id, requiredCumulative: required };
  }

  /**
   * Why a session refused a slice's credit (one voucher pays one slice, which one wait delivers):
   * it ended, the voucher added more than a slice, or a paid slice still awaits its wait.
   */
  private async creditRefused(stream: StreamRecord, delta: bigint | null): Promise<SvcError> {
    const now = (await this.deps.store.getStream(stream.id)) ?? stream;
    if (now.status !== 'open') return endedConflict(now);
    if (delta !== null && delta > now.sliceCost)
      return new SvcError(
        'CONFLICT',
        `The voucher adds ${formatUnits(delta)}, more than one slice (${formatUnits(now.sliceCost)}): a stream voucher pays one slice at a time. Nothing was charged; sign the requiredCumulative of the latest payment-required (${formatUnits(now.required)}).`,
      );
    return pendingConflict(now);
  }

  private requirements(payTo: string, stream: StreamRecord | null, facilitatorUrl: string): PaymentRequirements {
    const slice = stream ? formatUnits(stream.sliceCost) : '1';
    return {
      scheme: 'channel',
      network: this.deps.network,
      asset: this.deps.asset,
      payTo,
      amount: slice,
      unit: stream?.unit ?? 'request',
      maxTimeoutSeconds: 60,
      extra: {
        channelContract: this.deps.channelContract,
        minDeposit: '0',
        facilitator: facilitatorUrl,
        areFeesSponsored: true,
        ...(stream ? { sliceAmount: slice } : {}),
      },
    };
  }
}
