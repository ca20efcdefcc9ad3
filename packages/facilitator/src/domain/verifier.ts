// `channel` voucher verification, in the order of docs/protocol.md#errors (first failure wins):
//   malformed → network → channel found → open → payee → asset → frozen payer → expiring →
//   signature → not increasing → per-channel voucher rate → underpaid → exhausted → advance.
// This module runs them in that order and retries a lost race; each job is its own module:
//   the checks up to the signature and the rate are every payment's   payment-checks.ts
//   not increasing, underpaid, exhausted                             voucher-amount-checks.ts
//   the advance: the receipt and its one atomic write                voucher-advance.ts
//   what a refused write means, by the op the store refused          advance-refusals.ts
//   the first answer again (Idempotency-Key, payment id, unserved)  first-answers.ts
// The `batch-settlement` scheme is batch-payments.ts.
// The rate counts only a voucher that could advance the channel (signature valid, cumulative above
// the last accepted): replaying an old voucher, public in its receipt, cannot use up a buyer's
// allowance (docs/protocol.md#errors puts the rate before "not increasing"; this order is stricter).
import type { Keypair, PaymentRejection } from '@svc/core';
import type { Store } from '../store/port.js';
import type { ChannelBook } from './channel-book.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import { FirstAnswers } from './first-answers.js';
import type { LatencyWindow } from './latency.js';
import { fail } from './payment-checks.js';
import type { PaymentChecks } from './payment-checks.js';
import { PaymentIds } from './payment-ids.js';
import { VoucherAdvance } from './voucher-advance.js';
import { checkAmounts, checkIncreasing } from './voucher-amount-checks.js';
import type { VerifyInput, VerifyOutcome } from './verify-types.js';

export type { VerifyInput, VerifyOutcome } from './verify-types.js';
export { fingerprint } from './verify-keys.js';

const MAX_CAS_ATTEMPTS = 4;

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
  readonly #verified: VerifiedHook[] = [];
  private readonly answers: FirstAnswers;
  private readonly advancer: VoucherAdvance;

  constructor(private readonly deps: VerifierDeps) {
    const ids = new PaymentIds(deps.store, deps.clock);
    this.answers = new FirstAnswers({ store: deps.store, clock: deps.clock, ids });
    this.advancer = new VoucherAdvance({
      network: deps.network,
      signer: deps.signer,
      signReceiptsInline: deps.signReceiptsInline,
      book: deps.book,
      events: deps.events,
      clock: deps.clock,
      latency: deps.latency,
      ids,
    });
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

  /** POST /verify/unserved: see FirstAnswers.unserved. */
  unserved(key: string): Promise<boolean> {
    return this.answers.unserved(key);
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
   * `voucher.rejected` in the audit log, next to the `voucher.accepted` of the advance. Written off
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
    const named = await this.answers.named(input);
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
      const amounts = checkAmounts(channel, payment.cumulative, requirements);
      if (!amounts.ok) {
        // A repeat of an accepted request (same Idempotency-Key, same voucher) gets its first
        // answer; so does the same payment for the same request after its meter gave up on it.
        const first =
          amounts.code === 'VOUCHER_NOT_INCREASING'
            ? ((await this.answers.replay(input)) ??
              (await this.answers.recover(input, payer)) ??
              // A copy under the same payment id that was accepted while this one was checked.
              (await this.answers.named(input)))
            : null;
        return first ?? { ...amounts, payer };
      }
      const advanced = await this.advancer.advance(channel, input, started);
      if (advanced.kind === 'accepted') return { ok: true, response: advanced.response, payer };
      if (advanced.kind === 'named')
        return (
          (await this.answers.named(input)) ?? {
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
}
