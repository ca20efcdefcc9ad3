// Binding for node:http and Express-compatible frameworks: (req, res, next).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PaymentResponse } from '@svc/core';
import { hashResponse } from './attest.js';
import type { Gate, GateOutcome, GateRequest } from './gate.js';

export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** What the middleware adds to the request. */
export interface PaidRequest extends IncomingMessage {
  payment?: PaymentResponse;
}

export function nodeMiddleware(gate: Gate, publicUrl: string | undefined): NodeMiddleware {
  return function svcMeter(req, res, next) {
    gate.handle(toGateRequest(req, publicUrl)).then(
      (outcome) => apply(outcome, req as PaidRequest, res, next),
      (err: unknown) => next(err),
    );
  };
}

function apply(outcome: GateOutcome, req: PaidRequest, res: ServerResponse, next: (err?: unknown) => void): void {
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  if (outcome.kind === 'paid') {
    req.payment = outcome.payment;
    const attest = outcome.attest;
    if (attest) hashResponse(res, (hash) => void attest(hash));
    next();
    return;
  }
  res.statusCode = outcome.status;
  res.end(JSON.stringify(outcome.body));
}

export function toGateRequest(req: IncomingMessage, publicUrl: string | undefined): GateRequest {
  const r = req as IncomingMessage & { originalUrl?: string; protocol?: string; body?: unknown; rawBody?: unknown };
  const path = r.originalUrl ?? req.url ?? '/';
  const origin =
    publicUrl ??
    `${r.protocol ?? ('encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http')}://${req.headers.host ?? 'localhost'}`;
  const raw = r.rawBody ?? r.body;
  return {
    method: req.method ?? 'GET',
    url: `${origin}${path}`,
    header: (name) => {
      const v = req.headers[name.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    },
    rawBody: typeof raw === 'string' || raw instanceof Uint8Array ? raw : null,
  };
}
