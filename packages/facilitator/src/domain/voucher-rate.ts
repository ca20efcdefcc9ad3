// The per-channel voucher limit (spec Limits: 1200 per minute, counted only after the signature
// verifies — the verifier calls it then), on the configured limiter backend.
import type { Limiter } from '../limits/limiter.js';
import type { VoucherRateLimit } from './verifier.js';

export function voucherRate(limiter: Limiter): VoucherRateLimit {
  return { take: (channelId) => limiter.take(channelId.toString()) };
}
