// A `batch-settlement` payment held across its handler: POST /verify before (the channel reserved
// for this payment, its voucher a ceiling), the handler runs, then POST /settle of what the request
// used — the price unless the handler called payment.charge(amount), nothing when it failed (a
// throw, or a 5xx answer: the facilitator releases the channel for a charge of 0). The bindings
// hold the answer until the settle is answered (hold-node.ts, hold-web.ts).
//
// A settle that got no answer may still have charged the channel. The meter then serves nothing
// (503) and keeps the settle's Idempotency-Key under this payment: when the buyer sends the same
// payment for the same request again, the meter asks /settle once more under that key, for a charge
// of 0. The facilitator answers the first charge if it was made (its idempotent replay) — the retry
// is served under it, charged once — or, if not, releases the channel and the retry is paid afresh.
import { encodeJsonHeader, formatUnits } from '@svc/core';
import type { BatchPayment as BatchVoucher, PaymentResponse } from '@svc/core';
import type { BatchSettleRequest, FacilitatorClient, SettleReply } from './facilitator-client.js';
import { idempotencyKey } from './facilitator-client.js';
import { EXPOSED_HEADERS } from './gate-outcome.js';
import type { GateOutcome, GateSettled, TermsOf } from './gate-outcome.js';
import { ChargeBook, withCharging } from './payment.js';
import type { BatchSettlementPayment } from './payment.js';
import type { MeterOptions } from './terms.js';

/** Settles this meter sent without hearing the answer: by payment, the Idempotency-Key used. */
export type Unsettled = Map<string, { key: string; at: number }>;
/** How many unanswered settles are remembered, and for how long (a reservation lasts at most 600 s). */
const UNSETTLED_MAX = 1024;
const UNSETTLED_TTL_MS = 600_000;

type ErrorReply = Extract<SettleReply, { kind: 'error' }>;

export interface HeldBatchInput {
  facilitator: FacilitatorClient;
  payTo: string;
  unit: MeterOptions['unit'];
  unsettled: Unsettled;
  v2Header: string | undefined;
  /** The /verify and /settle body, with this request's terms (amount: the price). */
  request: BatchSettleRequest;
  payment: BatchVoucher;
  terms: TermsOf;
  unavailable: (detail: string) => GateOutcome;
  facilitatorError: (reply: ErrorReply) => GateOutcome;
}

export async function heldBatch(input: HeldBatchInput): Promise<GateOutcome> {
  const { facilitator, request, terms } = input;
  if (input.unit !== 'request') return settledBefore(input);
  const price = BigInt(request.paymentRequirements.amount);
  const mark = markOf(request);
  const earlier = takeUnsettled(input.unsettled, mark);
  if (earlier) {
    // The first settle of this very payment got no answer: find out whether it charged.
    const again = await facilitator.settle(withAmount(request, 0n), earlier);
    if (again.kind === 'settled' && again.answer.success && BigInt(again.answer.extra.chargedAmount ?? '0') > 0n) {
      const settled = paid(input, again.answer);
      const book = new ChargeBook(price);
      return held(input, again.answer.payer, book, again.answer.extra.channelState, () => {
        book.close(false);
        return Promise.resolve(settled);
      });
    }
  }
  const reply = await facilitator.verifyBatch(request);
  if (reply.kind === 'unreachable') return input.unavailable(reply.message);
  if (reply.kind === 'error') return input.facilitatorError(reply);
  const { verdict } = reply;
  if (!verdict.isValid) return terms(verdict.invalidReason, 'facilitator', verdict.invalidMessage, verdict.extra);
  if (!('channelState' in verdict.extra))
    return input.unavailable('the facilitator answered a batch-settlement /verify without the channel');
  const book = new ChargeBook(price);
  return held(input, verdict.payer, book, verdict.extra.channelState, async (failed) => {
    const amount = book.close(failed);
    const key = idempotencyKey();
    const settled = await facilitator.settle(withAmount(request, amount), key);
    if (settled.kind === 'unreachable') {
      if (amount > 0n) remember(input.unsettled, mark, key);
      return asSettled(input.unavailable(settled.message));
    }
    if (settled.kind === 'error') {
      await release(facilitator, request);
      return asSettled(input.facilitatorError(settled));
    }
    const { answer } = settled;
    if (!answer.success) {
      await release(facilitator, request);
      return asSettled(terms(answer.errorReason, 'facilitator', answer.errorMessage, answer.extra));
    }
    return paid(input, answer);
  });
}

