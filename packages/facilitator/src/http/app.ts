// The Fastify application: parsers, limits, CORS, security headers, error bodies, routes.
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import Fastify, { LogController } from 'fastify';
import helmet from 'helmet';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { EXPOSED_HEADERS } from '@svc/meter';
import { MAX_JSON_DEPTH, SvcError, jsonDepth } from '@svc/core';
import type { Services } from '../services.js';
import { ChannelListing } from './channel-listing.js';
import { limitConnections } from './limits/connections.js';
import { consoleRoutes } from './console.js';
import { installErrorHandling, sendError } from './errors.js';
import { installIpLimits } from './limits/ip.js';
import type { Limiters } from '../limits/limiter.js';
import { mount } from './route.js';
import type { AnyRoute } from './route.js';
import type { EventFeed } from './events/feed.js';
import { accountRoutes } from './routes/accounts.js';
import { channelRoutes } from './routes/channels.js';
import { demoControlRoutes } from '../demo/control-routes.js';
import { demoSellerRoutes } from '../demo/seller-routes.js';
import { discoveryRoutes } from './routes/discovery.js';
import { eventRoutes } from './events/routes.js';
import { floatRoutes } from './routes/float.js';
import { receiptRoutes } from './routes/receipts.js';
import { reportRoutes } from './routes/reports.js';
import { metaRoutes } from './routes/meta.js';
import { metricsRoutes } from './routes/metrics.js';
import { registerMcp } from './mcp/routes.js';
import { selfRoutes } from './openapi/routes.js';
import { sellerRoutes } from './routes/sellers.js';
import { streamRoutes } from './routes/streams.js';
import { x402Routes } from './routes/x402.js';
import { trustedPeer } from './limits/trust-proxy.js';

export const BODY_LIMIT_BYTES = 64 * 1024;
/**
 * A whole request (headers and a body of at most 64 KiB) must arrive within this; answers may take
 * longer (GET /events streams for hours, POST /streams/:id/wait waits up to 30 s).
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How often Node checks the header and request timeouts (its default, 30 s, would add up to 30 s to each). */
const TIMEOUT_CHECK_MS = 1_000;

export interface HttpOptions {
  logger: FastifyBaseLogger;
  trustProxy: string;
  corsOrigins: string;
  limiters: Limiters;
  /** The console's build (default: packages/facilitator/console); served at / when present. */
  consoleDir?: string;
}

