// streamPaid: buys a paid server-sent-event stream (`token` or `second` units). It pays the first
// slice like payFetch, reads events as they arrive, and answers each `payment-required` with a
// voucher for exactly the cumulative asked for, posted straight to the facilitator — never more
// than one slice beyond what it has received, never beyond the deposit.
//
// When the 402 offers x402's `batch-settlement` as well and the signer's channel is bound to its
// receiver authorizer (a wallet's signer function is asked for one), the stream is paid with that
// scheme: each voucher is a ceiling, what was charged plus the slice — the same number, since a
// slice is charged whole. Otherwise it is paid with `channel`, as before. Either way the first slice
// catches up once when the facilitator says the books are behind (as payFetch does): a wallet file
// saved before its last payment's answer, or another program that paid from the same channel.
//
//   const run = await streamPaid({ url: 'http://127.0.0.1:4020/demo/ticker/stream', signer, onEvent: (e) => console.log(e) });
//   run.ended.reason; run.paid
import {
  BATCH_SCHEME,
  BatchRequirementsSchema,
  isChannelTerms,
  decodeJsonHeader,
  encodeJsonHeader,
  globalFetch,
  isUnits,
  PaymentResponseSchema,
  readPaymentResponse,
  safeParse,
  verifyReceipt,
} from '@svc/core';
import type {
  BatchRequirements,
  PaymentRequired,
  PaymentRequirements,
  PaymentResponse,
  StreamVoucher,
} from '@svc/core';
import { ParseError } from 'eventsource-parser';
import type { ChannelSigner } from './channel-signer.js';
import { PaymentError, readTerms, rejectionCode, resync, trustedSigners } from './pay-fetch.js';
import { catchUp, chooseSigner, CORRECTIVE_CODES, signBatch } from './batch-payment.js';
import type { SignerChoice } from './batch-payment.js';
import { SseParser } from './sse.js';

/** The largest event (or unfinished line) a paid stream may send: 1 MiB. */
const MAX_EVENT_BYTES = 1 << 20;

export interface StreamEvent {
  event: string;
  data: unknown;
  /** When it arrived (ms since the epoch). */
  at: number;
}

export interface StreamPaidOptions {
  url: string | URL;
  /**
   * The channel to pay from, or a function choosing one. Where the 402 offers batch-settlement the
   * function is asked for a channel bound to its receiver authorizer, opened by the first slice's
   * deposit where the facilitator sponsors it (`options`, as Wallet.signerFor takes them); one that
   * returns another channel pays with `channel`.
   */
  signer: SignerChoice;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  onEvent?: (event: StreamEvent) => void;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  trustedSigners?: readonly string[];
}

export interface StreamPaidResult {
  streamId: string | null;
  /** Every event received, in order (session, payment-required, the seller's, done). */
  events: StreamEvent[];
  /** The scheme the stream was paid with. */
  scheme: 'channel' | typeof BATCH_SCHEME;
  /** What this stream cost: the first slice and every slice voucher, in base units. */
  paid: bigint;
  vouchers: number;
  /** The seller's `done` ({ reason, units, charged, vouchers }), or how the stream was cut. */
  ended: { reason: string; units?: number; charged?: string | null; vouchers?: number | null; detail?: string };
}

interface SessionInfo {
  streamId: string;
  voucherUrl: string;
  sliceAmount: bigint;
}

