export { svc } from './client.js';
export type { SvcClient, SvcOptions } from './client.js';
export type { JsonReply, PostJson } from './transport.js';
export { Gate } from './gate.js';
export type { GateSource } from './gate.js';
export { EXPOSED_HEADERS } from './gate-outcome.js';
export type { GateOutcome, GateRequest, GateSettled } from './gate-outcome.js';
export type { Hold } from './gate-outcome.js';
export { MAX_HELD_BYTES } from './payment.js';
export type { BatchSettlementPayment, ChannelPayment, Charging, Payment, PrepaidSlicePayment } from './payment.js';
export { nodeMeter } from './node.js';
export type { NodeMiddleware, PaidRequest } from './node.js';
export { FacilitatorClient, FacilitatorUnavailable } from './facilitator-client.js';
export {
  bazaarFor,
  defineMeter,
  mimeTypeOf,
  paymentRequired,
  requirementsFor,
  sliceOf,
  termsFor,
  DEFAULT_SLICE_SECONDS,
  DEFAULT_SLICE_TOKENS,
  MAX_TIMEOUT_SECONDS,
} from './terms.js';
export type { MeterOptions, Terms } from './terms.js';
export { FacilitatorError, StreamCalls } from './facilitator-client.js';
export { openPaidStream, DEFAULT_VOUCHER_TIMEOUT_MS } from './stream.js';
export type { PaidStream, StreamOptions, StreamSummary } from './stream.js';
export { requestSellerToken } from './seller-token.js';
export type { SellerTokenOptions } from './seller-token.js';
export { sellerCommand } from './seller-cli.js';
