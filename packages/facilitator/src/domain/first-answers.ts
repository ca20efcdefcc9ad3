// A `channel` voucher's first answer, given again: to a copy under the same Idempotency-Key or
// payment id, and — once — to the same payment for the same request after its meter gave up on
// the answer (unserved()). The answers are rebuilt from what the advance kept (voucher-advance.ts).
import { owedPerPayment } from '@svc/core';
import type { PaymentResponse, Receipt } from '@svc/core';
import type { Store } from '../store/port.js';
import type { Clock } from './clock.js';
import { answerOf } from './payment-response.js';
import { paymentIdFingerprint } from './payment-ids.js';
import type { PaymentIds } from './payment-ids.js';
import { UNSERVED_BARRIER_KEY, fingerprint, recoverKey, verifyKey } from './verify-keys.js';
import type { FirstAnswer } from './verify-keys.js';
import type { VerifyInput, VerifyOutcome } from './verify-types.js';

export interface FirstAnswersDeps {
  store: Store;
  clock: Clock;
  ids: PaymentIds;
}

export class FirstAnswers {
  /** unserved() calls this process is making now (recover() waits for them). */
  private readonly unservedInFlight = new Set<Promise<boolean>>();

  constructor(private readonly deps: FirstAnswersDeps) {}

  /**
   * A payment its buyer named (payment-identifier): its first answer if it was accepted under the
   * id, the conflict if the id names another payment, null if the id is new (or none was given).
   * Looked up before the checks: an accepted voucher is not increasing any more.
   */
  async named(input: VerifyInput): Promise<VerifyOutcome | null> {
    if (!input.paymentId) return null;
    const found = await this.deps.ids.lookup(
      input.requirements.payTo,
      input.paymentId,
      paymentIdFingerprint('channel', input),
    );
    if (found.kind === 'new') return null;
    if (found.kind === 'conflict') return { ok: false, code: found.code, message: found.message };
    const response = await this.firstAnswer(JSON.parse(found.response) as FirstAnswer);
    return response ? { ok: true, response, payer: response.payer, replayed: true } : null;
  }

  /** The first answer given under an idempotency key for this very voucher, if any. */
  async replay(input: VerifyInput): Promise<VerifyOutcome | null> {
    if (!input.idempotencyKey) return null;
    const record = await this.deps.store.getIdempotent(verifyKey(input.idempotencyKey));
    if (!record || record.fingerprint !== fingerprint(input.payment)) return null;
    const response = await this.firstAnswer(JSON.parse(record.response) as PaymentResponse | FirstAnswer);
    return response ? { ok: true, response, payer: response.payer, replayed: true } : null;
  }

  /**
   * POST /verify/unserved: the meter that called /verify under `key` got no answer in time and
   * served nothing. If a payment was accepted under the key, it is marked to be accepted again —
   * once — as the same payment, for the same request (recover()). Only the meter and this
   * facilitator know the key, so nobody else can mark a payment.
   */
  async unserved(key: string): Promise<boolean> {
    const marking = this.mark(key);
    this.unservedInFlight.add(marking);
    try {
      return await marking;
    } finally {
      this.unservedInFlight.delete(marking);
    }
  }

  private async mark(key: string): Promise<boolean> {
    const at = new Date(this.deps.clock.now()).toISOString();
    // Queued behind this process's own writes (the store commits them in order), so an acceptance
    // under the key that was still waiting for its commit is visible to the read that follows.
    await this.deps.store.write([{ op: 'meta.set', key: UNSERVED_BARRIER_KEY, value: at }]);
    const accepted = await this.deps.store.getIdempotent(verifyKey(key));
    if (!accepted) return false;
    const [channelId, cumulative] = accepted.fingerprint.split(':');
    if (channelId === undefined || cumulative === undefined) return false;
    const marked = await this.deps.store.write([
      {
        op: 'idempotency',
        key: recoverKey(channelId, cumulative),
        fingerprint: accepted.fingerprint,
        response: accepted.response,
        at,
      },
    ]);
    return marked.ok || marked.reason === 'duplicate';
  }

  /**
   * The payment again, for the request it paid for, after its meter gave up on the answer
   * (unserved()): accepted as the same payment — its first receipt, charged once — and the mark is
   * taken, so that it is served once. Another request, or another payee, price or unit, is not
   * the request it paid for.
   */
  async recover(input: VerifyInput, payer: string): Promise<VerifyOutcome | null> {
    const { payment } = input;
    const key = recoverKey(payment.channelId.toString(), payment.cumulative.toString());
    // A meter's notice may still be waiting behind a stalled store here: the buyer's retry, sent
    // once the meter gave up, must not overtake the mark it is about to write.
    if (this.unservedInFlight.size > 0) await Promise.allSettled([...this.unservedInFlight]);
    const mark = await this.deps.store.getIdempotent(key);
    if (!mark || mark.fingerprint !== fingerprint(payment)) return null;
    const kept = JSON.parse(mark.response) as PaymentResponse | FirstAnswer;
    const response = await this.firstAnswer(kept);
    const receipt = response?.receipt;
    if (!response || !receipt || !paysFor(receipt, input)) return null;
    const at = new Date(this.deps.clock.now()).toISOString();
    const taken = await this.deps.store.write([
      { op: 'idempotency.take', key, fingerprint: mark.fingerprint },
      // The meter's own retry of this request, under its new key, gets this answer too.
      ...(input.idempotencyKey
        ? [
            {
              op: 'idempotency' as const,
              key: verifyKey(input.idempotencyKey),
              fingerprint: mark.fingerprint,
              response: mark.response,
              at,
            },
          ]
        : []),
    ]);
    return taken.ok ? { ok: true, response, payer, replayed: true } : null;
  }

  /** The first answer from its record: its receipt and figures, or the whole answer (records written by older versions). */
  private async firstAnswer(kept: PaymentResponse | FirstAnswer): Promise<PaymentResponse | null> {
    if (!('receiptId' in kept)) return kept;
    const receipt = await this.deps.store.getReceipt(kept.receiptId);
    return receipt ? answerOf(receipt, kept.remaining, kept.latencyMs) : null;
  }
}

/**
 * Whether a receipt is the payment of this very request: to this payee, for this resource, method
 * and body, in this unit, at a price its amount covers. An accepted voucher answers only the request
 * it paid for, whether it is recovered here or confirmed by /settle (payments.ts).
 */
export function paysFor(receipt: Receipt, input: VerifyInput): boolean {
  const { requirements } = input;
  return (
    receipt.payee === requirements.payTo &&
    receipt.resource === input.resource &&
    receipt.method === input.method &&
    receipt.requestHash === input.requestHash &&
    receipt.unit === requirements.unit &&
    BigInt(receipt.amount) >= owedPerPayment(requirements)
  );
}
