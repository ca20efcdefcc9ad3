export { svc } from './client.js';
export type { SvcClient, SvcOptions } from './client.js';
export { Gate, EXPOSED_HEADERS } from './gate.js';
export type { GateOutcome, GateRequest } from './gate.js';
export { nodeMiddleware, toGateRequest } from './node.js';
export type { NodeMiddleware, PaidRequest } from './node.js';
export { FacilitatorClient, FacilitatorUnavailable } from './facilitator-client.js';
export { bazaarFor, paymentRequired, requirementsFor, sliceOf, DEFAULT_SLICE_SECONDS, DEFAULT_SLICE_TOKENS, MAX_TIMEOUT_SECONDS } from './terms.js';
export type { MeterOptions } from './terms.js';
