// Per-IP limits on costly requests (spec Limits: "Per IP, costly — 30 per minute": manual claims,
// attestations, reports and the demo controls), through rate-limiter-flexible: a fixed 60-second
// window per client address. IP_COSTLY_LIMIT_PER_MINUTE=0 turns it off.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export interface IpLimits {
  /** Counts a costly request from `ip`; resolves the seconds to wait when over the limit, else null. */
  costly(ip: string): Promise<number | null>;
}

export function memoryIpLimits(costlyPerMinute: number): IpLimits {
  if (costlyPerMinute === 0) return { costly: () => Promise.resolve(null) };
  const limiter = new RateLimiterMemory({ points: costlyPerMinute, duration: 60, keyPrefix: 'costly' });
  return {
    async costly(ip) {
      try {
        await limiter.consume(ip);
        return null;
      } catch (res) {
        if (res instanceof RateLimiterRes) return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
        throw res;
      }
    },
  };
}
