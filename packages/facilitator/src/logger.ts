// The facilitator's logger (pino, as Fastify's own), made first so that everything built before the
// HTTP server can log. Payment headers carry signatures and the demo key and tokens are secrets:
// never in the log.
import { pino } from 'pino';
import type { Logger } from 'pino';
import { INTERNAL_HEADER } from './http/limits/ip.js';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: [
      'req.headers["payment-signature"]',
      'req.headers["x-payment"]',
      'req.headers["x-demo-key"]',
      `req.headers["${INTERNAL_HEADER}"]`,
      'req.headers.authorization',
    ],
  });
}
