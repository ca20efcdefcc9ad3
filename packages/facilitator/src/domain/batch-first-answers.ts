// The first answers of batch-settlement payments (batch-payments.ts): a copy of a charged payment —
// under the same Idempotency-Key, under the same payment id, or — once — the same payment for the
// same request after its meter gave up on the answer (unserved()) — is answered as the first was,
// not charged again. The answers are rebuilt from what the charge kept (SettleRecord).
import { BATCH_SCHEME, formatUnits, sha256, toHex, utf8 } from '@svc/core';
import type { ChannelState, PaymentResponse, Receipt } from '@svc/core';
import type { Store } from '../store/port.js';
import type { BatchInput, BatchSettled } from './batch-types.js';
import type { Clock } from './clock.js';
import { paymentIdFingerprint } from './payment-ids.js';
import type { PaymentIds } from './payment-ids.js';

/** What /settle keeps under an Idempotency-Key: enough to answer a retry the same way. */
export interface SettleRecord {
  receiptId: string | null;
  chargedAmount: string;
  channelState: ChannelState;
  remaining: string;
  latencyMs: number;
}

export interface BatchFirstAnswersDeps {
  store: Store;
  clock: Clock;
  ids: PaymentIds;
}

export class BatchFirstAnswers {
  constructor(private readonly deps: BatchFirstAnswersDeps) {}

  /**
   * POST /verify/unserved under the key of a /settle: the meter got no answer in time and served
   * nothing. The payment charged under the key is marked to be answered again — once — for the same
   * request (recover()), as a `channel` payment is (verifier.ts), instead of being refused with the
   * channel's state and paid again.
   */
  async unserved(key: string): Promise<boolean> {
    const at = new Date(this.deps.clock.now()).toISOString();
    // Queued behind this process's own writes, so a charge under the key still waiting for its
    // commit is visible to the read that follows.
    await this.deps.store.write([{ op: 'meta.set', key: UNSERVED_BARRIER_KEY, value: at }]);
    const charged = await this.deps.store.getIdempotent(settleKey(key));
    if (!charged) return false;
    const marked = await this.deps.store.write([
      {
        op: 'idempotency',
        key: recoverKey(charged.fingerprint),
        fingerprint: charged.fingerprint,
        response: charged.response,
        at,
      },
    ]);
    return marked.ok || marked.reason === 'duplicate';
  }

  /**
   * The payment again, for the request it paid for (the fingerprint is the payment and the
   * request), after its meter gave up on the answer: its first answer, charged once, and the mark
   * taken, so that it is served once.
   */
  async recover(input: BatchInput): Promise<BatchSettled | null> {
    const fingerprint = fingerprintOf(input);
    const key = recoverKey(fingerprint);
    const mark = await this.deps.store.getIdempotent(key);
    if (!mark || mark.fingerprint !== fingerprint) return null;
    const answer = await this.firstAnswer(mark.response);
    if (!answer) return null;
    const taken = await this.deps.store.write([{ op: 'idempotency.take', key, fingerprint }]);
    return taken.ok ? answer : null;
  }

  /**
   * A payment its buyer named (payment-identifier): the answer it was charged with, if it was; the
   * conflict if the id names another payment; null if the id is new (or none was given).
   */
  async named(input: BatchInput): Promise<BatchSettled | null> {
    if (!input.paymentId) return null;
    const found = await this.deps.ids.lookup(
      input.requirements.payTo,
      input.paymentId,
      paymentIdFingerprint(input.requirements.scheme, input),
    );
    if (found.kind === 'new') return null;
    if (found.kind === 'conflict') return { ok: false, code: found.code, message: found.message };
    return this.firstAnswer(found.response);
  }

  /**
   * The first answer of this very payment, to a copy that lost the race to it: under its
   * Idempotency-Key, or under its payment id (a copy that charged while this one was checked).
   */
  async again(input: BatchInput): Promise<BatchSettled | null> {
    return (await this.replay(input)) ?? (await this.named(input));
  }

  /** The first answer given under this Idempotency-Key for this very payment, if any. */
  private async replay(input: BatchInput): Promise<BatchSettled | null> {
    if (!input.idempotencyKey) return null;
    const kept = await this.deps.store.getIdempotent(settleKey(input.idempotencyKey));
    if (!kept || kept.fingerprint !== fingerprintOf(input)) return null;
    return this.firstAnswer(kept.response);
  }

  /** A kept SettleRecord as the answer it was (replayed: not a new charge). */
  private async firstAnswer(response: string): Promise<BatchSettled | null> {
    const first = JSON.parse(response) as SettleRecord;
    const receipt = first.receiptId === null ? null : await this.deps.store.getReceipt(first.receiptId);
    if (first.receiptId !== null && !receipt) return null;
    return {
      ok: true,
      payer: receipt?.payer ?? '',
      chargedAmount: BigInt(first.chargedAmount),
      channelState: first.channelState,
      response: receipt ? envelope(receipt, BigInt(first.remaining), first.latencyMs) : null,
      replayed: true,
    };
  }
}

/**
 * The payment and the request it pays for, as one hash (64 hex): a reservation and an
 * Idempotency-Key are this payment's only.
 */
export function fingerprintOf(input: BatchInput): string {
  const { payment } = input;
  const parts = [
    payment.channelId,
    payment.cumulative,
    payment.signature,
    input.method,
    input.resource,
    input.requestHash ?? '',
  ];
  return toHex(sha256(utf8(JSON.stringify(parts.map(String)))));
}

export function settleKey(key: string): string {
  return `settle:${key}`;
}

/** The mark of a charged payment whose meter served nothing (unserved()): by its fingerprint. */
function recoverKey(fingerprint: string): string {
  return `settle-recover:${fingerprint}`;
}

const UNSERVED_BARRIER_KEY = 'settle.unserved.last';

export function envelope(receipt: Receipt, remaining: bigint, latencyMs: number): PaymentResponse {
  return {
    success: true,
    transaction: '',
    network: receipt.network,
    payer: receipt.payer,
    scheme: BATCH_SCHEME,
    channelId: receipt.channelId,
    cumulative: receipt.cumulative,
    delta: receipt.amount,
    remaining: formatUnits(remaining),
    latencyMs,
    receipt,
  };
}
