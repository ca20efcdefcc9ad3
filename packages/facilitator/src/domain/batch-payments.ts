// `batch-settlement` payments (docs/schemes/scheme_batch_settlement_stellar.md): a voucher is a
// ceiling — what was charged on the channel so far plus this payment's price — and the facilitator
// keeps what was actually charged per channel. /verify checks a payment and reserves the channel for
// it (so that a second request cannot ride the same ceiling while the first is served); /settle
// charges the channel what the request cost, at most its price, and issues the receipt. A payment
// whose ceiling does not match what was charged gets the channel's state and the last voucher
// back, so a buyer that lost its books catches up in one round trip (the corrective 402).
//
// The checks before the amounts are those of every payment (payment-checks.ts), the amount checks
// and refusals are batch-amount-checks.ts's, the answers to copies of a charged payment
// batch-first-answers.ts's; the writes are the store's compare-and-set ops `channel.reserve` and
// `channel.charge` (store/port.ts).
import { BATCH_SCHEME, formatUnits } from '@svc/core';
import type { Keypair } from '@svc/core';
import type { ChannelRecord, Store, WriteOp } from '../store/port.js';
import { acceptedEvent, signedReceipt } from './accepted-receipt.js';
import {
  busy,
  ceilingRoom,
  channelStateOf,
  depositRefusal,
  fits,
  ownsReservation,
  priceOf,
  refusal,
  refuse,
  reservationMs,
  reservedByOther,
  within,
} from './batch-amount-checks.js';
import { BatchFirstAnswers, envelope, fingerprintOf, settleKey } from './batch-first-answers.js';
import type { SettleRecord } from './batch-first-answers.js';
import type { BatchInput, BatchJudgedHook, BatchRefused, BatchSettled, BatchVerified } from './batch-types.js';
import type { CachedChannel, ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import type { LatencyWindow } from './latency.js';
import type { DepositLanded, Deposits } from './deposits.js';
import type { PaymentChecks } from './payment-checks.js';
import { PaymentIds, paymentIdFingerprint } from './payment-ids.js';

const MAX_CAS_ATTEMPTS = 4;

export interface BatchPaymentsDeps {
  network: string;
  checks: PaymentChecks;
  /** This facilitator's key: the receiver authorizer a batch-settlement channel must be bound to. */
  signer: Keypair;
  signReceiptsInline: boolean;
  book: ChannelBook;
  store: Store;
  events: EventLog;
  clock: Clock;
  latency: LatencyWindow;
  log: { warn(obj: object, msg: string): void };
  /** Deposit payloads (deposits.ts); without it they are refused as a payload type not taken. */
  deposits?: Deposits;
}

export class BatchPayments {
  readonly #judged: BatchJudgedHook[] = [];
  private readonly ids: PaymentIds;
  private readonly answers: BatchFirstAnswers;

  constructor(private readonly deps: BatchPaymentsDeps) {
    this.ids = new PaymentIds(deps.store, deps.clock);
    this.answers = new BatchFirstAnswers({ store: deps.store, clock: deps.clock, ids: this.ids });
  }

  onJudged(hook: BatchJudgedHook): void {
    this.#judged.push(hook);
  }

  /**
   * POST /verify: the payment is valid for its price, and the channel is reserved for it. A payment
   * its buyer named (payment-identifier) that was settled already is valid again, for its own
   * request: its /settle answers the first charge.
   */
  verify(input: BatchInput): Promise<BatchVerified> {
    return this.judged('verify', () => this.verifyNow(input));
  }

  /**
   * POST /settle (and a batch-settlement stream's slice): charges the channel `input.amount`; see
   * settleNow().
   */
  settle(input: BatchInput): Promise<BatchSettled> {
    return this.judged('settle', () => this.settleNow(input));
  }

  private async judged<T extends BatchVerified | BatchSettled>(
    kind: 'verify' | 'settle',
    run: () => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    let outcome: T;
    try {
      outcome = await run();
    } catch (error) {
      this.notify({ kind, error, ms: performance.now() - started });
      throw error;
    }
    this.notify({ kind, outcome, ms: performance.now() - started });
    return outcome;
  }

  /** A hook that throws is logged: the answer stands. */
  private notify(event: Parameters<BatchJudgedHook>[0]): void {
    for (const hook of this.#judged) {
      try {
        hook(event);
      } catch (err) {
        this.deps.log.warn({ err }, 'a batch-settlement hook failed; the answer stands');
      }
    }
  }

  private async verifyNow(input: BatchInput): Promise<BatchVerified> {
    const named = await this.answers.named(input);
    if (named) return named.ok ? { ok: true, payer: named.payer, channelState: named.channelState } : named;
    const checked = await this.check(input);
    if (!checked.ok) return checked;
    let channel = checked.channel;
    const payer = channel.record.payer;
    const fingerprint = fingerprintOf(input);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const { record } = channel;
      const fitted = fits(record, input.payment.cumulative, input.amount, payer);
      if (!fitted.ok) return fitted;
      if (reservedByOther(record, fingerprint, this.now())) return busy(record, payer);
      if (attempt === 0) {
        const rate = await this.deps.checks.checkRate(record.id);
        if (!rate.ok) return { ...refusal(rate), payer };
      }
      const at = this.now();
      const reserved = await this.deps.store.write([
        {
          op: 'channel.reserve',
          channelId: record.id,
          expectedCharged: record.charged,
          fingerprint,
          until: new Date(this.deps.clock.now() + reservationMs(input.requirements)).toISOString(),
          at,
        },
      ]);
      if (reserved.ok) {
        this.deps.book.invalidate(record.id);
        return { ok: true, payer, channelState: channelStateOf(record) };
      }
      const reloaded = await this.deps.book.reload(record.id);
      if (!reloaded) return { ...refuse('channel_not_found', `Channel ${record.id} disappeared.`), payer };
      channel = reloaded;
    }
    return busy(channel.record, payer);
  }

  /**
   * POST /settle: charges the channel `input.amount` (what the request cost; at most its price).
   * After this payment's own /verify the reservation stands for it; without one the payment is
   * checked here first, as /verify would. A charge of nothing releases the channel and issues no
   * receipt (the handler failed, or the seller charged nothing).
   */
  private async settleNow(input: BatchInput): Promise<BatchSettled> {
    const started = performance.now();
    const named = await this.answers.named(input);
    if (named) return named;
    const checked = await this.check(input);
    if (!checked.ok) return (await this.answers.again(input)) ?? (await this.answers.recover(input)) ?? checked;
    const settled = await this.settleChecked(input, checked.channel, started);
    const deposited = checked.deposit?.deposited;
    return settled.ok && deposited ? { ...settled, deposit: deposited } : settled;
  }

  private async settleChecked(
    input: BatchInput,
    checkedChannel: CachedChannel,
    started: number,
  ): Promise<BatchSettled> {
    let channel = checkedChannel;
    const payer = channel.record.payer;
    const fingerprint = fingerprintOf(input);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const { record } = channel;
      const own = ownsReservation(record, fingerprint, this.now());
      // A payment verified here is charged against its own ceiling; another is checked as /verify would.
      const price = own ? ceilingRoom(record, input.payment.cumulative) : priceOf(input);
      const fitted = own
        ? within(record, input.payment.cumulative, input.amount, payer)
        : fits(record, input.payment.cumulative, price, payer);
      if (!fitted.ok) return (await this.answers.again(input)) ?? (await this.answers.recover(input)) ?? fitted;
      if (!own && input.amount > price)
        return {
          ...refuse(
            'charge_exceeds_signed_cumulative',
            `A charge of ${input.amount} is above this payment's price ${price}.`,
          ),
          payer,
        };
      if (!own && reservedByOther(record, fingerprint, this.now())) return busy(record, payer);
      if (input.amount === 0n) return this.release(record, fingerprint, payer);
      if (attempt === 0 && !own) {
        const rate = await this.deps.checks.checkRate(record.id);
        if (!rate.ok) return { ...refusal(rate), payer };
      }
      const charged = await this.charge(record, input, fingerprint, started);
      if (charged === 'conflict')
        return {
          ...refuse('channel_busy', 'The payment conflicts with the current state.'),
          payer,
          conflict: true,
        };
      if (charged) return charged;
      const reloaded = await this.deps.book.reload(record.id);
      if (!reloaded) return { ...refuse('channel_not_found', `Channel ${record.id} disappeared.`), payer };
      channel = reloaded;
    }
    return (await this.answers.again(input)) ?? busy(channel.record, payer);
  }

  /**
   * The checks of every payment, and the channel bound to this facilitator as its receiver
   * authorizer; a deposit payload's transaction lands first (deposits.ts).
   */
  private async check(
    input: BatchInput,
  ): Promise<{ ok: true; channel: CachedChannel; deposit: DepositLanded | null } | BatchRefused> {
    const { checks } = this.deps;
    const { payment, requirements } = input;
    const network = checks.checkNetwork(payment, requirements);
    if (!network.ok) return refusal(network);
    let deposit: DepositLanded | null = null;
    if (payment.kind === 'deposit') {
      if (!this.deps.deposits)
        return refuse(
          'payload_type',
          'A deposit payload is not taken here; open the channel and pay with a voucher payload.',
        );
      const landed = await this.deps.deposits.land(payment, requirements, input.ip ?? null);
      if (!landed.ok) return depositRefusal(landed);
      deposit = landed;
    }
    const channel = await checks.channelOf(payment);
    if (!channel) return refusal(checks.notFound(payment));
    const payer = channel.record.payer;
    const terms = await checks.checkTerms(channel, payment, requirements);
    if (!terms.ok) return { ...refusal(terms), payer };
    const authorizer = channel.record.receiverAuthorizer;
    if (authorizer !== this.deps.signer.address)
      return {
        ...refuse(
          'receiver_authorizer_mismatch',
          authorizer === null
            ? `Channel ${channel.record.id} has no receiver authorizer: a batch-settlement channel must be opened with extra.receiverAuthorizer (${this.deps.signer.address}); pay it with the \`channel\` option instead.`
            : `Channel ${channel.record.id} is bound to the receiver authorizer ${authorizer}, not this facilitator's ${this.deps.signer.address}.`,
        ),
        payer,
      };
    const signature = await checks.checkSignature(channel, payment);
    if (!signature.ok) return { ...refusal(signature), payer };
    return { ok: true, channel, deposit };
  }

  /** The charge, its receipt and its event, in one write; null when the channel moved under it (reload and retry). */
  private async charge(
    record: ChannelRecord,
    input: BatchInput,
    fingerprint: string,
    started: number,
  ): Promise<BatchSettled | 'conflict' | null> {
    const { payment } = input;
    const at = this.now();
    const charged = record.charged + input.amount;
    const receipt = await signedReceipt(this.deps, record, input, {
      unit: input.terms.unit,
      amount: input.amount,
      cumulative: charged,
      ts: at,
    });
    const after: ChannelRecord = { ...record, charged };
    const channelState = channelStateOf(after);
    const latencyMs = round2(performance.now() - started);
    const response = envelope(receipt, record.deposit - charged, latencyMs);
    const ops: WriteOp[] = [
      {
        op: 'channel.charge',
        channelId: record.id,
        expectedCharged: record.charged,
        charge: input.amount,
        ceiling: payment.cumulative,
        signature: payment.signature,
        fingerprint,
        at,
      },
      { op: 'receipt', receipt },
      acceptedEvent(receipt, latencyMs, BATCH_SCHEME),
    ];
    const extra = input.extraOps?.({ receipt }) ?? [];
    ops.push(...extra);
    if (input.idempotencyKey) {
      const kept: SettleRecord = {
        receiptId: receipt.id,
        chargedAmount: formatUnits(input.amount),
        channelState,
        remaining: response.remaining,
        latencyMs,
      };
      ops.push({
        op: 'idempotency',
        key: settleKey(input.idempotencyKey),
        fingerprint,
        response: JSON.stringify(kept),
        at,
      });
    }
    if (input.paymentId) {
      const kept: SettleRecord = {
        receiptId: receipt.id,
        chargedAmount: formatUnits(input.amount),
        channelState,
        remaining: response.remaining,
        latencyMs,
      };
      ops.push(
        this.ids.record(
          input.requirements.payTo,
          input.paymentId,
          paymentIdFingerprint(input.requirements.scheme, input),
          JSON.stringify(kept),
          at,
        ),
      );
    }
    let written = await this.deps.events.commit(ops);
    if (!written.ok && written.reason === 'duplicate' && ops[written.op]?.op === 'idempotency') {
      // The key was another payment's: charge this one without remembering it.
      ops.splice(written.op, 1);
      written = await this.deps.events.commit(ops);
    }
    // The payment id was taken meanwhile (another copy charged first, or another payment): nothing
    // was charged here; that copy's answer, or the conflict.
    if (!written.ok && written.reason === 'duplicate' && ops[written.op]?.op === 'payment.id')
      return (await this.answers.named(input)) ?? null;
    // The charge itself lost its compare-and-set: reload and retry. An extra op refused: conflict.
    if (!written.ok) return written.op >= 3 && written.op < 3 + extra.length ? 'conflict' : null;
    this.deps.book.charged(record.id, charged, payment.cumulative, payment.signature, at);
    this.deps.latency.record(performance.now() - started);
    return { ok: true, payer: record.payer, chargedAmount: input.amount, channelState, response };
  }

  private async release(record: ChannelRecord, fingerprint: string, payer: string): Promise<BatchSettled> {
    await this.deps.store.write([{ op: 'channel.release', channelId: record.id, fingerprint }]);
    this.deps.book.invalidate(record.id);
    return { ok: true, payer, chargedAmount: 0n, channelState: channelStateOf(record), response: null };
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /**
   * POST /verify/unserved under the key of a /settle: the meter got no answer in time and served
   * nothing; see BatchFirstAnswers.unserved().
   */
  unserved(key: string): Promise<boolean> {
    return this.answers.unserved(key);
  }
}

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}