function held(
  input: HeldBatchInput,
  payer: string,
  book: ChargeBook,
  channelState: BatchSettlementPayment['channelState'],
  settle: (failed: boolean) => Promise<GateSettled>,
): GateOutcome {
  let finished: Promise<GateSettled> | null = null;
  const payment: BatchSettlementPayment = withCharging(
    {
      scheme: 'batch-settlement' as const,
      payer,
      channelId: input.payment.channelId.toString(),
      ceiling: formatUnits(input.payment.cumulative),
      channelState,
    },
    book,
  );
  return {
    kind: 'held',
    hold: {
      payment,
      headers: { 'access-control-expose-headers': EXPOSED_HEADERS },
      finish: (failed) => (finished ??= settle(failed)),
    },
  };
}

/** The settle answer as the buyer's PAYMENT-RESPONSE (the receipt inside, never the attest token). */
function paid(input: HeldBatchInput, answer: Extract<SettleReply, { kind: 'settled' }>['answer']): GateSettled {
  if (!answer.success) return asSettled(input.unavailable('the facilitator refused the charge'));
  const { attestToken: token, receipt: payment, ...shown } = answer.extra;
  if (payment && payment.receipt.payee !== input.payTo)
    return asSettled(input.unavailable('the facilitator returned a receipt for another payee'));
  const headers: Record<string, string> = {
    'payment-response': encodeJsonHeader({ ...answer, extra: { ...shown, ...(payment ? { receipt: payment } : {}) } }),
    'access-control-expose-headers': EXPOSED_HEADERS,
  };
  if (input.v2Header === undefined) headers['x-payment-response'] = headers['payment-response']!;
  const attest = input.unit === 'request' && token && payment ? attestOf(input.facilitator, payment, token) : null;
  // A charge of nothing has no receipt: the answer carries the charge (0) and the channel.
  return { kind: 'settled', receipt: payment ?? null, headers, attest };
}

function attestOf(facilitator: FacilitatorClient, payment: PaymentResponse, token: string) {
  const receiptId = payment.receipt.id;
  return (hash: string) => facilitator.attest(receiptId, token, hash);
}

function asSettled(outcome: GateOutcome): GateSettled {
  if (outcome.kind !== 'respond') throw new Error('a refused settle answers a response');
  return outcome;
}

/**
 * A charge refused after the handler ran: nothing was charged, so the channel's reservation is
 * given back (a charge of 0) for the buyer's next request, rather than held until it expires.
 * Best effort: a refusal of the release changes nothing.
 */
async function release(facilitator: FacilitatorClient, request: BatchSettleRequest): Promise<void> {
  await facilitator.settle(withAmount(request, 0n)).catch(() => undefined);
}

function withAmount(request: BatchSettleRequest, amount: bigint): BatchSettleRequest {
  return { ...request, paymentRequirements: { ...request.paymentRequirements, amount: formatUnits(amount) } };
}

/** This payment for this request: the voucher, the method, the resource and the body's hash. */
function markOf(request: BatchSettleRequest): string {
  const voucher = (request.paymentPayload['payload'] as Record<string, unknown> | undefined)?.['voucher'];
  const resource = (request.paymentPayload['resource'] as { url?: string } | undefined)?.url ?? '';
  return JSON.stringify([voucher ?? null, request.method, resource, request.requestHash]);
}

function takeUnsettled(unsettled: Unsettled, mark: string): string | null {
  const entry = unsettled.get(mark);
  if (!entry) return null;
  unsettled.delete(mark);
  return Date.now() - entry.at < UNSETTLED_TTL_MS ? entry.key : null;
}

function remember(unsettled: Unsettled, mark: string, key: string): void {
  // Bounded: the oldest is forgotten first (a Map iterates in insertion order).
  while (unsettled.size >= UNSETTLED_MAX) unsettled.delete(unsettled.keys().next().value!);
  unsettled.set(mark, { key, at: Date.now() });
}

/**
 * A stream's first slice (per token, per second): charged its price before the handler, as the
 * stream session that follows (stream.ts) pays slice by slice; there is no answer to hold.
 */
async function settledBefore(input: HeldBatchInput): Promise<GateOutcome> {
  const reply = await input.facilitator.settle(input.request);
  if (reply.kind === 'unreachable') {
    // As for `channel`: a charge made without our hearing of it stays good for this request, so the
    // buyer's retry of the same payment is served, not charged again.
    await input.facilitator.unserved(reply.idempotencyKey);
    return input.unavailable(reply.message);
  }
  if (reply.kind === 'error') return input.facilitatorError(reply);
  const { answer } = reply;
  if (!answer.success) return input.terms(answer.errorReason, 'facilitator', answer.errorMessage, answer.extra);
  const settled = paid(input, answer);
  if (settled.kind === 'respond') return settled;
  if (!settled.receipt) return input.unavailable('the facilitator charged nothing for a paid request');
  return { kind: 'paid', payment: settled.receipt, headers: settled.headers, attest: null };
}