export async function streamPaid(o: StreamPaidOptions): Promise<StreamPaidResult> {
  const doFetch = o.fetch ?? globalFetch;
  const init = {
    method: o.method ?? 'GET',
    headers: {
      accept: 'text/event-stream',
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    ...(o.body !== undefined ? { body: o.body } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  };
  const first = await doFetch(o.url, init);
  if (first.status !== 402)
    throw new PaymentError(`expected 402 with stream terms, got ${first.status}`, 'NOT_METERED', first);
  const terms = await readTerms(first);
  const accept = terms.accepts.filter(isChannelTerms).find((a) => a.unit !== 'request');
  if (!accept?.extra.sliceAmount)
    throw new PaymentError('the seller offers no `channel` stream (token or second) terms', 'NO_STREAM_TERMS', first);
  const slice = BigInt(accept.extra.sliceAmount);
  const chosen = await chooseSigner(o.signer, batchOffer(terms, accept, slice), accept);
  const { signer, batch } = chosen!;
  const trusted = o.trustedSigners ?? (await trustedSigners(doFetch, accept.extra.facilitator, first));
  const run: StreamPaidResult = {
    streamId: null,
    events: [],
    scheme: batch ? BATCH_SCHEME : 'channel',
    paid: 0n,
    vouchers: 0,
    ended: { reason: 'disconnected' },
  };

  const { res, cumulative } = await signer.exclusive(async () => {
    let paid = await payFirstSlice(doFetch, o.url, init, terms, accept, batch, signer, slice);
    const code = paid.res.status === 402 ? rejectionCode(paid.res) : null;
    // Our books were behind the facilitator's: catch up, once, never past what this signer signed.
    const behind = batch
      ? code !== null && CORRECTIVE_CODES.has(code) && catchUp(signer, await readTerms(paid.res).catch(() => null))
      : code === 'VOUCHER_NOT_INCREASING' || code === 'VOUCHER_UNDERPAID';
    if (behind) {
      if (!batch) await resync(doFetch, accept, signer, paid.res);
      paid = await payFirstSlice(doFetch, o.url, init, terms, accept, batch, signer, slice);
    }
    return paid;
  });
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => null)) as { error?: string; message?: string } | null;
    return { ...run, ended: { reason: body?.error ?? `HTTP_${res.status}`, detail: body?.message ?? '' } };
  }
  const firstPayment = checked(readPaymentHeader(res), accept, signer, trusted, cumulative);
  run.paid += BigInt(firstPayment.delta);
  run.vouchers++;

  let session: SessionInfo | null = null;
  // The seller's own events since the last slice was paid: a slice is paid only once the one before
  // it brought something, so a stream that sends nothing costs one slice, not the deposit.
  let received = 0;
  // A seller's event (or an unfinished line) past this is refused: the buyer's memory stays bounded.
  const parser = new SseParser({ maxBufferSize: MAX_EVENT_BYTES });
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return run;
      for (const raw of parser.push(value)) {
        const event: StreamEvent = { event: raw.event, data: parseData(raw.data), at: Date.now() };
        run.events.push(event);
        o.onEvent?.(event);
        const d = event.data as Record<string, unknown>;
        if (event.event === 'session') {
          session = sessionOf(d, accept, slice);
          run.streamId = session.streamId;
        } else if (event.event === 'payment-required' && session) {
          const required = isUnits(d['requiredCumulative']) ? BigInt(d['requiredCumulative']) : 0n;
          if (received > 0 && (await payNextSlice(doFetch, session, signer, required, accept, trusted, run)))
            received = 0;
        } else if (event.event === 'done') {
          run.ended = {
            reason: String(d['reason']),
            units: Number(d['units']),
            charged: (d['charged'] as string | null) ?? null,
            vouchers: (d['vouchers'] as number | null) ?? null,
          };
          return run;
        } else if (event.event !== 'payment-required') received++;
      }
    }
  } catch (err) {
    if (o.signal?.aborted) return { ...run, ended: { reason: 'aborted' } };
    if (err instanceof ParseError)
      return {
        ...run,
        ended: { reason: 'EVENT_TOO_LARGE', detail: `the stream sent an event of more than ${MAX_EVENT_BYTES} bytes` },
      };
    throw err;
  } finally {
    reader.releaseLock();
    void res.body.cancel().catch(() => undefined);
  }
}

/**
 * The batch-settlement option for the same stream terms as the `channel` one, if the 402 offers it:
 * the same payee, network and asset, one payment the price of one slice.
 */
function batchOffer(terms: PaymentRequired, accept: PaymentRequirements, slice: bigint): BatchRequirements | null {
  for (const option of terms.accepts) {
    if (option.scheme !== BATCH_SCHEME) continue;
    const parsed = safeParse(BatchRequirementsSchema, option);
    if (!parsed.success) continue;
    const b = parsed.data;
    if (
      b.payTo === accept.payTo &&
      b.network === accept.network &&
      b.asset === accept.asset &&
      b.extra.channelContract === accept.extra.channelContract &&
      b.extra.facilitator === accept.extra.facilitator &&
      BigInt(b.amount) === slice
    )
      return b;
  }
  return null;
}

/**
 * The first slice's request, paid with the chosen scheme: a voucher for what was accepted (or
 * charged) plus the slice — under batch-settlement with the channel's opening or top-up when the
 * signer has one pending (a deposit payload).
 */
