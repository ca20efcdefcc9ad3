// Binding for node:http and Express-compatible frameworks: (req, res, next).
//
//   http.createServer((req, res) => mw(req, res, () => res.end('paid')));  // mw = nodeMeter(client, options)
//   app.get('/book', nodeMeter(client, { price: 5000n, unit: 'request' }), (req, res) => res.json(req.payment));
//
// `client.meter(options)` is the same binding. The raw body counts in the receipt's requestHash
// when the seller keeps it as req.rawBody (express.json({ verify }), or read by hand), or when
// req.body is bytes or text (express.raw(), express.text()).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hashResponse } from './attest.js';
import type { Gate, GateSource } from './gate.js';
import type { GateOutcome, GateRequest } from './gate-outcome.js';
import { holdNodeResponse } from './hold-node.js';
import { channelPayment } from './payment.js';
import type { Payment } from './payment.js';
import { bodyBytes, headerReader, originOf, publicRequestUrl } from './request-parts.js';
import type { MeterOptions } from './terms.js';

export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** What the middleware adds to the request: the payment, and `charge(amount)` (payment.ts). */
export interface PaidRequest extends IncomingMessage {
  payment?: Payment;
}

/** The node:http and Express binding, with the signature every binding has: (client, options). */
export function nodeMeter(client: GateSource, options: MeterOptions): NodeMiddleware {
  return middleware(client.gate(options), client.publicUrl);
}

function middleware(gate: Gate, publicUrl: string | undefined): NodeMiddleware {
  return function svcMeter(req, res, next) {
    gate.handle(gateRequestOf(req, publicUrl)).then(
      (outcome) => apply(outcome, req as PaidRequest, res, next),
      (err: unknown) => next(err),
    );
  };
}

function apply(outcome: GateOutcome, req: PaidRequest, res: ServerResponse, next: (err?: unknown) => void): void {
  if (outcome.kind === 'held') {
    // batch-settlement: the answer is held, and charged once the handler has ended it.
    const held = holdNodeResponse(res, outcome.hold);
    req.payment = outcome.hold.payment;
    try {
      next();
    } catch {
      // A plain node:http handler that threw (Express catches its own): nothing charged, a 500.
      held.fail();
    }
    return;
  }
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  if (outcome.kind === 'paid') {
    req.payment = channelPayment(outcome.payment);
    const attest = outcome.attest;
    if (attest) hashResponse(res, (hash) => void attest(hash));
    next();
    return;
  }
  res.statusCode = outcome.status;
  res.end(JSON.stringify(outcome.body));
}

function gateRequestOf(req: IncomingMessage, publicUrl: string | undefined): GateRequest {
  // Express adds originalUrl (the path before routers stripped their mount point) and protocol
  // (which honours its "trust proxy" setting).
  const r = req as IncomingMessage & { originalUrl?: string; protocol?: string; body?: unknown; rawBody?: unknown };
  const encrypted = 'encrypted' in req.socket && req.socket.encrypted === true;
  const origin = originOf(r.protocol ?? (encrypted ? 'https' : 'http'), req.headers.host);
  return {
    method: req.method ?? 'GET',
    url: publicRequestUrl(publicUrl, origin, r.originalUrl ?? req.url ?? '/'),
    header: headerReader(req.headers),
    rawBody: bodyBytes(r.rawBody, r.body),
  };
}
