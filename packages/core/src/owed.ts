// What one payment owes under a set of `channel` terms (docs/protocol.md#the-402-answer): the buyer signs exactly
// this much above its last voucher, and the facilitator refuses less (VOUCHER_UNDERPAID).
import type { PaymentRequirements } from './x402.js';

/**
 * What one payment must add to the channel's cumulative, in base units: the price for `request`;
 * one slice (`extra.sliceAmount`, price × slice) for `token` and `second`, or the price when the
 * terms name no slice.
 *
 *   owedPerPayment({ ...terms, unit: 'request', amount: '5000' }) === 5000n
 *   owedPerPayment({ ...terms, unit: 'token', amount: '2', extra: { ...terms.extra, sliceAmount: '200' } }) === 200n
 */
export function owedPerPayment(terms: PaymentRequirements): bigint {
  if (terms.unit === 'request') return BigInt(terms.amount);
  return BigInt(terms.extra.sliceAmount ?? terms.amount);
}
