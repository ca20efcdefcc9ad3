// Every non-2xx answer carries the error body of docs/protocol.md#errors. Bad input is a 4xx, never a 500;
// a known fault of a dependency (the ledger unreachable, the store unable to commit) is a 503 with
// Retry-After; an unexpected error is a 500 INTERNAL whose details stay in the log, never in the
// response.
// Statuses come from the reason-code table (REASON_STATUS), except the transport-level refusals
// 405, 413, 414 and 415 (code BAD_REQUEST), which keep their standard HTTP status, as the ledger's do.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { LedgerTxRefused, LedgerUnavailable } from '@svc/ledger';
import { DEFAULT_MESSAGES, LedgerError, SvcError } from '@svc/core';
import type { ErrorBody } from '@svc/core';
import { isStoreUnavailable } from '../store/faults.js';

const TRANSPORT_STATUSES = new Set([413, 414, 415]);
/** Retry-After of a 503 that names none: about one ledger close, as the meter says for an unreachable facilitator. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
const STORE_UNAVAILABLE_MESSAGE =
  "The facilitator's database is unavailable right now; send the same request again shortly.";

/** The methods a 405's Allow can name, in the order it names them. */
const ALLOWABLE = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function installErrorHandling(app: FastifyInstance): void {
  // The routes again, in a router of Fastify's own kind, to tell a path that exists under other
  // methods (405 with Allow, RFC 9110 §15.5.6) from one that does not (404). CORS's OPTIONS routes
  // match every path, so OPTIONS is left out.
  const paths = FindMyWay();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      if (method !== 'OPTIONS' && (ALLOWABLE as readonly string[]).includes(method))
        paths.on(method as (typeof ALLOWABLE)[number], route.url ?? route.path, () => undefined);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = ALLOWABLE.filter((method) => paths.find(method, path) !== null);
    // A route that takes the method and still finds nothing (an unknown asset) is a 404.
    if (allowed.length > 0 && !(allowed as readonly string[]).includes(request.method)) {
      const err = new SvcError('BAD_REQUEST', `${request.method} ${path} is not allowed; ${allowed.join(', ')} is.`);
      return reply.code(405).header('allow', allowed.join(', ')).send(err.toBody());
    }
    const err = new SvcError('NOT_FOUND', `No route for ${request.method} ${path}.`);
    return reply.code(404).send(err.toBody());
  });
  app.setErrorHandler((error: FastifyError | Error, request, reply) => sendError(error, request, reply));
}

/** Also Fastify's `frameworkErrors` hook: errors raised before routing (a malformed URL, …). */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answer = errorAnswer(error, request.log);
  if (answer.retryAfter !== null) void reply.header('retry-after', answer.retryAfter);
  return reply.code(answer.status).send(answer.body);
}

/** An error as the answer it gets: status, error body and Retry-After (whole seconds, or null); logged when it is ours. */
export function errorAnswer(
  error: unknown,
  log: { error(obj: object, msg: string): void },
): { status: number; body: ErrorBody; retryAfter: string | null } {
  const svc = toSvcError(error);
  if (svc.code === 'INTERNAL') log.error({ err: error }, 'unhandled error');
  else if (isStoreFault(error)) log.error({ err: error }, 'the store is unavailable (answered 503)');
  // A 503 always says when to come back (RFC 9110 §10.2.3), like a 429.
  const retryAfter = svc.retryAfter ?? (svc.status === 503 ? UNAVAILABLE_RETRY_AFTER_SECONDS : undefined);
  const status = statusOf(error);
  return {
    status: status !== undefined && TRANSPORT_STATUSES.has(status) ? status : svc.status,
    body: svc.toBody(),
    retryAfter: retryAfter === undefined ? null : String(Math.max(1, Math.ceil(retryAfter))),
  };
}

export function toSvcError(error: unknown): SvcError {
  if (error instanceof SvcError) return error;
  if (error instanceof LedgerUnavailable)
    return new SvcError('LEDGER_UNAVAILABLE', DEFAULT_MESSAGES.LEDGER_UNAVAILABLE, { source: 'ledger' });
  if (error instanceof LedgerTxRefused) return new SvcError('BAD_REQUEST', error.message, { source: 'ledger' });
  // The demo's own transactions go through the sdk's ledger client.
  if (error instanceof LedgerError) {
    if (error.status >= 500)
      return new SvcError('LEDGER_UNAVAILABLE', DEFAULT_MESSAGES.LEDGER_UNAVAILABLE, { source: 'ledger' });
    return new SvcError('LEDGER_REJECTED', `The ledger refused the transaction: ${error.message}`, {
      source: 'ledger',
      ...(error.tx ? { tx: error.tx } : {}),
    });
  }
  // Nothing of a failed write was acknowledged (store/faults.ts): the client may send it again.
  if (isStoreFault(error)) return new SvcError('FACILITATOR_UNAVAILABLE', STORE_UNAVAILABLE_MESSAGE);
  const status = statusOf(error);
  if (isClientStatus(status)) {
    // Fastify's own refusals: unparsable JSON, body too large, unsupported media type, bad URL, …
    return new SvcError(
      status === 429 ? 'RATE_LIMITED' : 'BAD_REQUEST',
      clientMessage((error as FastifyError).code, status),
    );
  }
  return new SvcError('INTERNAL');
}

/**
 * A fault of the store's. An error with a 4xx status is the client's, whatever its code: a client
 * that leaves mid-body raises Node's "aborted" with ECONNRESET, which is also a lost PostgreSQL
 * connection's code.
 */
function isStoreFault(error: unknown): boolean {
  return !isClientStatus(statusOf(error)) && isStoreUnavailable(error);
}

function isClientStatus(status: number | undefined): status is number {
  return status !== undefined && status >= 400 && status < 500;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

function clientMessage(code: string | undefined, status: number): string {
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is too large.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported content type; send application/json.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The JSON body is empty.';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'The body is not valid JSON.';
    case 'FST_ERR_BAD_URL':
      return 'The request URL is malformed.';
    default:
      return status === 414 ? 'The request URL is too long.' : 'The request is malformed.';
  }
}
