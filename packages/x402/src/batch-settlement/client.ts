// x402 `batch-settlement` on svc's Stellar channels, for @x402/core buyers (`x402Client` +
// `wrapFetchWithPayment`), paying sellers on an svc facilitator (@svc/meter, or @x402/express with
// the scheme's server):
//
//   const scheme = await BatchSettlementStellarScheme.fromFacilitator(url, Wallet.open({ file: './wallet.json' }));
//   const pay = wrapFetchWithPayment(fetch, new x402Client().register('stellar:*', scheme));
//
// A voucher is a ceiling: what was charged on the channel so far plus this request's price, signed
// by the channel's voucher key. The channel is one bound to the terms' receiver authorizer (the
// facilitator), which lets a seller charge less than the price. The books (the charged total)
// move when a paid answer's charge adds up (onPaymentResponse), or when a corrective 402 proves the
// channel's state with a voucher of the channel's own key — backwards too, since a lower charge only
// lowers the next ceiling; then @x402/fetch retries once, from the first 402, with the books kept
// here. An answer that does not add up is not adopted, and this client signs no more on that channel:
// hooks never throw (a thrown hook would reject the buyer's fetch), they report through `log`.
import {
  BATCH_SCHEME,
  BatchPayloadSchema,
  BatchRefundError,
  BatchRequirementsSchema,
  batchCode,
  chargedAfter,
  chargedProved,
  channelTermsOf,
  decodeJsonHeader,
  generatePaymentId,
  globalFetch,
  readSupported,
  requestBatchRefund,
  PAYMENT_IDENTIFIER,
  safeParse,
  withPaymentId,
} from '@svc/core';
import type { BatchRequirements, BatchVoucher, PaidCeiling, RefundResult } from '@svc/core';
import type { PaymentResponseContext } from '@x402/core/client';
import type {
  Network,
  PaymentPayloadContext,
  PaymentPayloadResult,
  PaymentRequired,
  PaymentRequirements as X402Requirements,
  SchemeClientHooks,
  SchemeNetworkClient,
} from '@x402/core/types';
import { assetsFromSupported, findAsset } from '../asset.js';
import type { ChannelAsset } from '../asset.js';
import { Hold } from '../hold.js';
import type { Release } from '../hold.js';
import { TermsError } from '../requirements.js';
import { channelMismatch } from '../signer.js';
import type { BatchChannelSource, BatchVoucherSigner } from '../signer.js';

const DEFAULT_HOLD_MS = 30_000;
/** The refusals whose 402 carries the channel's state for the buyer to catch up. */
const CORRECTIVE = new Set<string>([batchCode('cumulative_amount_mismatch'), batchCode('cumulative_below_claimed')]);

export interface BatchSettlementStellarSchemeOptions {
  /** Assets the buyer accepts (for @x402/core's spend controls); see `fromFacilitator`. */
  assets?: readonly ChannelAsset[];
  fetch?: typeof fetch;
  /** How long a channel waits for the answer to its payment in flight before the next one signs. */
  holdTimeoutMs?: number;
  /** Where an account of a channel that was not believed is reported (default console.warn). */
  log?: (line: string) => void;
  /**
   * The id a payment is named with where the seller declares x402's payment-identifier (default: a
   * fresh `pay_…` per payment). A buyer that resends the same payment after losing its answer
   * sends it under the same id, and is answered as charged, not charged again.
   */
  paymentId?: () => string;
}

interface Pending extends PaidCeiling {
  signer: BatchVoucherSigner;
  release: Release;
  /** The payment carried the channel's deposit (a deposit payload). */
  deposit: boolean;
}

export class BatchSettlementStellarScheme implements SchemeNetworkClient {
  readonly scheme = BATCH_SCHEME;
  readonly schemeHooks: SchemeClientHooks;
  private readonly assets: readonly ChannelAsset[];
  private readonly log: (line: string) => void;
  private readonly holds = new WeakMap<BatchVoucherSigner, Hold>();
  private readonly pending = new Map<string, Pending>();
  /** Each channel's payment in flight (its key in `pending`): one whose answer never came is dropped at the next. */
  private readonly inFlight = new WeakMap<BatchVoucherSigner, string>();
  /** Channels this client signs no more on, and why. */
  private readonly stopped = new WeakMap<BatchVoucherSigner, string>();

  constructor(
    private readonly source: BatchChannelSource,
    private readonly options: BatchSettlementStellarSchemeOptions = {},
  ) {
    this.assets = options.assets ?? [];
    this.log = options.log ?? ((line) => console.warn(line));
    this.schemeHooks = { onPaymentResponse: (ctx) => this.onPaymentResponse(ctx) };
  }

