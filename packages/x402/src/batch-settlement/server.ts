// x402 `batch-settlement` on svc's Stellar channels, for @x402/core resource servers (e.g.
// @x402/express's paymentMiddleware), charging through an svc facilitator:
//
//   const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: svcFacilitator }))
//     .register('stellar:local', new BatchSettlementStellarScheme());
//   app.use(paymentMiddleware({ 'GET /weather': { accepts: { scheme: 'batch-settlement', network: 'stellar:local', payTo, price: '$0.0005' } } }, server));
//
// The facilitator keeps each channel's state (what was charged, the highest voucher), so the seller
// keeps none. Flow "authorization": /verify checks the voucher (a ceiling: charged so far + the
// price) and reserves the channel for this request; /settle after the handler charges what the
// request cost — the price, or less with `setSettlementOverrides(res, { amount })`.
//
// The hooks: a verify refused with the channel's state (the buyer's books are behind, or ahead)
// is answered with a 402 that carries that state on the batch-settlement option, for the buyer to
// catch up (the corrective 402); a charge above the payment's price is refused before /settle; a
// handler that failed, or a settlement that did, releases the channel's reservation at once.
//
// Releasing is a /settle of amount "0" for the same payment. The scheme cannot see the resource
// server's facilitator client, so it uses the one given as `options.facilitator` (pass the same
// client, e.g. for its auth headers), else a stock HTTPFacilitatorClient at the facilitator's own
// URL from its /supported kind (`extra.facilitator`).
import {
  ASSET_DECIMALS,
  BATCH_SCHEME,
  BatchKindSchema,
  BatchRequirementsSchema,
  batchCode,
  parseUnits,
} from '@svc/core';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  AssetAmount,
  Network,
  PaymentPayload,
  PaymentRequirements,
  Price,
  SchemeNetworkServer,
  SchemePaymentRequiredContext,
  SchemeServerHooks,
  SettleContext,
  SupportedKind,
} from '@x402/core/types';
import { assetAmountOf, facilitatorAsset, minDepositOf } from '../seller-terms.js';
import { Corrections } from './corrections.js';

const UNITS_RE = /^[0-9]{1,39}$/;

export interface BatchSettlementStellarSchemeOptions {
  /** extra.minDeposit as a multiple of the price (default 1000). `extra.minDeposit` on a route wins. */
  minDepositUnits?: bigint;
  /** The asset's ticker accepted in prices such as "0.0005 USDC" (default "USDC"). */
  symbol?: string;
  /** The facilitator client that releases a reservation; default: one at the kind's `extra.facilitator`. */
  facilitator?: Pick<FacilitatorClient, 'settle'>;
  /** Where a reservation that could not be released is reported (default console.warn). */
  log?: (line: string) => void;
}

export class BatchSettlementStellarScheme implements SchemeNetworkServer {
  readonly scheme = BATCH_SCHEME;
  readonly defaultAssetTransferMethod = 'default';
  readonly paymentFlows = { default: { supported: ['authorization'], default: 'authorization' } } as const;
  readonly schemeHooks: SchemeServerHooks;
  private readonly corrections = new Corrections();
  private readonly facilitators = new Map<string, Pick<FacilitatorClient, 'settle'>>();
  private readonly log: (line: string) => void;

  constructor(private readonly options: BatchSettlementStellarSchemeOptions = {}) {
    this.log = options.log ?? ((line) => console.warn(line));
    this.schemeHooks = {
      onAfterVerify: (ctx) => {
        if (!ctx.result.isValid) this.corrections.remember(ctx.paymentPayload, ctx.result.extra);
        return Promise.resolve();
      },
      onBeforeSettle: (ctx) => this.checkCharge(ctx),
      onSettleFailure: async (ctx) => {
        await this.release(ctx, 'its settlement failed');
      },
      onVerifiedPaymentCanceled: async (ctx) => {
        await this.release(ctx, `the handler did not succeed (${ctx.reason})`);
      },
    };
  }

  /** Base units: a bigint or a base-unit string; "$0.0005" or "0.0005 USDC" in asset units. */
  parsePrice(price: Price, _network: Network): Promise<AssetAmount> {
    return new Promise((resolve) => resolve(assetAmountOf(price, this.options.symbol ?? 'USDC')));
  }

  getAssetDecimals(_asset: string, _network: Network): number {
    return ASSET_DECIMALS;
  }

