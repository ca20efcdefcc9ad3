// Accepting a payment: the one use case behind POST /verify and POST /settle. The route reads the
// request (its body, its Idempotency-Key, whether the caller holds the payee's seller token) and
// writes the answer; everything between is here: a stream's first slice only where a session can
// be opened, the verifier's checks and compare-and-set, the attest token for the payee's side, the
// settle-once rule of /settle, and the hooks that follow an acceptance or a refusal (x402's
// facilitator `onAfterVerify` / `onVerifyFailure` are the model):
//
//   const payments = new Payments({ verifier, streams, store, book, vouchers, attestations, clock });
//   payments.onAccepted(({ attempt, accepted }) => catalog.record(…));
//   const answer = await payments.verify({ input, payeeSide: true, listing });
//
// The verifier itself records `voucher.accepted` (in the advance's own write) and
// `voucher.rejected` (every refusal, stream slices included).
import { fromHex } from '@svc/core';
import type {
  Payment,
  PaymentRejection,
  PaymentRequirements,
  PaymentResponse,
  SettleSuccess,
  VoucherContext,
} from '@svc/core';
import type { Store, WriteOp } from '../store/port.js';
import type { Attestations } from './attestations.js';
import type { Listing } from './catalog.js';
import type { ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import { paysFor } from './first-answers.js';
import { paymentResponseOf } from './payment-response.js';
import type { VerifyInput, VerifyOutcome } from './verifier.js';
import type { BatchInput, BatchSettled, BatchVerified } from './batch-types.js';

/** One request to pay, as the route read it. */
export interface PaymentAttempt {
  input: VerifyInput;
  /** The caller proved to be the payee's side (its seller token): it gets the attest token. */
  payeeSide: boolean;
  /** What the payment says about its resource, for the discovery catalog (null: nothing to list). */
  listing: Listing | null;
}

export type Accepted = Extract<VerifyOutcome, { ok: true }>;
export type Refused = Extract<VerifyOutcome, { ok: false }>;

/** What a hook reads of an attempt, whatever its scheme (a batch-settlement one's terms as `channel` terms). */
export interface AttemptView {
  input: { requirements: PaymentRequirements; payment: Payment };
  payeeSide: boolean;
  listing: Listing | null;
}

/** Runs after a new acceptance (not after the replay of an earlier answer), of either scheme. */
export type AcceptedHook = (event: {
  attempt: AttemptView;
  accepted: { response: PaymentResponse; payer: string };
}) => void;

/** One `batch-settlement` request to pay, as the route read it. */
export interface BatchAttempt {
  input: BatchInput;
  payeeSide: boolean;
  listing: Listing | null;
}
/** Runs after a refusal of /verify or /settle. */
export type RefusedHook = (event: { attempt: PaymentAttempt; refused: Refused }) => void;

export type VerifyResult = (Accepted & { attestToken: string | null }) | Refused;

/** A settle answer: the svc envelope, plus its fields under `extra` and the amount (see settled()). */
export type SettleAnswer = ReturnType<typeof settled>;
export type SettleResult =
  | { ok: true; answer: SettleAnswer }
  | { ok: false; code: PaymentRejection | 'CONFLICT'; message: string; retryAfter?: number };

export interface PaymentsDeps {
  verifier: { verify(input: VerifyInput): Promise<VerifyOutcome>; unserved(key: string): Promise<boolean> };
  /** `batch-settlement` payments (batch-payments.ts). */
  batch: {
    verify(input: BatchInput): Promise<BatchVerified>;
    settle(input: BatchInput): Promise<BatchSettled>;
    unserved(key: string): Promise<boolean>;
  };
  /** Throws RATE_LIMITED when no stream session can be opened for the channel now. */
  streams: { checkCapacity(channelId: bigint): Promise<void> };
  store: Store;
  book: ChannelBook;
  vouchers: VoucherContext;
  attestations: Attestations;
  clock: Clock;
  /** A hook that throws is logged, and the payment stands. */
  log: { warn(obj: object, msg: string): void };
}

export class Payments {
  readonly #accepted: AcceptedHook[] = [];
  readonly #refused: RefusedHook[] = [];

  constructor(private readonly deps: PaymentsDeps) {}

  onAccepted(hook: AcceptedHook): void {
    this.#accepted.push(hook);
  }

  onRefused(hook: RefusedHook): void {
    this.#refused.push(hook);
  }

  /** POST /verify: accepts the voucher (or refuses it); the payee's side gets the attest token. */
  async verify(attempt: PaymentAttempt): Promise<VerifyResult> {
    const { input } = attempt;
    // A stream's first slice: charge it only if a session can be opened for it.
    if (input.requirements.unit !== 'request') await this.deps.streams.checkCapacity(input.payment.channelId);
    const outcome = await this.accept(attempt, input);
    if (!outcome.ok) return outcome;
    // The attest token is the payee's side's alone: a buyer calling /verify itself gets none.
    const attestToken = attempt.payeeSide ? this.deps.attestations.issue(outcome.response.receipt) : null;
    return { ...outcome, attestToken };
  }

  /** POST /verify of a `batch-settlement` payment: checked, and its channel reserved for it. */
  verifyBatch(attempt: BatchAttempt): Promise<BatchVerified> {
    return this.deps.batch.verify(attempt.input);
  }

  /**
   * POST /settle of a `batch-settlement` payment: the channel charged what the request cost, the
   * receipt issued, the hooks run (a replay of an earlier answer runs none); the payee's side gets
   * the attest token.
   */
  async settleBatch(attempt: BatchAttempt): Promise<BatchSettled & { attestToken?: string | null }> {
    // A stream's first slice: charge it only if a session can be opened for it (as verify()).
    if (attempt.input.terms.unit !== 'request') await this.deps.streams.checkCapacity(attempt.input.payment.channelId);
    const settled = await this.deps.batch.settle(attempt.input);
    if (!settled.ok || settled.replayed || settled.response === null) return settled;
    const view: AttemptView = {
      ...attempt,
      input: { requirements: attempt.input.terms, payment: attempt.input.payment },
    };
    this.run(this.#accepted, { attempt: view, accepted: { response: settled.response, payer: settled.payer } });
    const attestToken = attempt.payeeSide ? this.deps.attestations.issue(settled.response.receipt) : null;
    return { ...settled, attestToken };
  }

  /**
   * POST /verify/unserved: the meter got no answer to its /verify under `key` in time and served
   * nothing; the payment accepted under it (if any) is accepted again, once, for its own request.
   */
  async unserved(key: string): Promise<boolean> {
    // The key is a /verify's (`channel`) or a /settle's (`batch-settlement`): each side knows its own.
    return (await this.deps.verifier.unserved(key)) || (await this.deps.batch.unserved(key));
  }

  /**
   * POST /settle: confirms an accepted voucher once, accepting it first if it was not yet. A
   * seller that settles before serving must not serve a replay again: a repeat is refused unless
   * it is the same request again, under its Idempotency-Key.
   */
  async settle(attempt: PaymentAttempt): Promise<SettleResult> {
    const { input } = attempt;
    const key = input.idempotencyKey;
    const before = await this.acceptedBefore(input);
    if (before) {
      const answer = settled(before);
      const first = await this.deps.store.write([
        settledOnce(before.receipt.id, key, answer, new Date(this.deps.clock.now()).toISOString()),
      ]);
      if (first.ok) return { ok: true, answer };
      const earlier = await this.deps.store.getIdempotent(settledKey(before.receipt.id));
      if (key !== null && earlier?.fingerprint === key) {
        if (earlier.response !== '') return { ok: true, answer: JSON.parse(earlier.response) as SettleAnswer };
        // /settle accepted it itself: the verifier's record under the key has the first answer.
        const again = await this.deps.verifier.verify(input);
        if (again.ok) return { ok: true, answer: settled(again.response) };
      }
      if (input.paymentId) {
        // The same payment under its payment-identifier (payment-ids.ts): its first answer, once more.
        const again = await this.deps.verifier.verify(input);
        if (again.ok) return { ok: true, answer: settled(again.response) };
        if (again.code === 'invalid_payment_identifier_conflict') return again;
      }
      return {
        ok: false,
        code: 'VOUCHER_NOT_INCREASING',
        message:
          'This voucher was settled already; send a new one (a retry of the same request carries its Idempotency-Key).',
      };
    }
    const outcome = await this.accept(attempt, {
      ...input,
      extraOps: ({ receipt }) => [settledOnce(receipt.id, key, null, receipt.ts)],
    });
    return outcome.ok ? { ok: true, answer: settled(outcome.response) } : outcome;
  }

  /** The verifier's answer, then the hooks. */
  private async accept(attempt: PaymentAttempt, input: VerifyInput): Promise<VerifyOutcome> {
    const outcome = await this.deps.verifier.verify(input);
    if (outcome.ok) {
      if (!outcome.replayed) this.run(this.#accepted, { attempt, accepted: outcome });
    } else this.run(this.#refused, { attempt, refused: outcome });
    return outcome;
  }

  private run<E>(hooks: ((event: E) => void)[], event: E): void {
    for (const hook of hooks) {
      try {
        hook(event);
      } catch (err) {
        this.deps.log.warn({ err }, 'a payment hook failed; the payment stands');
      }
    }
  }

  /**
   * x402 resource servers call /verify, serve, then /settle with the same body: the voucher is then
   * already accepted, for the same terms. Anyone may call /verify (a buyer at a price of 1, say) and
   * a svc meter never calls /settle, so an accepted voucher confirms only the payment it was: the
   * same resource, method and request, at a price its amount covers. Anything else falls through to
   * the verifier, which refuses a voucher it has seen (VOUCHER_NOT_INCREASING).
   */
  private async acceptedBefore(input: VerifyInput): Promise<PaymentResponse | null> {
    const { payment } = input;
    const receipt = await this.deps.store.findReceipt(payment.channelId, payment.cumulative);
    if (!receipt || !paysFor(receipt, input)) return null;
    const channel = await this.deps.book.get(payment.channelId);
    // Knowing a channel id and an amount is not enough: the payload must carry the buyer's signature.
    const signature = fromHex(payment.signature, 64);
    if (
      !channel?.keyIsStrict ||
      !this.deps.vouchers.verify(channel.voucherKey, payment.channelId, payment.cumulative, signature)
    )
      return null;
    return paymentResponseOf(receipt, channel.record.deposit);
  }
}

/**
 * The official x402 facilitator client keeps only standard fields and `extra`, so the svc fields go
 * under `extra` as well: a seller on the official middleware still relays the receipt to its buyer.
 */
function settled(response: PaymentResponse) {
  const { success: _s, transaction: _t, network: _n, payer: _p, ...svc } = response;
  return { ...response, amount: response.delta, extra: svc } satisfies SettleSuccess;
}

/**
 * The write that confirms a receipt's voucher once through /settle. The answer is kept for a retry
 * of the same request (same Idempotency-Key); null when /settle itself accepted the voucher — the
 * verifier's own idempotency record then answers a retry.
 */
function settledOnce(receiptId: string, key: string | null, answer: SettleAnswer | null, at: string): WriteOp {
  return {
    op: 'idempotency',
    key: settledKey(receiptId),
    fingerprint: key ?? '',
    response: answer === null ? '' : JSON.stringify(answer),
    at,
  };
}

function settledKey(receiptId: string): string {
  return `settled:${receiptId}`;
}