export async function buildHttp(
  s: Services,
  feed: EventFeed,
  options: HttpOptions,
): Promise<{ app: FastifyInstance; routes: AnyRoute[] }> {
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    ...serverTimeouts(s.config.CONN_IDLE_SECONDS * 1000),
    trustProxy: trustProxyOption(options.trustProxy),
    return503OnClosing: true,
    frameworkErrors: (error, request, reply) => void sendError(error, request, reply),
    clientErrorHandler: clientError,
  });
  limitConnections(app.server, {
    perIp: s.config.CONN_MAX_PER_IP,
    total: s.config.CONN_MAX_TOTAL,
    trusted: trustedPeer(options.trustProxy),
  });
  installErrorHandling(app);
  installJsonParser(app);
  await app.register(cors, {
    origin: options.corsOrigins === '*' ? '*' : options.corsOrigins.split(',').map((o) => o.trim()),
    exposedHeaders: EXPOSED_HEADERS.split(', '),
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    // A plain OPTIONS (no Origin or Access-Control-Request-Method) asks what is allowed: it gets
    // the same 204 as a preflight, not @fastify/cors's text/plain 400 "Invalid Preflight Request".
    strictPreflight: false,
  });
  // Security headers on every answer (streams and MCP included: they copy the reply's headers).
  // The API is public and CORS-enabled, hence a cross-origin resource policy; no upgrade of
  // insecure requests, since the embedded default serves plain HTTP on loopback.
  // helmet's middleware is built once here: @fastify/helmet builds it again on every request
  // (for per-route options this app does not use), ~25 µs of CPU per paid request.
  const securityHeaders = helmet({
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: null, frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  });
  app.addHook('onRequest', (request, reply, done) =>
    securityHeaders(request.raw, reply.raw, (err?: unknown) => done(err instanceof Error ? err : undefined)),
  );
  const ipLimits = await installIpLimits(app, options.limiters, {
    generalPerMinute: s.config.IP_RATE_LIMIT_PER_MINUTE,
    costlyPerMinute: s.config.IP_COSTLY_LIMIT_PER_MINUTE,
    internalToken: s.internalToken,
  });
  const listing = new ChannelListing(s.store, (record) => s.channelView(record));
  const routes: AnyRoute[] = [
    ...x402Routes({
      payments: s.payments,
      refunds: s.refunds,
      sellerTokens: s.sellerTokens,
      network: s.ledgerInfo.network,
      supported: s.supported,
      metrics: s.metrics,
    }),
    ...channelRoutes({
      store: s.store,
      book: s.book,
      listing,
      manualClaims: s.manualClaims,
      network: s.ledgerInfo.network,
      channelView: s.channelView,
    }),
    ...streamRoutes({ publicUrl: s.publicUrl, sellerTokens: s.sellerTokens, store: s.store, streams: s.streams }),
    ...accountRoutes({ ledger: s.ledger, ledgerInfo: s.ledgerInfo, store: s.store }, listing),
    ...receiptRoutes({ attestations: s.attestations, receiptSigners: s.receiptSigners, store: s.store }),
    ...eventRoutes(feed),
    ...reportRoutes({ clock: s.clock, events: s.events, ledger: s.ledger, ledgerInfo: s.ledgerInfo, store: s.store }),
    ...sellerRoutes({
      clock: s.clock,
      config: s.config,
      keys: s.keys,
      ledgerInfo: s.ledgerInfo,
      sellerTokens: s.sellerTokens,
      store: s.store,
    }),
    ...discoveryRoutes({ store: s.store, keys: s.keys }),
    ...floatRoutes({ config: s.config, floatHistory: s.floatHistory, ledger: s.ledger, ledgerInfo: s.ledgerInfo }),
    ...metaRoutes({
      clock: s.clock,
      config: s.config,
      keys: s.keys,
      latestLedger: s.latestLedger,
      leadership: s.leadership,
      ledgerInfo: s.ledgerInfo,
      reconciler: s.reconciler,
      startedAt: s.startedAt,
      stats: s.stats,
      store: s.store,
      storeHealth: s.storeHealth,
    }),
    ...metricsRoutes({ config: s.config, metrics: s.metrics }),
    ...(s.demo ? demoControlRoutes({ config: s.config, supported: s.supported }, s.demo) : []),
    ...(s.demo
      ? demoSellerRoutes(
          {
            clock: s.clock,
            config: s.config,
            internalToken: s.internalToken,
            publicUrl: s.publicUrl,
            selfUrl: s.selfUrl,
            sellerTokens: s.sellerTokens,
            supported: s.supported,
          },
          s.demo,
          { app, routes: () => routes },
        )
      : []),
    ...(await consoleRoutes(app, options.consoleDir)),
  ];
  // The MCP endpoint's and the self-description's: what the agent-facing routes read.
  const mcp = {
    config: s.config,
    demo: s.demo,
    internalToken: s.internalToken,
    ledgerInfo: s.ledgerInfo,
    publicUrl: s.publicUrl,
    supported: s.supported,
  };
  // The OpenAPI document describes every route, its own included.
  routes.push(...selfRoutes({ ...mcp, keys: s.keys, receiptSigners: s.receiptSigners }, () => routes));
  mount(app, routes, ipLimits);
  registerMcp(app, mcp);
  return { app, routes };
}

/**
 * Fastify's JSON parser (prototype poisoning refused) plus a nesting bound: 30,000 brackets fit in
 * 64 KiB and would overflow the stack of any recursive walk (JSON.stringify, zod) further on.
 */
function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  // Declared, so that every request has it from the start (one shape for V8), not added per body.
  app.decorateRequest('rawBody', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // The bytes as sent, for the demo seller's meter: its receipts' requestHash covers the body.
    (request as { rawBody?: string }).rawBody = text;
    void parse(request, text, (err, value) => {
      if (err) return done(err, undefined);
      if (jsonDepth(value) > MAX_JSON_DEPTH)
        return done(
          new SvcError('BAD_REQUEST', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`),
          undefined,
        );
      done(null, value);
    });
  });
}

/**
 * Timeouts set on purpose. A connection that sends no request, or idles after an
 * answer, is closed after CONN_IDLE_SECONDS: Node's header timeout runs from the moment a
 * connection opens (then 408), its keep-alive timeout from the end of an answer (and clients are
 * told, `Keep-Alive: timeout=…`, so they retire the socket first). No timeout bounds an answer
 * being sent: event streams and long polls are bounded by their own rules, and a stream whose
 * client stopped reading is dropped by the event feed.
 */
function serverTimeouts(idleMs: number): {
  keepAliveTimeout: number;
  requestTimeout: number;
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
} {
  const requestTimeout = Math.max(REQUEST_TIMEOUT_MS, idleMs);
  return {
    keepAliveTimeout: idleMs,
    requestTimeout,
    http: { headersTimeout: idleMs, requestTimeout, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
  };
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

/**
 * Errors Node's HTTP parser raises before a request exists (headers over 16 KiB, a malformed
 * request line, a timeout): answered with the error body like everything else, then closed.
 */
function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request took too long to arrive.']
        : [400, 'The request is malformed.'];
  const body = JSON.stringify({ error: 'BAD_REQUEST', source: 'facilitator', message });
  socket.end(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
