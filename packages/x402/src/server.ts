// The `channel` scheme for @x402/core resource servers (e.g. @x402/express's paymentMiddleware):
//
//   const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: svcFacilitator }))
//     .register('stellar:local', new ChannelSchemeServer());
//   app.use(paymentMiddleware({ 'GET /weather': { accepts: { scheme: 'channel', network: 'stellar:local', payTo, price: '$0.0005' } } }, server));
//
// The price is per request (the official middlewares hold the body back until settlement, so
// metered streams are not for them). Flow "authorization": /verify before the handler (svc
// accepts the voucher there), /settle after it (svc confirms the accepted voucher).
import { ASSET_DECIMALS, ChannelKindSchema, PaymentRequirementsSchema, SCHEME, parseUnits } from '@svc/core';
import type { Unit } from '@svc/core';
import type {
  AssetAmount,
  Network,
  PaymentRequirements as X402Requirements,
  Price,
  SchemeNetworkServer,
  SchemePaymentRequiredContext,
  SupportedKind,
} from '@x402/core/types';
import { assetAmountOf, facilitatorAsset, minDepositOf } from './seller-terms.js';
import { decorateForSvcBuyers } from './svc-terms.js';

export { DEFAULT_MIN_DEPOSIT_UNITS } from './seller-terms.js';

export interface ChannelSchemeServerOptions {
  /** extra.minDeposit as a multiple of the price (default 1000). `extra.minDeposit` on a route wins. */
  minDepositUnits?: bigint;
  /** The asset's ticker accepted in prices such as "0.0005 USDC" (default "USDC"). */
  symbol?: string;
  /**
   * Also add what svc's own buyers (@svc/sdk payFetch) read in a 402: `source`, `message` and a
   * `bazaar` declaration when the route has none (default true; x402 clients ignore them).
   */
  svcTerms?: boolean;
}

export type ChannelRequirements = X402Requirements & { unit: Unit };

export class ChannelSchemeServer implements SchemeNetworkServer {
  readonly scheme = SCHEME;
  readonly defaultAssetTransferMethod = 'default';
  readonly paymentFlows = { default: { supported: ['authorization'], default: 'authorization' } } as const;
  readonly enrichPaymentRequiredResponse?: (ctx: SchemePaymentRequiredContext) => Promise<void>;

  constructor(private readonly options: ChannelSchemeServerOptions = {}) {
    if (options.svcTerms !== false) {
      this.enrichPaymentRequiredResponse = (ctx) => {
        decorateForSvcBuyers(ctx);
        return Promise.resolve();
      };
    }
  }

  /** Base units: a bigint or a base-unit string; "$0.0005" or "0.0005 USDC" in asset units. */
  parsePrice(price: Price, _network: Network): Promise<AssetAmount> {
    return new Promise((resolve) => resolve(assetAmountOf(price, this.options.symbol ?? 'USDC')));
  }

  getAssetDecimals(_asset: string, _network: Network): number {
    return ASSET_DECIMALS;
  }

  /** Fills in the asset and `extra` from the facilitator's /supported kind, and `unit: "request"`. */
  enhancePaymentRequirements(
    requirements: X402Requirements,
    supportedKind: SupportedKind,
    _facilitatorExtensions: string[],
  ): Promise<X402Requirements> {
    return new Promise((resolve) => resolve(this.enhance(requirements, supportedKind)));
  }

  validateFacilitatorSupport(_network: Network, supportedKind: SupportedKind): string | void {
    const kind = ChannelKindSchema.safeParse(supportedKind);
    if (!kind.success)
      return `the facilitator's kind is not a svc channel kind (${kind.error.issues[0]?.path.join('.') ?? 'extra'})`;
  }

  private enhance(requirements: X402Requirements, supportedKind: SupportedKind): ChannelRequirements {
    const kind = ChannelKindSchema.safeParse(supportedKind);
    if (!kind.success)
      throw new Error(`the facilitator's /supported kind for ${supportedKind.network} is not a svc channel kind`);
    const k = kind.data.extra;
    const asset = facilitatorAsset(requirements.asset, k);
    const { minDeposit: routeMinDeposit, ...routeExtra } = requirements.extra;
    const minDeposit = minDepositOf(routeMinDeposit, parseUnits(requirements.amount), this.options.minDepositUnits);
    const out: ChannelRequirements = {
      ...requirements,
      asset,
      unit: 'request',
      extra: {
        ...routeExtra,
        channelContract: k.channelContract,
        minDeposit,
        facilitator: k.facilitator,
        areFeesSponsored: k.areFeesSponsored,
      },
    };
    const check = PaymentRequirementsSchema.safeParse(out);
    if (!check.success) {
      const issue = check.error.issues[0];
      throw new Error(`invalid channel terms: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
    }
    return out;
  }
}