  /**
   * The asset and `extra` from the facilitator's /supported batch-settlement kind: the receiver
   * authorizer the buyer's channel must be bound to, the channel contract, the facilitator, the
   * minimum deposit, and svc's unit ("request") and unit price. Nothing per request, so that the
   * buyer's echo of these terms matches them.
   */
  enhancePaymentRequirements(
    requirements: PaymentRequirements,
    supportedKind: SupportedKind,
    _facilitatorExtensions: string[],
  ): Promise<PaymentRequirements> {
    return new Promise((resolve) => resolve(this.enhance(requirements, supportedKind)));
  }

  validateFacilitatorSupport(_network: Network, supportedKind: SupportedKind): string | void {
    const kind = BatchKindSchema.safeParse(supportedKind);
    if (!kind.success)
      return `the facilitator's kind is not a svc batch-settlement kind (${kind.error.issues[0]?.path.join('.') ?? 'extra'})`;
  }

  /** The corrective 402: the channel's state, from the refused verify, on this payment's option. */
  enrichPaymentRequiredResponse = (ctx: SchemePaymentRequiredContext): Promise<void> => {
    this.corrections.apply(ctx);
    return Promise.resolve();
  };

  private enhance(requirements: PaymentRequirements, supportedKind: SupportedKind): PaymentRequirements {
    const kind = BatchKindSchema.safeParse(supportedKind);
    if (!kind.success)
      throw new Error(
        `the facilitator's /supported kind for ${supportedKind.network} is not a svc batch-settlement kind`,
      );
    const k = kind.data.extra;
    const asset = facilitatorAsset(requirements.asset, k);
    const { minDeposit: routeMinDeposit, ...routeExtra } = requirements.extra;
    const minDeposit = minDepositOf(routeMinDeposit, parseUnits(requirements.amount), this.options.minDepositUnits);
    const out = {
      ...requirements,
      asset,
      extra: {
        ...routeExtra,
        receiverAuthorizer: k.receiverAuthorizer,
        channelContract: k.channelContract,
        facilitator: k.facilitator,
        minDeposit,
        areFeesSponsored: k.areFeesSponsored,
        unit: 'request',
        unitPrice: requirements.amount,
      },
    };
    const check = BatchRequirementsSchema.safeParse(out);
    if (!check.success) {
      const issue = check.error.issues[0];
      throw new Error(`invalid batch-settlement terms: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
    }
    return out;
  }

  /**
   * A settlement override may charge less than the price the buyer signed for, never more (core
   * passes any override through): such a charge is refused here, and the channel released.
   */
  private async checkCharge(ctx: SettleContext): Promise<void | { abort: true; reason: string; message: string }> {
    const charge = ctx.requirements.amount;
    const price = ctx.paymentPayload.accepted.amount;
    if (UNITS_RE.test(charge) && UNITS_RE.test(price) && BigInt(charge) <= BigInt(price)) return;
    await this.release(ctx, 'its charge was refused');
    return {
      abort: true,
      reason: batchCode('charge_exceeds_signed_cumulative'),
      message: `A charge of ${charge.slice(0, 40)} is not a base-unit amount within this payment's price of ${price.slice(0, 40)}.`,
    };
  }

  /** A /settle of nothing for this payment: the facilitator lifts its reservation of the channel. Never throws. */
  private async release(ctx: SettleContext, why: string): Promise<void> {
    const requirements = { ...(ctx.requirements as PaymentRequirements), amount: '0' };
    try {
      const facilitator = this.facilitatorFor(requirements);
      const result = await facilitator.settle(ctx.paymentPayload as PaymentPayload, requirements);
      if (!result.success)
        this.log(
          `batch-settlement: the facilitator did not release the channel after ${why}: ${result.errorReason ?? ''} ${result.errorMessage ?? ''}`,
        );
    } catch (err) {
      this.log(`batch-settlement: could not release the channel after ${why}: ${(err as Error).message}`);
    }
  }

  private facilitatorFor(requirements: PaymentRequirements): Pick<FacilitatorClient, 'settle'> {
    if (this.options.facilitator) return this.options.facilitator;
    const url = requirements.extra['facilitator'];
    if (typeof url !== 'string') throw new Error('the terms name no facilitator (extra.facilitator)');
    let client = this.facilitators.get(url);
    if (!client) this.facilitators.set(url, (client = new HTTPFacilitatorClient({ url })));
    return client;
  }
}
