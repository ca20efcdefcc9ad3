// The per-channel voucher limit (spec Limits: 1200 per minute), through rate-limiter-flexible.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { VoucherRateLimit } from './verifier.js';

export class MemoryVoucherRate implements VoucherRateLimit {
  private readonly limiter: RateLimiterMemory;

  constructor(perMinute: number) {
    this.limiter = new RateLimiterMemory({ points: perMinute, duration: 60, keyPrefix: 'vouchers' });
  }

  async take(channelId: bigint): Promise<number | null> {
    try {
      await this.limiter.consume(channelId.toString());
      return null;
    } catch (res) {
      if (res instanceof RateLimiterRes) return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw res;
    }
  }
}