  /** A client that accepts the asset of the facilitator at `facilitator` (read from its /supported). */
  static async fromFacilitator(
    facilitator: string,
    source: BatchChannelSource,
    options: BatchSettlementStellarSchemeOptions = {},
  ): Promise<BatchSettlementStellarScheme> {
    const supported = await readSupported(facilitator, { fetch: options.fetch ?? globalFetch });
    const assets = [...(options.assets ?? []), ...assetsFromSupported(supported)];
    return new BatchSettlementStellarScheme(source, { ...options, assets });
  }

  /** @x402/core's spend controls only pay in assets a scheme client recognises here. */
  readonly findDefaultAsset = (asset: string, network: Network): ChannelAsset | undefined =>
    findAsset(this.assets, asset, network);

  async createPaymentPayload(
    x402Version: number,
    requirements: X402Requirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    if (x402Version !== 2) throw new TermsError(`batch-settlement is paid with x402 version 2, not ${x402Version}`);
    const terms = batchTerms(requirements);
    const price = BigInt(terms.amount);
    if (price <= 0n) throw new TermsError('the seller asks a price of 0 per payment');
    const cap = context?.maxAmountPerPayment;
    if (cap !== undefined && /^[0-9]+$/.test(cap) && price > BigInt(cap))
      throw new TermsError(`the seller asks ${price} per payment, above the spend limit of ${cap}`);
    const channelTerms = channelTermsOf(terms);
    const authorizer = terms.extra.receiverAuthorizer;
    // A facilitator that sponsors the fees opens the channel from the first payment's deposit payload.
    const signer = await this.source.signerFor(channelTerms, 1n, {
      receiverAuthorizer: authorizer,
      byDeposit: terms.extra.areFeesSponsored,
    });
    const mismatch =
      channelMismatch(signer, channelTerms) ??
      (signer.receiverAuthorizer !== null && signer.receiverAuthorizer !== authorizer
        ? `channel ${signer.channelId} is bound to the receiver authorizer ${signer.receiverAuthorizer}, the seller's is ${authorizer}`
        : null);
    if (mismatch) throw new TermsError(mismatch);

    let hold = this.holds.get(signer);
    if (!hold) this.holds.set(signer, (hold = new Hold(this.options.holdTimeoutMs ?? DEFAULT_HOLD_MS)));
    const release = await hold.acquire();
    try {
      // Checked once the payment before has been answered, which may have stopped the channel.
      const stopped = this.stopped.get(signer);
      if (stopped) throw new TermsError(`channel ${signer.channelId} is not used any more by this client: ${stopped}`);
      const previous = signer.cumulative;
      const signed = signer.next(price);
      const voucher: BatchVoucher = {
        channelId: signed.channelId,
        maxClaimableAmount: signed.cumulative,
        signature: signed.signature,
      };
      const stale = this.inFlight.get(signer);
      if (stale !== undefined) this.pending.delete(stale);
      this.inFlight.set(signer, keyOf(voucher));
      const deposit = signer.pendingDeposit ?? null;
      this.pending.set(keyOf(voucher), {
        signer,
        release,
        previous,
        ceiling: previous + price,
        price,
        deposit: deposit !== null,
      });
      const named = this.named(context?.extensions);
      if (deposit === null) return { x402Version: 2, payload: { type: 'voucher', voucher }, ...named };
      // The channel's opening (or top-up) and its first voucher, in one payment.
      return {
        x402Version: 2,
        payload: {
          type: 'deposit',
          deposit: { amount: deposit.amount.toString(), transaction: deposit.transaction },
          voucher,
        },
        ...named,
      };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * A cooperative refund of the channel that pays `url`'s seller: `options.amount` back to the
   * buyer's account at once, or everything not charged when omitted. Reads the seller's terms from
   * a 402 of `url`, then asks the facilitator they name (the channel's receiver authorizer)
   * directly. The channel must be one the source already has (`channelFor`); nothing is opened.
   * Throws BatchRefundError (its `code` the facilitator's) when refused.
   */
  async refund(url: string, options: { amount?: bigint } = {}): Promise<RefundResult & { channelId: bigint }> {
    const doFetch = this.options.fetch ?? globalFetch;
    const res = await doFetch(url);
    const header = res.headers.get('payment-required');
    const decoded = res.status === 402 && header ? decodeJsonHeader(header, 64 * 1024) : null;
    const accepts = decoded?.ok ? (decoded.value as { accepts?: unknown }).accepts : undefined;
    const offered: unknown = Array.isArray(accepts)
      ? (accepts as unknown[]).find((a) => (a as { scheme?: unknown } | null)?.scheme === BATCH_SCHEME)
      : undefined;
    if (offered === undefined)
      throw new BatchRefundError(
        'terms',
        `${url} answered ${res.status} with no batch-settlement terms to refund under`,
      );
    const terms = batchTerms(offered as X402Requirements);
    const authorizer = terms.extra.receiverAuthorizer;
    if (!this.source.channelFor)
      throw new BatchRefundError('no_channel', 'this channel source cannot name an existing channel (channelFor)');
    const signer = await this.source.channelFor(channelTermsOf(terms), { receiverAuthorizer: authorizer });
    if (!signer)
      throw new BatchRefundError(
        'no_channel',
        `no open channel to ${terms.payTo} bound to the receiver authorizer ${authorizer} to refund`,
      );
    const sign = signer.signRefund?.bind(signer);
    if (!sign) throw new BatchRefundError('no_channel', `channel ${signer.channelId}'s signer cannot sign a refund`);
    const result = await requestBatchRefund({
      terms,
      channelId: signer.channelId,
      ...(options.amount === undefined ? {} : { amount: options.amount }),
      sign,
      fetch: doFetch,
    });
    signer.refundedTo?.(BigInt(result.channelState.balance));
    this.source.save?.();
    return { ...result, channelId: signer.channelId };
  }

  /** The payment's id under the seller's payment-identifier declaration; nothing where it declared none. */
  private named(declared: Record<string, unknown> | undefined): { extensions?: Record<string, unknown> } {
    if (!declared || declared[PAYMENT_IDENTIFIER] === undefined) return {};
    const named = withPaymentId(declared, (this.options.paymentId ?? generatePaymentId)());
    return named ? { extensions: { [PAYMENT_IDENTIFIER]: named[PAYMENT_IDENTIFIER] } } : {};
  }

  private onPaymentResponse(ctx: PaymentResponseContext): Promise<void | { recovered: true }> {
    return Promise.resolve(this.settle(ctx));
  }

  /** What the answer to a payment of this client's means for its channel's books. */
  private settle(ctx: PaymentResponseContext): void | { recovered: true } {
    const sent = safeParse(BatchPayloadSchema, ctx.paymentPayload.payload);
    if (!sent.success || sent.data.type === 'refund') return;
    const key = keyOf(sent.data.voucher);
    const pending = this.pending.get(key);
    if (!pending) return;
    this.pending.delete(key);
    try {
      if (pending.deposit) {
        // Paid: the deposit is on the ledger. Refused: the wallet reads the ledger before the next payment.
        if (ctx.settleResponse?.success) pending.signer.depositLanded?.();
        else pending.signer.depositRefused?.();
      }
      if (ctx.settleResponse) {
        if (ctx.settleResponse.success) this.adopt(pending, ctx.settleResponse.extra);
        return;
      }
      if (ctx.paymentRequired && this.correct(pending.signer, ctx.paymentRequired)) return { recovered: true };
    } catch (err) {
      // A signer that refuses what the checks let through (its deposit, say): the books stay.
      this.log(`batch-settlement: channel ${pending.signer.channelId}: ${(err as Error).message}`);
    } finally {
      pending.release();
    }
  }

  /** Takes the charged total of a paid answer that adds up; else signs no more on the channel. */
  private adopt(pending: Pending, extra: unknown): void {
    const verdict = chargedAfter(pending.signer, pending, extra);
    if (verdict.ok) {
      pending.signer.confirm(verdict.charged);
      return;
    }
    const why = `the seller's answer to the voucher for ${pending.ceiling} does not add up: ${verdict.reason}`;
    this.stopped.set(pending.signer, why);
    this.log(`batch-settlement: channel ${pending.signer.channelId}: ${why}; this client signs no more on it`);
  }

  /** True when a corrective 402 proved another charged total, now in the books (for @x402/fetch's one retry). */
  private correct(signer: BatchVoucherSigner, paymentRequired: PaymentRequired): boolean {
    if (!paymentRequired.error || !CORRECTIVE.has(paymentRequired.error)) return false;
    const option = paymentRequired.accepts.find(
      (a) => a.scheme === BATCH_SCHEME && a.network === signer.network && a.payTo === signer.payee,
    );
    const verdict = chargedProved(signer, option?.extra);
    if (!verdict.ok) {
      this.log(`batch-settlement: channel ${signer.channelId}: the 402's account is not believed: ${verdict.reason}`);
      return false;
    }
    // The same books again would be refused the same way: no retry for that.
    if (verdict.charged === signer.cumulative) return false;
    signer.rebase(verdict.charged);
    return true;
  }
}

export type { BatchChannelSource, BatchVoucherSigner } from '../signer.js';

function batchTerms(raw: X402Requirements): BatchRequirements {
  const parsed = safeParse(BatchRequirementsSchema, raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'requirements';
    throw new TermsError(`these are not svc batch-settlement terms: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

function keyOf(voucher: BatchVoucher): string {
  return `${voucher.channelId}:${voucher.maxClaimableAmount}:${voucher.signature.toLowerCase()}`;
}
