// client.stream(req, res, options): a paid server-sent-event stream for `token` and `second`
// units (spec "Endpoints", seller-side behaviour 5). The middleware charged the first slice; this
// opens the session on the facilitator, writes the SSE headers and a `session` event, and then
// `next()` hands out units: while the current slice has room it resolves true at once; when the
// slice is used up it emits `payment-required` with the next `requiredCumulative` and waits for
// the buyer's voucher (POST /streams/:id/wait). Every event is written to the socket as it is
// sent — nothing is buffered. A first slice paid with `batch-settlement` opens a session of that
// scheme: the `session` event names it, and the buyer's slice vouchers are ceilings.
//
//   const s = await client.stream(req, res, { price: 1000n, unit: 'second', sliceSeconds: 10 });
//   while (await s.next()) { s.send('tick', { price: quote() }); await sleep(1000); }
//   await s.end();
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STREAM_WAIT_MAX_MS, STREAM_WAIT_MIN_MS } from '@svc/core';
import type { PaymentResponse, StreamEnded, StreamEndReason } from '@svc/core';
import type { StreamCalls } from './facilitator-client.js';
import { EXPOSED_HEADERS } from './gate-outcome.js';
import { sliceOf } from './terms.js';

export const DEFAULT_VOUCHER_TIMEOUT_MS = 10_000;

export interface StreamOptions {
  /** Price of one unit, in base units. */
  price: bigint;
  unit: 'token' | 'second';
  sliceTokens?: number;
  sliceSeconds?: number;
  /** How long to wait for the voucher of the next slice before ending with TIMEOUT (default 10 s). */
  voucherTimeoutMs?: number;
  /** The receipt of the first slice, where the framework keeps it elsewhere than `req.payment`. */
  payment?: PaymentResponse;
}

export interface StreamSummary {
  reason: StreamEndReason;
  units: number;
  /** What the session was charged, in base units; null if the facilitator could not be reached. */
  charged: string | null;
  vouchers: number | null;
}

export interface PaidStream {
  readonly streamId: string;
  /** Units handed out so far. */
  readonly units: number;
  readonly ended: boolean;
  /** Why the stream stopped, once it has. */
  readonly reason: StreamEndReason | null;
  /** One more unit: true while the buyer pays, false once the stream has stopped. */
  next(): Promise<boolean>;
  send(event: string, data: unknown): void;
  /** Settles the session and emits `done`. */
  end(): Promise<StreamSummary>;
}

export async function openPaidStream(
  calls: StreamCalls,
  req: IncomingMessage,
  res: ServerResponse,
  options: StreamOptions,
): Promise<PaidStream> {
  const payment = options.payment ?? (req as IncomingMessage & { payment?: PaymentResponse }).payment;
  if (!payment)
    throw new Error(
      'stream(): this request was not paid; put meter({ unit: "token" | "second" }) in front of the handler',
    );
  const slice = sliceOf(options);
  const sliceCost = options.price * BigInt(slice);
  const opened = await calls.open({
    channelId: payment.channelId,
    payTo: payment.receipt.payee,
    resource: payment.receipt.resource,
    unit: options.unit,
    sliceCost: sliceCost.toString(),
    initialCharge: payment.delta,
    receiptId: payment.receipt.id,
    // The session's slices are paid as its first one was: under batch-settlement each slice's
    // voucher is a ceiling, charged by the facilitator's batch machinery.
    ...(payment.scheme === 'channel' ? {} : { scheme: payment.scheme }),
  });
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'access-control-expose-headers': EXPOSED_HEADERS,
  });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  const stream = new SseStream(
    calls,
    res,
    opened.streamId,
    options,
    slice,
    BigInt(opened.requiredCumulative),
    BigInt(opened.deposit),
  );
  stream.send('session', {
    streamId: opened.streamId,
    channelId: payment.channelId,
    scheme: payment.scheme,
    unit: options.unit,
    price: options.price.toString(),
    slice,
    sliceAmount: sliceCost.toString(),
    requiredCumulative: opened.requiredCumulative,
    voucherUrl: opened.voucherUrl,
  });
  return stream;
}

class SseStream implements PaidStream {
  units = 0;
  ended = false;
  reason: StreamEndReason | null = null;
  private inSlice = 0;
  private disconnected = false;
  private readonly gone = new AbortController();
  private summary: Promise<StreamSummary> | null = null;

  constructor(
    private readonly calls: StreamCalls,
    private readonly res: ServerResponse,
    readonly streamId: string,
    private readonly options: StreamOptions,
    private readonly slice: number,
    private required: bigint,
    private deposit: bigint,
  ) {
    res.on('close', () => {
      if (res.writableFinished) return;
      this.disconnected = true;
      this.gone.abort();
    });
  }

  async next(): Promise<boolean> {
    if (this.ended) return false;
    if (this.disconnected) return this.stop('done');
    if (this.inSlice < this.slice) return this.take();
    // The slice is used up. Ask only for what the deposit can cover; the facilitator answers an
    // uncoverable slice with `exhausted` at once, without waiting.
    if (this.required <= this.deposit)
      this.send('payment-required', { streamId: this.streamId, requiredCumulative: this.required.toString() });
    // The facilitator's long poll is 1–30 s: a longer voucher timeout is served by at most 30 s.
    const timeoutMs = Math.min(
      STREAM_WAIT_MAX_MS,
      Math.max(STREAM_WAIT_MIN_MS, this.options.voucherTimeoutMs ?? DEFAULT_VOUCHER_TIMEOUT_MS),
    );
    let reply;
    try {
      reply = await this.calls.wait(this.streamId, timeoutMs, this.gone.signal);
    } catch {
      // The session is gone (ended by the facilitator, or the facilitator is unreachable).
      return this.stop(this.disconnected ? 'done' : 'ABORTED');
    }
    switch (reply.kind) {
      case 'paid':
        this.required = BigInt(reply.requiredCumulative);
        this.deposit = BigInt(reply.deposit);
        this.inSlice = 0;
        return this.take();
      case 'timeout':
        return this.stop('TIMEOUT');
      case 'exhausted':
        return this.stop('CHANNEL_EXHAUSTED');
      case 'frozen':
        return this.stop('ACCOUNT_FROZEN');
      default:
        return this.stop(this.disconnected ? 'done' : 'ABORTED');
    }
  }

  send(event: string, data: unknown): void {
    if (this.res.writableEnded || this.disconnected) return;
    const json = JSON.stringify(data, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    this.res.write(`event: ${event.replace(/[\r\n]/g, '')}\ndata: ${json}\n\n`);
  }

  end(): Promise<StreamSummary> {
    return this.finish(this.reason ?? 'done');
  }

  private take(): boolean {
    this.inSlice++;
    this.units++;
    return true;
  }

  private async stop(reason: StreamEndReason): Promise<false> {
    await this.finish(reason);
    return false;
  }

  /** Ends the session once: the facilitator records it, the buyer gets `done`. */
  private finish(reason: StreamEndReason): Promise<StreamSummary> {
    this.summary ??= (async () => {
      this.ended = true;
      this.reason = reason;
      let settled: StreamEnded | null = null;
      try {
        settled = await this.calls.end(this.streamId, reason, this.units);
      } catch {
        // The facilitator is unreachable: it ends the session itself (idle timeout).
      }
      const summary: StreamSummary = {
        reason,
        units: this.units,
        charged: settled?.charged ?? null,
        vouchers: settled?.vouchers ?? null,
      };
      this.send('done', summary);
      if (!this.res.writableEnded) this.res.end();
      return summary;
    })();
    return this.summary;
  }
}
