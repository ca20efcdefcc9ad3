// Per-IP limits (spec Limits): in general 3000 requests a minute per client address (GET /events
// and GET /health exempt; 0 turns it off), and 30 a minute for the costly routes (claims,
// attestations, reports, the demo controls; counted on top). The client address is Fastify's
// request.ip, which honours TRUST_PROXY and nothing else: without a trusted proxy a forged
// X-Forwarded-For changes nothing. The facilitator's own in-process calls (the MCP tools and the
// demo seller's meter answer through its routes) carry a per-process token and are not counted twice.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SvcError } from '@svc/core';
import type { Limiter, Limiters } from '../../limits/limiter.js';

export const INTERNAL_HEADER = 'x-svc-internal';
const EXEMPT = new Set(['GET /events', 'GET /health', 'HEAD /health']);

export interface IpLimits {
  /**
   * Counts a costly request against its client address; resolves the seconds to wait when over the
   * limit, else null. The facilitator's own in-process calls (the demo seller's attestations) are
   * not counted: the buyer's request that caused them was.
   */
  costly(request: FastifyRequest): Promise<number | null>;
}

export interface IpLimitOptions {
  generalPerMinute: number;
  costlyPerMinute: number;
  /** The token of the facilitator's own in-process requests. */
  internalToken: string;
}

/** Installs the general limit as an onRequest hook; returns the costly limit for the routes that declare it. */
export async function installIpLimits(app: FastifyInstance, limiters: Limiters, o: IpLimitOptions): Promise<IpLimits> {
  const general =
    o.generalPerMinute > 0 ? await limiters.limiter({ name: 'ip', points: o.generalPerMinute, seconds: 60 }) : null;
  const costly =
    o.costlyPerMinute > 0
      ? await limiters.limiter({ name: 'ip-costly', points: o.costlyPerMinute, seconds: 60 })
      : null;
  const token = Buffer.from(o.internalToken);
  const internal = (request: FastifyRequest): boolean => {
    const given = request.headers[INTERNAL_HEADER];
    return typeof given === 'string' && given.length === token.length && timingSafeEqual(Buffer.from(given), token);
  };
  if (general) {
    app.addHook('onRequest', async (request) => {
      if (EXEMPT.has(`${request.method} ${request.routeOptions.url ?? ''}`) || internal(request)) return;
      await refuseOver(general, request.ip, 'requests');
    });
  }
  return {
    costly: async (request) => (costly && !internal(request) ? costly.take(request.ip) : null),
  };
}

async function refuseOver(limiter: Limiter, ip: string, what: string): Promise<void> {
  const wait = await limiter.take(ip);
  if (wait !== null)
    throw new SvcError('RATE_LIMITED', `Too many ${what} from ${ip}; retry in ${wait} s.`, { retryAfter: wait });
}
