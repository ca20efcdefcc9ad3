// The Fastify application: parsers, limits, CORS, security headers, error bodies, routes.
import cors from '@fastify/cors';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import { EXPOSED_HEADERS } from '@svc/meter';
import type { Services } from '../services.js';
import { installErrorHandling, sendError } from './errors.js';
import { memoryIpLimits } from './ip-limits.js';
import { mount } from './route.js';
import type { AnyRoute } from './route.js';
import type { EventFeed } from './event-feed.js';
import { accountRoutes } from './routes/accounts.js';
import { channelRoutes } from './routes/channels.js';
import { demoControlRoutes } from './routes/demo-control.js';
import { discoveryRoutes } from './routes/discovery.js';
import { eventRoutes } from './routes/events.js';
import { floatRoutes } from './routes/float.js';
import { receiptRoutes } from './routes/receipts.js';
import { reportRoutes } from './routes/reports.js';
import { metaRoutes } from './routes/meta.js';
import { registerMcp } from './routes/mcp.js';
import { selfRoutes } from './routes/self.js';
import { sellerRoutes } from './routes/sellers.js';
import { streamRoutes } from './routes/streams.js';
import { x402Routes } from './routes/x402.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

export interface HttpOptions {
  logLevel: string;
  trustProxy: string;
  corsOrigins: string;
}

export async function buildHttp(s: Services, feed: EventFeed, options: HttpOptions): Promise<{ app: FastifyInstance; routes: AnyRoute[] }> {
  const app = Fastify({
    logger: {
      level: options.logLevel,
      // Payment headers carry signatures and the demo key is a secret: never in the log.
      redact: ['req.headers["payment-signature"]', 'req.headers["x-payment"]', 'req.headers["x-demo-key"]', 'req.headers.authorization'],
    },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxyOption(options.trustProxy),
    return503OnClosing: true,
    frameworkErrors: (error, request, reply) => void sendError(error, request, reply),
  });
  installErrorHandling(app);
  await app.register(cors, {
    origin: options.corsOrigins === '*' ? '*' : options.corsOrigins.split(',').map((o) => o.trim()),
    exposedHeaders: EXPOSED_HEADERS.split(', '),
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
  });
  app.addHook('onSend', async (_request, reply) => {
    void reply.header('x-content-type-options', 'nosniff');
    void reply.header('referrer-policy', 'no-referrer');
    void reply.header('x-frame-options', 'DENY');
  });
  const routes = [
    ...x402Routes(s),
    ...channelRoutes(s),
    ...streamRoutes(s),
    ...accountRoutes(s),
    ...receiptRoutes(s),
    ...eventRoutes(s, feed),
    ...reportRoutes(s),
    ...sellerRoutes(s),
    ...discoveryRoutes(s),
    ...floatRoutes(s),
    ...metaRoutes(s),
    ...(s.demo ? demoControlRoutes(s, s.demo) : []),
  ];
  // The OpenAPI document describes every route, its own included.
  routes.push(...selfRoutes(s, () => routes));
  mount(app, routes, memoryIpLimits(s.config.IP_COSTLY_LIMIT_PER_MINUTE));
  registerMcp(app, s);
  return { app, routes };
}

/** TRUST_PROXY: empty (trust nobody), `true`, a hop count, or a list of addresses/CIDRs. */
function trustProxyOption(value: string): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return value.split(',').map((v) => v.trim());
}
