// GET /metrics: the Prometheus text format, for the operator's scraper. Metrics tell payment volumes
// and refusal rates by reason code, leadership and the store's latency: nothing for a stranger. So
// they are off unless METRICS_TOKEN is set (404, and nothing is counted), and then served only to
// `Authorization: Bearer <METRICS_TOKEN>`, compared in constant time (401 otherwise). The route
// counts against the general per-address limit like any other: a scrape every 15 s is 4 a minute.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ErrorBodySchema, SvcError } from '@svc/core';
import { z } from 'zod';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import { bearerOf } from '../seller-auth.js';
import type { Config } from '../../config.js';
import type { Metrics } from '../../metrics/metrics.js';

/** What this module uses of the domain. */
export interface MetricsDeps {
  config: Config;
  /** GET /metrics's counters and gauges (METRICS_TOKEN set), else null: nothing is counted. */
  metrics: Metrics | null;
}

export function metricsRoutes(deps: MetricsDeps): AnyRoute[] {
  const authorized = tokenCheck(deps.config.METRICS_TOKEN);
  return [
    defineRoute({
      method: 'GET',
      url: '/metrics',
      summary:
        'Metrics in the Prometheus text format: payments accepted and refused by code, verification latency, claims, stream sessions, event streams, the store, the ledger, leadership. Off unless the operator sets METRICS_TOKEN.',
      tags: ['meta'],
      auth: { scheme: 'metricsToken' },
      responses: {
        200: {
          description: 'The metrics (text/plain; version=0.0.4)',
          schema: z.string(),
          contentType: 'text/plain',
        },
        401: { description: 'Missing or wrong metrics token', schema: ErrorBodySchema },
        404: { description: 'Metrics are off (METRICS_TOKEN unset)', schema: ErrorBodySchema },
      },
      handler: async ({ request, reply }) => {
        const { metrics } = deps;
        if (metrics === null || authorized === null)
          throw new SvcError('NOT_FOUND', 'Metrics are off here; the operator turns them on with METRICS_TOKEN.');
        if (!authorized(request))
          throw new SvcError('UNAUTHORIZED', 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.');
        const text = await metrics.render();
        void reply.type(metrics.contentType).header('cache-control', 'no-store');
        return text;
      },
    }),
  ];
}

/** The bearer token against the configured one, in constant time (digests of equal length); null when none is set. */
function tokenCheck(token: string | undefined): ((request: FastifyRequest) => boolean) | null {
  if (token === undefined) return null;
  const expected = createHash('sha256').update(token).digest();
  return (request) => {
    const given = bearerOf(request);
    return given !== null && timingSafeEqual(createHash('sha256').update(given).digest(), expected);
  };
}
