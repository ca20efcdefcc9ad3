// The facilitator's metrics for GET /metrics, in the Prometheus text format (prom-client). Each
// facilitator has a registry of its own: tests run many in one process, and the global default
// registry would mix their counts. Counters and histograms are fed by the domain's hooks
// (composition/metrics.ts) with O(1) in-memory work on the payment's path; gauges are read only when
// scraped, which costs that path nothing.
//
//   const metrics = new Metrics();
//   metrics.paymentAccepted(0.0004, 'channel');
//   metrics.read({ streamSessionsOpen: () => store.countOpenStreams(), … });
//   const text = await metrics.render();
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BATCH_CODE_NAMES, REASON_STATUS, STREAM_END_REASONS, batchCode } from '@svc/core';
import type { BatchCode, ReasonCode, StreamEndReason } from '@svc/core';
import { processMetrics } from './process-metrics.js';

/** From half a millisecond (a voucher on SQLite) to seconds (a store waiting for a lock). */
const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/**
 * The codes a payment is refused with, exported at 0 from the start: a series that appears only
 * with its first refusal hides that first one from rate(). Other reason codes appear when they occur.
 */
const REFUSAL_CODES: readonly ReasonCode[] = [
  ...(Object.keys(REASON_STATUS) as ReasonCode[]).filter(
    (code) => REASON_STATUS[code] === 402 && code !== 'PAYMENT_REQUIRED',
  ),
  'PAYMENT_MALFORMED',
  'RATE_LIMITED',
  'CONFLICT',
  'LEDGER_UNAVAILABLE',
  'FACILITATOR_UNAVAILABLE',
];
/** The schemes a payment is accepted (or refused) under: the `scheme` label. */
export const PAYMENT_SCHEMES = ['channel', 'batch-settlement'] as const;
export type PaymentScheme = (typeof PAYMENT_SCHEMES)[number];
export const CLAIM_OUTCOMES = ['claimed', 'rejected', 'nothing', 'unavailable', 'failed'] as const;
export type ClaimOutcomeLabel = (typeof CLAIM_OUTCOMES)[number];

/** What the gauges read when scraped. */
export interface GaugeReaders {
  /** Sessions open in the store: on a shared database, every instance's. */
  streamSessionsOpen(): Promise<number>;
  /** GET /events streams open on this instance. */
  eventStreamsOpen(): number;
  storeWritesPending(): number;
  storeWritable(): boolean;
  ledgerReachable(): boolean;
  latestLedger(): number;
  leader(): boolean;
}

export class Metrics {
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly #registry = new Registry();
  /** Started with the first facilitator that counts, so that the first scrape has the process's history. */
  readonly #process = processMetrics();
  readonly #accepted: Counter<'scheme'>;
  readonly #refused: Counter<'code' | 'scheme'>;
  /** The histogram's two series, bound once: binding a label on each observation costs more than the observation. */
  readonly #acceptedTime: Histogram.Internal<'outcome'>;
  readonly #refusedTime: Histogram.Internal<'outcome'>;
  readonly #claims: Counter<'outcome'>;
  readonly #claimedVouchers: Counter;
  readonly #sessionsOpened: Counter;
  readonly #sessionsEnded: Counter<'reason'>;
  readonly #writes: Histogram;
  readonly #writeErrors: Counter;

