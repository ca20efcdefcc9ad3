// `channel` voucher verification, in the order of docs/protocol.md#errors (first failure wins):
//   malformed → network → channel found → open → payee → asset → frozen payer → expiring →
//   signature → not increasing → per-channel voucher rate → underpaid → exhausted → advance.
// The checks up to the signature and the rate are every payment's (payment-checks.ts; the
// `batch-settlement` scheme is batch-payments.ts). A `channel` voucher charges its whole amount:
// underpaid is measured from what was charged on the channel, which is the last accepted voucher
// unless batch-settlement payments charged less than their ceilings.
// The rate counts only a voucher that could advance the channel (signature valid, cumulative above
// the last accepted): replaying an old voucher, public in its receipt, cannot use up a buyer's
// allowance (docs/protocol.md#errors puts the rate before "not increasing"; this order is stricter).
// The advance is a compare-and-set in the store, durable before the receipt leaves: two copies of
// one voucher give exactly one acceptance, in one process or many.
import { formatUnits, owedPerPayment, signReceipt, signReceiptAsync } from '@svc/core';
import type {
  Keypair,
  Payment,
  PaymentRejection,
  PaymentRequirements,
  PaymentResponse,
  Receipt,
  ReceiptBody,
} from '@svc/core';
import type { ChannelRecord, Store, WriteOp } from '../store/port.js';
import type { CachedChannel, ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import type { LatencyWindow } from './latency.js';
import { answerOf } from './payment-response.js';
import { fail, pass } from './payment-checks.js';
import type { PaymentChecks, Step } from './payment-checks.js';
import { PaymentIds, paymentIdFingerprint } from './payment-ids.js';

const MAX_CAS_ATTEMPTS = 4;

export interface VerifyInput {
  payment: Payment;
  requirements: PaymentRequirements;
  resource: string;
  method: string;
  requestHash: string | null;
  idempotencyKey: string | null;
  /** x402's payment-identifier (payment-ids.ts): the buyer's name for this payment, if it gave one. */
  paymentId?: string | null;
  /**
   * More ops for the same atomic write as the advance (a stream slice credited with its voucher).
   * If one of them fails, nothing is accepted and the answer is CONFLICT: the caller, which knows
   * what its ops required, says why.
   */
  extraOps?: (accepted: { delta: bigint; receipt: Receipt }) => WriteOp[];
}

export type VerifyOutcome =
  | {
      ok: true;
      response: PaymentResponse;
      payer: string;
      /** The first answer to an earlier copy (Idempotency-Key), not a new acceptance. */ replayed?: true;
    }
  | { ok: false; code: PaymentRejection | 'CONFLICT'; message: string; payer?: string; retryAfter?: number };

type Advanced =
  | { kind: 'accepted'; response: PaymentResponse }
  | { kind: 'lost' }
  | { kind: 'conflict' }
  /** The payment id was taken meanwhile: nothing accepted; what the id holds answers. */
  | { kind: 'named' };

/**
 * Runs after every verification, with its outcome (or the error it threw: the ledger or the store
 * unavailable) and how long it took, in ms. It runs on the payment's path: it must cost O(1).
 */
export type VerifiedHook = (event: { outcome: VerifyOutcome; ms: number } | { error: unknown; ms: number }) => void;

export type { VoucherRateLimit } from './payment-checks.js';

export interface VerifierDeps {
  network: string;
  /** The checks every payment passes (payment-checks.ts). */
  checks: PaymentChecks;
  signer: Keypair;
  /**
   * Sign each receipt on the calling thread instead of the threadpool. On two cores the hand-off
   * (a wake-up each way, and a core the other busy threads already share) costs more than the
   * ~35 µs signature it moves: measured, `/verify` +6 % and less CPU in all (bench/PROFILE.md,
   * seventh stop). On more cores the main thread is the serial stage, and the signature stays off it.
   */
  signReceiptsInline?: boolean;
  book: ChannelBook;
  store: Store;
  events: EventLog;
  clock: Clock;
  latency: LatencyWindow;
  log: { warn(obj: object, msg: string): void };
}

export class Verifier {
  /** unserved() calls this process is making now (recover() waits for them). */
  private readonly unservedInFlight = new Set<Promise<boolean>>();
  readonly #verified: VerifiedHook[] = [];
  private readonly ids: PaymentIds;

  constructor(private readonly deps: VerifierDeps) {
    this.ids = new PaymentIds(deps.store, deps.clock);
  }

  /**
   * A payment its buyer named (payment-identifier): its first answer if it was accepted under the
   * id, the conflict if the id names another payment, null if the id is new (or none was given).
   * Looked up before the checks: an accepted voucher is not increasing any more.
   */
  private async named(input: VerifyInput): Promise<VerifyOutcome | null> {
    if (!input.paymentId) return null;
    const found = await this.ids.lookup(input.requirements.payTo, input.paymentId, idFingerprint(input));
    if (found.kind === 'new') return null;
    if (found.kind === 'conflict') return { ok: false, code: found.code, message: found.message };
    const response = await this.firstAnswer(JSON.parse(found.response) as FirstAnswer);
    return response ? { ok: true, response, payer: response.payer, replayed: true } : null;
  }

  onVerified(hook: VerifiedHook): void {
    this.#verified.push(hook);
  }

  async verify(input: VerifyInput): Promise<VerifyOutcome> {
    const started = performance.now();
    let outcome: VerifyOutcome;
    try {
      outcome = await this.run(input, started);
    } catch (error) {
      this.notify({ error, ms: performance.now() - started });
      throw error;
    }
    if (!outcome.ok && outcome.code !== 'CONFLICT') this.recordRefusal(input, outcome.code);
    this.notify({ outcome, ms: performance.now() - started });
    return outcome;
  }

  /** A hook that throws is logged: the answer stands. */
  private notify(event: Parameters<VerifiedHook>[0]): void {
    for (const hook of this.#verified) {
      try {
        hook(event);
      } catch (err) {
        this.deps.log.warn({ err }, 'a verification hook failed; the answer stands');
      }
    }
  }

  /**
   * `voucher.rejected` in the audit log, next to the `voucher.accepted` of advanceOps. Written off
   * the answer's path: a refusal changes nothing, so its record may lag (or be lost with a store
   * that cannot write, which is logged).
   */
  private recordRefusal(input: VerifyInput, code: PaymentRejection): void {
    const channelId = input.payment.channelId;
    void this.deps.events
      .commit([
        {
          op: 'event',
          event: {
            type: 'voucher.rejected',
            source: 'facilitator',
            ts: new Date(this.deps.clock.now()).toISOString(),
            channelId,
            data: { channelId: channelId.toString(), code, resource: input.resource },
          },
        },
      ])
      .catch((err: unknown) => this.deps.log.warn({ err }, 'could not record a rejected voucher'));
  }

  private async run(input: VerifyInput, started: number): Promise<VerifyOutcome> {
    const { payment, requirements } = input;
    const { checks } = this.deps;
    const named = await this.named(input);
    if (named) return named;
    const network = checks.checkNetwork(payment, requirements);
    if (!network.ok) return network;
    let channel = await checks.channelOf(payment);
    if (!channel) return checks.notFound(payment);
    const payer = channel.record.payer;
    const terms = await checks.checkTerms(channel, payment, requirements);
    if (!terms.ok) return { ...terms, payer };
    const signature = await checks.checkSignature(channel, payment);
    if (!signature.ok) return { ...signature, payer };
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (attempt === 0 && checkIncreasing(channel, payment.cumulative).ok) {
        const rate = await checks.checkRate(payment.channelId);
        if (!rate.ok) return { ...rate, payer };
      }
      // Checked (again) after the rate's await: another copy may have advanced the channel meanwhile.
      const amounts = this.checkAmounts(channel, input);
      if (!amounts.ok) {
        // A repeat of an accepted request (same Idempotency-Key, same voucher) gets its first
        // answer; so does the same payment for the same request after its meter gave up on it.
        const first =
          amounts.code === 'VOUCHER_NOT_INCREASING'
            ? ((await this.replay(input)) ??
              (await this.recover(input, payer)) ??
              // A copy under the same payment id that was accepted while this one was checked.
              (await this.named(input)))
            : null;
        return first ?? { ...amounts, payer };
      }
      const advanced = await this.advance(channel, input, started);
      if (advanced.kind === 'accepted') return { ok: true, response: advanced.response, payer };
      if (advanced.kind === 'named')
        return (
          (await this.named(input)) ?? {
            ok: false,
            code: 'CONFLICT',
            message: 'The payment identifier was taken meanwhile; retry.',
            payer,
          }
        );
      if (advanced.kind === 'conflict')
        return {
          ok: false,
          code: 'CONFLICT',
          message: 'The payment conflicts with the current state.',
          payer,
        };
      // Lost the compare-and-set: another voucher advanced the channel. Re-read and re-check.
      const reloaded = await this.deps.book.reload(payment.channelId);
      if (!reloaded) return { ...fail('CHANNEL_NOT_FOUND', 'The channel disappeared.'), payer };
      channel = reloaded;
      if (channel.record.status !== 'open') return { ...fail('CHANNEL_CLOSED', 'The channel is closed.'), payer };
    }
    return {
      ...fail('VOUCHER_NOT_INCREASING', 'The channel kept advancing under this voucher; sign a new one.'),
      payer,
    };
  }

  private checkAmounts(channel: CachedChannel, input: VerifyInput): Step {
    const { record } = channel;
    const { cumulative } = input.payment;
    const increasing = checkIncreasing(channel, cumulative);
    if (!increasing.ok) return increasing;
    // A `channel` voucher charges its whole amount: what it adds to what was charged so far (the
    // last accepted voucher, unless `batch-settlement` payments charged less than their ceilings).
    const owed = owedPerPayment(input.requirements);
    const delta = cumulative - record.charged;
    if (delta < owed) return fail('VOUCHER_UNDERPAID', `The voucher adds ${delta}, but ${owed} is owed.`);
    if (cumulative > record.deposit) {
      return fail('CHANNEL_EXHAUSTED', `The voucher's cumulative ${cumulative} exceeds the deposit ${record.deposit}.`);
    }
    return pass;
  }

  /** Signs the receipt and commits the advance with any extra ops, atomically. */
  private async advance(channel: CachedChannel, input: VerifyInput, started: number): Promise<Advanced> {
    const { record } = channel;
    const { payment } = input;
    const ts = new Date(this.deps.clock.now()).toISOString();
    const delta = payment.cumulative - record.charged;
    const body: ReceiptBody = {
      v: 1,
      network: this.deps.network,
      signer: this.deps.signer.address,
      channelId: record.id.toString(),
      payer: record.payer,
      payee: record.payee,
      resource: input.resource,
      method: input.method,
      unit: input.requirements.unit,
      amount: formatUnits(delta),
      cumulative: formatUnits(payment.cumulative),
      requestHash: input.requestHash,
      ts,
    };
    const receipt = this.deps.signReceiptsInline
      ? signReceipt(this.deps.signer, body)
      : await signReceiptAsync(this.deps.signer, body);
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
    const keyAt = result.ok || result.reason !== 'duplicate' ? -1 : result.op;
    if (
      keyAt >= 0 &&
      ops[keyAt]?.op === 'idempotency' &&
      (ops[keyAt] as { key: string }).key.startsWith(VERIFY_KEY_PREFIX)
    ) {
      // The idempotency key belongs to another voucher: accept this one without remembering it.
      ops = ops.filter((_, i) => i !== keyAt);
      result = await this.deps.events.commit(ops);
    }
    if (!result.ok && result.reason === 'duplicate' && ops[result.op]?.op === 'payment.id') return { kind: 'named' };
    if (!result.ok) return result.op === 0 ? { kind: 'lost' } : { kind: 'conflict' };
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
      {
        op: 'event',
        event: {
          type: 'voucher.accepted',
          source: 'facilitator',
          ts: receipt.ts,
          channelId: payment.channelId,
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
          },
        },
      },
    ];
    if (input.paymentId) {
      const first: FirstAnswer = {
        receiptId: receipt.id,
        remaining: response.remaining,
        latencyMs: response.latencyMs,
      };
      ops.push(
        this.ids.record(
          input.requirements.payTo,
          input.paymentId,
          idFingerprint(input),
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

  /** The first answer given under an idempotency key for this very voucher, if any. */
  private async replay(input: VerifyInput): Promise<VerifyOutcome | null> {
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
  private async recover(input: VerifyInput, payer: string): Promise<VerifyOutcome | null> {
    const { payment, requirements } = input;
    const key = recoverKey(payment.channelId.toString(), payment.cumulative.toString());
    // A meter's notice may still be waiting behind a stalled store here: the buyer's retry, sent
    // once the meter gave up, must not overtake the mark it is about to write.
    if (this.unservedInFlight.size > 0) await Promise.allSettled([...this.unservedInFlight]);
    const mark = await this.deps.store.getIdempotent(key);
    if (!mark || mark.fingerprint !== fingerprint(payment)) return null;
    const kept = JSON.parse(mark.response) as PaymentResponse | FirstAnswer;
    const response = await this.firstAnswer(kept);
    const receipt = response?.receipt;
    if (
      !response ||
      !receipt ||
      receipt.payee !== requirements.payTo ||
      receipt.resource !== input.resource ||
      receipt.method !== input.method ||
      receipt.requestHash !== input.requestHash ||
      receipt.unit !== requirements.unit ||
      BigInt(receipt.amount) < owedPerPayment(requirements)
    )
      return null;
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
 * What an idempotency record keeps of an accepted voucher's answer: the rest is its receipt, stored
 * in the same write. A whole answer is ~1.5 KB a record, on every meter's /verify.
 */
interface FirstAnswer {
  receiptId: string;
  remaining: string;
  latencyMs: number;
}

function checkIncreasing(channel: CachedChannel, cumulative: bigint): Step {
  const last = channel.record.lastAccepted;
  if (cumulative > last) return pass;
  return fail(
    'VOUCHER_NOT_INCREASING',
    `The voucher's cumulative ${cumulative} is not above the last accepted ${last}.`,
  );
}

/** What a payment id is bound to: this voucher, for this request, on these terms. */
function idFingerprint(input: VerifyInput): string {
  const { payment, requirements } = input;
  return paymentIdFingerprint({
    scheme: 'channel',
    network: requirements.network,
    asset: requirements.asset,
    payTo: requirements.payTo,
    channelId: payment.channelId.toString(),
    cumulative: payment.cumulative.toString(),
    signature: payment.signature,
    resource: input.resource,
    method: input.method,
    requestHash: input.requestHash,
  });
}

/** Idempotency records are shared (attestations, reports): a client's key lives in its own namespace. */
const VERIFY_KEY_PREFIX = 'verify:';

function verifyKey(key: string): string {
  return `${VERIFY_KEY_PREFIX}${key}`;
}

/** A payment whose meter gave up on its answer: accepted again, once, for its own request. */
function recoverKey(channelId: string, cumulative: string): string {
  return `recover:${channelId}:${cumulative}`;
}

/** Written by every unserved() before it reads: a write that commits after the writes queued before it. */
const UNSERVED_BARRIER_KEY = 'verify.unserved.last';

export function fingerprint(payment: Payment): string {
  return `${payment.channelId}:${payment.cumulative}:${payment.signature}`;
}

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}
