// @svc/x402: the svc `channel` scheme for the official x402 packages (@x402/core, @x402/fetch,
// @x402/express): a scheme client for buyers, a scheme server for sellers, and a facilitator
// client that keeps svc receipts. x402 `batch-settlement` has its own subpaths:
// @svc/x402/batch-settlement/client and @svc/x402/batch-settlement/server.
export { ChannelSchemeClient } from './client.js';
export type { ChannelSchemeClientOptions } from './client.js';
export { ChannelSchemeServer, DEFAULT_MIN_DEPOSIT_UNITS } from './server.js';
export type { ChannelRequirements, ChannelSchemeServerOptions } from './server.js';
export { SvcFacilitatorClient } from './facilitator-client.js';
export { assetsFromSupported, findAsset } from './asset.js';
export type { ChannelAsset } from './asset.js';
export { priceToUnits, PriceError } from './price.js';
export type { PricedAsset } from './price.js';
export { channelTerms, TermsError } from './requirements.js';
export { channelMismatch, singleChannel } from './signer.js';
export type { BatchChannelSource, BatchVoucherSigner, ChannelSource, VoucherSigner } from './signer.js';
export { decorateForSvcBuyers } from './svc-terms.js';