  constructor() {
    const registers = [this.#registry];
    this.#accepted = new Counter({
      name: 'svc_payments_accepted_total',
      help: 'Payments accepted, by scheme: channel vouchers (POST /verify, POST /settle, stream slices, bare vouchers) and batch-settlement charges (POST /settle, stream slices); a replayed answer is not counted again.',
      labelNames: ['scheme'],
      registers,
    });
    for (const scheme of PAYMENT_SCHEMES) this.#accepted.labels({ scheme }).inc(0);
    this.#refused = new Counter({
      name: 'svc_payments_refused_total',
      help: 'Payments refused, by reason code and, where it is known, scheme (LEDGER_UNAVAILABLE and FACILITATOR_UNAVAILABLE: nothing could be accepted; no scheme: refused before one was read).',
      labelNames: ['code', 'scheme'],
      registers,
    });
    for (const code of REFUSAL_CODES) this.#refused.labels({ code, scheme: 'channel' }).inc(0);
    for (const name of BATCH_CODE_NAMES)
      this.#refused.labels({ code: batchCode(name), scheme: 'batch-settlement' }).inc(0);
    const verification = new Histogram({
      name: 'svc_verification_duration_seconds',
      help: 'Time taken to answer a payment, by outcome (accepted, refused): a channel voucher (the verifier), a batch-settlement charge or refusal (a reservation by /verify is not timed).',
      labelNames: ['outcome'],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    for (const outcome of ['accepted', 'refused']) verification.zero({ outcome });
    this.#acceptedTime = verification.labels('accepted');
    this.#refusedTime = verification.labels('refused');
    this.#claims = new Counter({
      name: 'svc_claims_total',
      help: 'Claims on the ledger by outcome: claimed, rejected (by the ledger), nothing (to claim), unavailable (ledger unreachable), failed.',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of CLAIM_OUTCOMES) this.#claims.labels(outcome).inc(0);
    this.#claimedVouchers = new Counter({
      name: 'svc_claimed_vouchers_total',
      help: 'Vouchers covered by successful claims.',
      registers,
    });
    this.#sessionsOpened = new Counter({
      name: 'svc_stream_sessions_opened_total',
      help: 'Stream sessions opened by this instance.',
      registers,
    });
    this.#sessionsEnded = new Counter({
      name: 'svc_stream_sessions_ended_total',
      help: 'Stream sessions ended by this instance, by reason.',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of STREAM_END_REASONS) this.#sessionsEnded.labels(reason).inc(0);
    this.#writes = new Histogram({
      name: 'svc_store_write_duration_seconds',
      help: 'Store writes, from the call to durable (waiting for the group commit included).',
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.#writeErrors = new Counter({
      name: 'svc_store_write_errors_total',
      help: 'Store writes that failed (nothing of them acknowledged).',
      registers,
    });
  }

  paymentAccepted(seconds: number, scheme: PaymentScheme): void {
    this.#accepted.labels({ scheme }).inc();
    this.#acceptedTime.observe(seconds);
  }

  /**
   * `seconds`: null for a payment refused before it reached the verifier or the batch machinery;
   * `scheme`: null where the payment's scheme is not known (not one of this facilitator's).
   */
  paymentRefused(code: ReasonCode | BatchCode, seconds: number | null, scheme: PaymentScheme | null): void {
    this.#refused.labels(scheme === null ? { code } : { code, scheme }).inc();
    if (seconds !== null) this.#refusedTime.observe(seconds);
  }

  claim(outcome: ClaimOutcomeLabel, vouchersCovered = 0): void {
    this.#claims.labels(outcome).inc();
    if (vouchersCovered > 0) this.#claimedVouchers.inc(vouchersCovered);
  }

  streamOpened(): void {
    this.#sessionsOpened.inc();
  }

  streamEnded(reason: StreamEndReason): void {
    this.#sessionsEnded.labels(reason).inc();
  }

  storeWrite(seconds: number, failed: boolean): void {
    this.#writes.observe(seconds);
    if (failed) this.#writeErrors.inc();
  }

  /** Registers the gauges, read from `readers` at each scrape. */
  read(readers: GaugeReaders): void {
    const registers = [this.#registry];
    const flag = (value: boolean) => (value ? 1 : 0);
    new Gauge({
      name: 'svc_stream_sessions_open',
      help: 'Stream sessions open (in the store: on a shared database, every instance’s); NaN when the store does not answer.',
      registers,
      async collect() {
        // The scrape must answer when the store does not: that is when it matters most.
        this.set(await readers.streamSessionsOpen().catch(() => NaN));
      },
    });
    const gauges: [name: string, help: string, read: () => number][] = [
      ['svc_event_streams_open', 'GET /events streams open on this instance.', () => readers.eventStreamsOpen()],
      [
        'svc_store_writes_pending',
        'Store writes called and not yet settled (waiting for their group commit, or in it).',
        () => readers.storeWritesPending(),
      ],
      [
        'svc_store_writable',
        '1 while this instance can write to its store (as GET /health storeWritable), else 0.',
        () => flag(readers.storeWritable()),
      ],
      [
        'svc_ledger_reachable',
        '1 while the ledger answers this instance’s polls, else 0.',
        () => flag(readers.ledgerReachable()),
      ],
      ['svc_ledger_latest', 'The latest ledger sequence read from the ledger.', () => readers.latestLedger()],
      [
        'svc_leader',
        '1 on the instance that runs the claim scheduler and the ledger watcher, else 0.',
        () => flag(readers.leader()),
      ],
    ];
    for (const [name, help, value] of gauges)
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value());
        },
      });
  }

  /** The text of a scrape: this facilitator's metrics, then the process's. prom-client spells a
   *  value that is not a number `Nan` (the event loop's mean delay before its first sample); the
   *  text format spells it `NaN`, and a strict scraper refuses anything else. */
  async render(): Promise<string> {
    const text = await Registry.merge([this.#registry, this.#process]).metrics();
    return text.replace(/ Nan$/gm, ' NaN');
  }
}
