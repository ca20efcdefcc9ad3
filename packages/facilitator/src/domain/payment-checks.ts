// The checks every payment passes, whatever its scheme (`channel` or `batch-settlement`), in the
// order of the verification (first failure wins): network → channel found → open → payee → asset
// → frozen payer → expiring → signature → the channel's voucher rate. What a payment's amount must
// be is each scheme's own (verifier.ts, batch-payments.ts).
import { fromHex } from '@svc/core';
import { LedgerUnavailable } from '@svc/ledger';
import type { Payment, PaymentRejection, VoucherContext } from '@svc/core';
import type { CachedChannel, ChannelBook } from './channel-book.js';
import type { LatestLedger } from './latest-ledger.js';

export type Rejection = { ok: false; code: PaymentRejection; message: string; retryAfter?: number };
export type Step = { ok: true } | Rejection;

export const pass: Step = { ok: true };
export const fail = (code: PaymentRejection, message: string, retryAfter?: number): Rejection =>
  retryAfter === undefined ? { ok: false, code, message } : { ok: false, code, message, retryAfter };

/** Limits vouchers per channel; resolves the seconds to wait when over the limit, else null. */
export interface VoucherRateLimit {
  take(channelId: bigint): Promise<number | null>;
}

/** What a payment is checked against: the seller it pays and the asset it pays in. */
export interface PaidTerms {
  network: string;
  payTo: string;
  asset: string;
}

export interface PaymentChecksDeps {
  network: string;
  asset: string;
  vouchers: VoucherContext;
  book: ChannelBook;
  latestLedger: LatestLedger;
  rate: VoucherRateLimit;
  safetyLedgers: number;
  isFrozen(account: string): Promise<boolean>;
}

export class PaymentChecks {
  constructor(private readonly deps: PaymentChecksDeps) {}

  get network(): string {
    return this.deps.network;
  }

  /** The payment and the terms are both for this facilitator's network. */
  checkNetwork(payment: Payment, terms: PaidTerms): Step {
    if (payment.network !== this.deps.network || terms.network !== this.deps.network) {
      return fail(
        'WRONG_NETWORK',
        `This facilitator settles on ${this.deps.network}, not ${payment.network === this.deps.network ? terms.network : payment.network}.`,
      );
    }
    return pass;
  }

  /**
   * The channel the payment names, or null when neither the store nor the ledger knows it. Throws
   * LedgerUnavailable (503, try again) before the ledger's time was ever read: no expiry can be judged.
   */
  async channelOf(payment: Payment): Promise<CachedChannel | null> {
    if (!this.deps.latestLedger.known)
      throw new LedgerUnavailable('The facilitator has not read the ledger’s time yet.');
    return this.deps.book.get(payment.channelId);
  }

  notFound(payment: Payment): Rejection {
    return fail('CHANNEL_NOT_FOUND', `Channel ${payment.channelId} does not exist on ${this.deps.network}.`);
  }

  /** Open, paying this seller in this asset, from a payer not frozen, not about to expire. */
  async checkTerms(channel: CachedChannel, payment: Payment, terms: PaidTerms): Promise<Step> {
    const { record } = channel;
    if (record.status !== 'open') return fail('CHANNEL_CLOSED', `Channel ${record.id} is closed.`);
    if (record.payee !== terms.payTo) {
      return fail('WRONG_PAYEE', `Channel ${record.id} pays ${record.payee}, but this seller is ${terms.payTo}.`);
    }
    const acceptedAsset = payment.accepted?.['asset'];
    if (
      record.asset !== terms.asset ||
      record.asset !== this.deps.asset ||
      (acceptedAsset !== undefined && acceptedAsset !== record.asset)
    ) {
      return fail('WRONG_ASSET', `Channel ${record.id} holds ${record.asset}; the payment asks for ${terms.asset}.`);
    }
    if (await this.deps.isFrozen(record.payer)) return fail('ACCOUNT_FROZEN', `The payer ${record.payer} is frozen.`);
    // On the estimate of the ledger's time, which keeps running while the ledger is silent.
    const left = record.expiryLedger - this.deps.latestLedger.currentLedger;
    if (left < this.deps.safetyLedgers) {
      return fail(
        'CHANNEL_EXPIRING',
        `Channel ${record.id} expires in ${Math.max(0, left)} ledgers or fewer; vouchers are refused within ${this.deps.safetyLedgers} ledgers of expiry.`,
      );
    }
    return pass;
  }

  /** The voucher (channel, amount) is signed by the channel's voucher key, strictly. */
  async checkSignature(channel: CachedChannel, payment: Payment): Promise<Step> {
    const sig = fromHex(payment.signature, 64);
    const valid =
      channel.keyIsStrict &&
      (await this.deps.vouchers.verifyAsync(channel.voucherKey, payment.channelId, payment.cumulative, sig));
    if (!valid)
      return fail('VOUCHER_BAD_SIGNATURE', "The voucher signature does not verify under the channel's voucher key.");
    return pass;
  }

  /** Counted only for a voucher that verifies and could be taken: forged or replayed ones cannot use up a channel's limit. */
  async checkRate(channelId: bigint): Promise<Step> {
    const wait = await this.deps.rate.take(channelId);
    return wait === null
      ? pass
      : fail('RATE_LIMITED', `Too many vouchers on channel ${channelId}; retry in ${wait} s.`, wait);
  }
}