async function payFirstSlice(
  doFetch: typeof fetch,
  url: string | URL,
  init: RequestInit & { headers: Record<string, string> },
  terms: PaymentRequired,
  accept: PaymentRequirements,
  batch: BatchRequirements | null,
  signer: ChannelSigner,
  slice: bigint,
): Promise<{ res: Response; cumulative: bigint; deposit: boolean }> {
  let payment: Record<string, unknown>;
  let cumulative: bigint;
  let deposit = false;
  if (batch) {
    const signed = signBatch(signer, slice);
    payment = { x402Version: 2, accepted: batch, payload: signed.payload, resource: terms.resource };
    cumulative = signed.ceiling;
    deposit = signed.deposit;
  } else {
    const v = signer.next(slice);
    payment = { x402Version: 2, accepted: accept, payload: v, resource: terms.resource };
    cumulative = BigInt(v.cumulative);
  }
  const headers = new Headers(init.headers);
  headers.set('PAYMENT-SIGNATURE', encodeJsonHeader(payment));
  const res = await doFetch(url, { ...init, headers });
  // Paid: the deposit is on the ledger. Not paid: the wallet reads the ledger before the next payment.
  if (deposit) {
    if (res.ok) signer.depositLanded();
    else signer.depositRefused();
  }
  return { res, cumulative, deposit };
}

/**
 * The seller's session event, believed only as far as the terms go: the slice is the terms' (or
 * less), and vouchers go to the terms' facilitator, never to another address the seller names.
 */
function sessionOf(d: Record<string, unknown>, accept: PaymentRequirements, slice: bigint): SessionInfo {
  const said = isUnits(d['sliceAmount']) ? BigInt(d['sliceAmount']) : slice;
  const voucherUrl = String(d['voucherUrl']);
  let sameOrigin = false;
  try {
    sameOrigin = new URL(voucherUrl).origin === new URL(accept.extra.facilitator).origin;
  } catch {
    sameOrigin = false;
  }
  if (!sameOrigin)
    throw new PaymentError(
      `the stream's session sends vouchers to ${voucherUrl.slice(0, 200)}, not to its facilitator ${accept.extra.facilitator}`,
      'BAD_SESSION',
    );
  return { streamId: String(d['streamId']), voucherUrl, sliceAmount: said < slice ? said : slice };
}

/**
 * Pays exactly `required` — or nothing, when that would be more than one slice ahead or beyond the
 * deposit. True when a voucher was sent.
 */
async function payNextSlice(
  doFetch: typeof fetch,
  session: SessionInfo,
  signer: ChannelSigner,
  required: bigint,
  accept: PaymentRequirements,
  trusted: readonly string[],
  run: StreamPaidResult,
): Promise<boolean> {
  if (required > signer.deposit || required - signer.cumulative > session.sliceAmount || required <= signer.cumulative)
    return false;
  return signer.exclusive(async () => {
    const voucher = signer.sign(required);
    const res = await doFetch(session.voucherUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        streamId: session.streamId,
        cumulative: voucher.cumulative,
        signature: voucher.signature,
      } satisfies StreamVoucher),
    });
    if (!res.ok) return true; // refused: the seller's wait ends the stream
    const body = (await res.json()) as { receipt?: unknown };
    const parsed = safeParse(PaymentResponseSchema, body.receipt);
    if (!parsed.success) return true;
    const payment = checked(parsed.data, accept, signer, trusted, required);
    run.paid += BigInt(payment.delta);
    run.vouchers++;
    return true;
  });
}

function checked(
  payment: PaymentResponse | null,
  accept: PaymentRequirements,
  signer: ChannelSigner,
  trusted: readonly string[],
  cumulative: bigint,
): PaymentResponse {
  if (!payment) throw new PaymentError('the stream carries no readable PAYMENT-RESPONSE', 'BAD_RECEIPT');
  const check = verifyReceipt(payment.receipt, trusted);
  if (!check.ok) throw new PaymentError(`the receipt does not verify: ${check.reason}`, 'BAD_RECEIPT');
  const r = payment.receipt;
  if (r.channelId !== signer.channelId.toString() || r.payee !== accept.payTo || BigInt(r.cumulative) !== cumulative) {
    throw new PaymentError('the receipt is for another channel, payee or amount', 'BAD_RECEIPT');
  }
  signer.confirm(cumulative);
  return payment;
}

/** The svc envelope of PAYMENT-RESPONSE: itself, or (batch-settlement) the settle answer's extra.receipt. */
function readPaymentHeader(res: Response): PaymentResponse | null {
  const header = res.headers.get('payment-response') ?? res.headers.get('x-payment-response');
  const decoded = header ? decodeJsonHeader(header, 64 * 1024) : null;
  const value = decoded?.ok ? decoded.value : null;
  const direct = readPaymentResponse(value);
  if (direct) return direct;
  const extra = (value as { extra?: { receipt?: unknown } } | null)?.extra;
  const nested = safeParse(PaymentResponseSchema, extra?.receipt);
  return nested.success ? nested.data : null;
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}
