// `batch-settlement` payments (docs/schemes/scheme_batch_settlement_stellar.md): a voucher is a
// ceiling — what was charged on the channel so far plus this payment's price — and the facilitator
// keeps what was actually charged per channel. /verify checks a payment and reserves the channel for
// it (so that a second request cannot ride the same ceiling while the first is served); /settle
// charges the channel what the request cost, at most its price, and issues the receipt. A payment
// whose ceiling does not match what was charged gets the channel's state and the last voucher
// back, so a buyer that lost its books catches up in one round trip (the corrective 402).
//
// The checks before the amounts are those of every payment (payment-checks.ts); the writes are the
// store's compare-and-set ops `channel.reserve` and `channel.charge` (store/port.ts).
import { formatUnits, sha256, toHex, utf8 } from '@svc/core';
import type {
  BatchCode,
  BatchCodeName,
  PaymentIdRejection,
  BatchPayment,
  BatchRequirements,
  ChannelState,
  Keypair,
  PaymentRequirements,
  PaymentResponse,
  Receipt,
  VoucherState,
} from '@svc/core';
import { BATCH_SCHEME, batchCode, batchCodeOf } from '@svc/core';
import type { ChannelRecord, Store, WriteOp } from '../store/port.js';
import { acceptedEvent, signedReceipt } from './accepted-receipt.js';
import type { CachedChannel, ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import type { LatencyWindow } from './latency.js';
import type { DepositLanded, DepositRefused, Deposits } from './deposits.js';
import type { PaymentChecks, Rejection } from './payment-checks.js';
import { PaymentIds, paymentIdFingerprint } from './payment-ids.js';

/** How long a verified payment holds its channel, at least and at most (its terms' maxTimeoutSeconds between). */
const RESERVATION_MIN_S = 60;
const RESERVATION_MAX_S = 600;
const MAX_CAS_ATTEMPTS = 4;

export interface BatchInput {
  payment: BatchPayment;
  requirements: BatchRequirements;
  /** The same terms as svc's `channel` terms (unit, unit price, slices): for receipts, listings and streams. */
  terms: PaymentRequirements;
  /** The most this payment may charge: at /verify its price, at /settle the charge (≤ the price). */
  amount: bigint;
  resource: string;
  method: string;
  requestHash: string | null;
  idempotencyKey: string | null;
  /**
   * More ops for the same atomic write as the charge (a stream slice credited with its voucher).
   * If one of them fails, nothing is charged and the refusal says `conflict`: the caller, which
   * knows what its ops required, says why.
   */
  extraOps?: (charged: { receipt: Receipt }) => WriteOp[];
  /** The client's address, for the sponsored-deposit limit per address (deposits.ts). */
  ip?: string | null;
  /** x402's payment-identifier (payment-ids.ts): the buyer's name for this payment, if it gave one. */
  paymentId?: string | null;
}

export interface BatchRefused {
  ok: false;
  code: BatchCode | 'RATE_LIMITED' | PaymentIdRejection;
  message: string;
  payer?: string;
  retryAfter?: number;
  /** With cumulative_amount_mismatch: what the buyer's books must catch up to. */
  channelState?: ChannelState;
  voucherState?: VoucherState;
  /** One of the input's extraOps refused the write: nothing was charged. */
  conflict?: true;
}

/**
 * Runs after every /verify and /settle judged here (a stream slice's charge included), with its
 * outcome (or the error it threw: the store unavailable) and how long it took, in ms. It runs on
 * the payment's path: it must cost O(1).
 */
export type BatchJudgedHook = (
  event: { kind: 'verify' | 'settle'; ms: number } & ({ outcome: BatchVerified | BatchSettled } | { error: unknown }),
) => void;

export type BatchVerified = { ok: true; payer: string; channelState: ChannelState } | BatchRefused;

export type BatchSettled =
  | {
      ok: true;
      payer: string;
      chargedAmount: bigint;
      channelState: ChannelState;
      /** The svc envelope of the receipt; null for a charge of nothing (no receipt is issued). */
      response: PaymentResponse | null;
      /** The first answer to an earlier copy (Idempotency-Key), not a new charge. */
      replayed?: true;
      /** A deposit payload's transaction (its hash) and what it deposited: the deposit response. */
      deposit?: { transaction: string; amount: bigint };
    }
  | BatchRefused;

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

/** What /settle keeps under an Idempotency-Key: enough to answer a retry the same way. */
interface SettleRecord {
  receiptId: string | null;
  chargedAmount: string;
  channelState: ChannelState;
  remaining: string;
  latencyMs: number;
}

export class BatchPayments {
  readonly #judged: BatchJudgedHook[] = [];
  private readonly ids: PaymentIds;

  constructor(private readonly deps: BatchPaymentsDeps) {
    this.ids = new PaymentIds(deps.store, deps.clock);
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
    const named = await this.named(input);
    if (named) return named.ok ? { ok: true, payer: named.payer, channelState: named.channelState } : named;
    const checked = await this.check(input);
    if (!checked.ok) return checked;
    let channel = checked.channel;
    const payer = channel.record.payer;
    const fingerprint = fingerprintOf(input);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const { record } = channel;
      const fits = this.fits(record, input.payment.cumulative, input.amount, payer);
      if (!fits.ok) return fits;
      if (reservedByOther(record, fingerprint, this.now())) return this.busy(record, payer);
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
      if (!reloaded) return { ...this.refuse('channel_not_found', `Channel ${record.id} disappeared.`), payer };
      channel = reloaded;
    }
    return this.busy(channel.record, payer);
  }

  /**
   * POST /settle: charges the channel `input.amount` (what the request cost; at most its price).
   * After this payment's own /verify the reservation stands for it; without one the payment is
   * checked here first, as /verify would. A charge of nothing releases the channel and issues no
   * receipt (the handler failed, or the seller charged nothing).
   */
  private async settleNow(input: BatchInput): Promise<BatchSettled> {
    const started = performance.now();
    const named = await this.named(input);
    if (named) return named;
    const checked = await this.check(input);
    if (!checked.ok) return (await this.again(input)) ?? (await this.recover(input)) ?? checked;
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
      const fits = own
        ? this.within(record, input.payment.cumulative, input.amount, payer)
        : this.fits(record, input.payment.cumulative, price, payer);
      if (!fits.ok) return (await this.again(input)) ?? (await this.recover(input)) ?? fits;
      if (!own && input.amount > price)
        return {
          ...this.refuse(
            'charge_exceeds_signed_cumulative',
            `A charge of ${input.amount} is above this payment's price ${price}.`,
          ),
          payer,
        };
      if (!own && reservedByOther(record, fingerprint, this.now())) return this.busy(record, payer);
      if (input.amount === 0n) return this.release(record, fingerprint, payer);
      if (attempt === 0 && !own) {
        const rate = await this.deps.checks.checkRate(record.id);
        if (!rate.ok) return { ...refusal(rate), payer };
      }
      const charged = await this.charge(record, input, fingerprint, started);
      if (charged === 'conflict')
        return {
          ...this.refuse('channel_busy', 'The payment conflicts with the current state.'),
          payer,
          conflict: true,
        };
      if (charged) return charged;
      const reloaded = await this.deps.book.reload(record.id);
      if (!reloaded) return { ...this.refuse('channel_not_found', `Channel ${record.id} disappeared.`), payer };
      channel = reloaded;
    }
    return (await this.again(input)) ?? this.busy(channel.record, payer);
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
        return this.refuse(
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
        ...this.refuse(
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

  /** The voucher is for exactly what was charged plus `price`, within the deposit and above what was claimed. */
  private fits(record: ChannelRecord, ceiling: bigint, price: bigint, payer: string): { ok: true } | BatchRefused {
    if (ceiling > record.deposit)
      return {
        ...this.refuse(
          'cumulative_exceeds_balance',
          `The voucher's ceiling ${ceiling} exceeds the channel's balance ${record.deposit}: top the channel up.`,
        ),
        payer,
      };
    if (ceiling <= record.claimed)
      return this.mismatch(
        record,
        'cumulative_below_claimed',
        `The voucher's ceiling ${ceiling} is not above what the ledger shows claimed (${record.claimed}).`,
        payer,
      );
    if (ceiling !== record.charged + price)
      return this.mismatch(
        record,
        'cumulative_amount_mismatch',
        `The voucher's ceiling is ${ceiling}, but ${record.charged} was charged on channel ${record.id} and the price is ${price}: sign ${record.charged + price}.`,
        payer,
      );
    return { ok: true };
  }

  /** A charge under the ceiling this payment's /verify reserved the channel for. */
  private within(record: ChannelRecord, ceiling: bigint, charge: bigint, payer: string): { ok: true } | BatchRefused {
    if (record.charged + charge > ceiling)
      return {
        ...this.refuse(
          'charge_exceeds_signed_cumulative',
          `Charging ${charge} on top of the ${record.charged} charged would pass the voucher's ceiling ${ceiling}.`,
        ),
        payer,
      };
    return { ok: true };
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
      return (await this.named(input)) ?? null;
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

  /**
   * POST /verify/unserved under the key of a /settle: the meter got no answer in time and served
   * nothing. The payment charged under the key is marked to be answered again — once — for the same
   * request (recover()), as a `channel` payment is (verifier.ts), instead of being refused with the
   * channel's state and paid again.
   */
  async unserved(key: string): Promise<boolean> {
    const at = this.now();
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
  private async recover(input: BatchInput): Promise<BatchSettled | null> {
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
  private async named(input: BatchInput): Promise<BatchSettled | null> {
    if (!input.paymentId) return null;
    const found = await this.ids.lookup(
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
  private async again(input: BatchInput): Promise<BatchSettled | null> {
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

  /** A refusal that brings the buyer's books back: the channel as it is, and its highest voucher. */
  private mismatch(record: ChannelRecord, name: BatchCodeName, message: string, payer: string): BatchRefused {
    const voucherState =
      record.lastSignature === null
        ? undefined
        : { signedMaxClaimable: formatUnits(record.lastAccepted), signature: record.lastSignature };
    return {
      ...this.refuse(name, message),
      payer,
      channelState: channelStateOf(record),
      ...(voucherState ? { voucherState } : {}),
    };
  }

  private busy(record: ChannelRecord, payer: string): BatchRefused {
    return {
      ...this.refuse(
        'channel_busy',
        `Channel ${record.id} is serving another payment; retry once it is answered (a channel pays one request at a time).`,
      ),
      payer,
      retryAfter: 1,
    };
  }

  private refuse(name: BatchCodeName, message: string): BatchRefused {
    return { ok: false, code: batchCode(name), message };
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

/** The channel as a batch-settlement answer shows it (design: channelState). */
export function channelStateOf(record: ChannelRecord): ChannelState {
  return {
    channelId: record.id.toString(),
    balance: formatUnits(record.deposit),
    totalClaimed: formatUnits(record.claimed),
    chargedCumulativeAmount: formatUnits(record.charged),
    refundNonce: String(record.refundNonce),
    expiryLedger: record.expiryLedger,
  };
}

/** A refusal of the checks every payment passes, in the scheme's codes (RATE_LIMITED stays a 429). */
function refusal(r: Rejection): BatchRefused {
  if (r.code === 'RATE_LIMITED')
    return {
      ok: false,
      code: 'RATE_LIMITED',
      message: r.message,
      ...(r.retryAfter ? { retryAfter: r.retryAfter } : {}),
    };
  return { ok: false, code: batchCodeOf(r.code) ?? batchCode('voucher_payload'), message: r.message };
}

function depositRefusal(r: DepositRefused): BatchRefused {
  const { ok, code, message, payer, retryAfter } = r;
  return {
    ok,
    code: code === 'RATE_LIMITED' ? code : batchCode(code),
    message,
    ...(payer ? { payer } : {}),
    ...(retryAfter ? { retryAfter } : {}),
  };
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

function reservedByOther(record: ChannelRecord, fingerprint: string, now: string): boolean {
  const r = record.reservation;
  return r !== null && r.until > now && r.fingerprint !== fingerprint;
}

function ownsReservation(record: ChannelRecord, fingerprint: string, now: string): boolean {
  const r = record.reservation;
  return r !== null && r.until > now && r.fingerprint === fingerprint;
}

/** What the voucher leaves to charge above what was charged. */
function ceilingRoom(record: ChannelRecord, ceiling: bigint): bigint {
  return ceiling > record.charged ? ceiling - record.charged : 0n;
}

/** The price the buyer signed for: its copy of the terms, else the charge itself. */
function priceOf(input: BatchInput): bigint {
  const echoed = input.payment.accepted?.['amount'];
  return typeof echoed === 'string' && /^[0-9]{1,39}$/.test(echoed) ? BigInt(echoed) : input.amount;
}

function reservationMs(requirements: BatchRequirements): number {
  return Math.min(RESERVATION_MAX_S, Math.max(RESERVATION_MIN_S, requirements.maxTimeoutSeconds)) * 1000;
}

function settleKey(key: string): string {
  return `settle:${key}`;
}

/** The mark of a charged payment whose meter served nothing (unserved()): by its fingerprint. */
function recoverKey(fingerprint: string): string {
  return `settle-recover:${fingerprint}`;
}

const UNSERVED_BARRIER_KEY = 'settle.unserved.last';

function envelope(receipt: Receipt, remaining: bigint, latencyMs: number): PaymentResponse {
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

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}
