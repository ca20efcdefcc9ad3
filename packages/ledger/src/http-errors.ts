// The one table from errors to HTTP answers for the ledger routes (docs/protocol.md#errors body,
// `source: "ledger"`). Nothing else decides a status, and no stack trace ever leaves.
import { SvcError } from '@svc/core';
import type { ErrorBody, ReasonCode } from '@svc/core';
import { LedgerTxRefused, LedgerUnavailable } from './port.js';

export interface HttpError {
  status: number;
  body: ErrorBody;
  /** Whole seconds, sent as Retry-After (RATE_LIMITED). */
  retryAfter?: number;
}

/** Framework errors (body parsing, limits) carry their own 4xx status and a fixed message. */
const FRAMEWORK_MESSAGES: Record<number, string> = {
  400: 'The request body is not valid JSON.',
  413: 'The request body is too large.',
  414: 'The request URL is too long.',
  415: 'Unsupported content type: send application/json.',
};

/** better-sqlite3's result codes for a database that cannot be written now (extended ones too). */
const SQLITE_FAULT = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|PROTOCOL)/;

function isSqliteFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && SQLITE_FAULT.test(code);
}

function body(code: ReasonCode, message: string): ErrorBody {
  return { error: code, source: 'ledger', message };
}

function frameworkStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('statusCode' in err)) return undefined;
  const status = err.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

export function toHttpError(err: unknown): HttpError {
  if (err instanceof SvcError) {
    return {
      status: err.status,
      body: body(err.code, err.message),
      ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {}),
    };
  }
  if (err instanceof LedgerTxRefused)
    return { status: 400, body: body('BAD_REQUEST', `Transaction refused: ${err.message}.`) };
  if (err instanceof LedgerUnavailable)
    return {
      status: 503,
      body: body('LEDGER_UNAVAILABLE', 'The ledger is unavailable; try again shortly.'),
      retryAfter: 5,
    };
  // Its own file cannot be written now (disk full, locked, I/O error): a fault of the moment, and
  // the transaction had no effect (each is one SQLite transaction).
  if (isSqliteFault(err))
    return {
      status: 503,
      body: body(
        'LEDGER_UNAVAILABLE',
        'The ledger cannot write its records right now (disk full or busy); nothing was applied; try again shortly.',
      ),
      retryAfter: 5,
    };
  const status = frameworkStatus(err);
  if (status === 404) return { status, body: body('NOT_FOUND', 'Not found.') };
  if (status !== undefined)
    return { status, body: body('BAD_REQUEST', FRAMEWORK_MESSAGES[status] ?? 'The request is malformed.') };
  return { status: 500, body: body('INTERNAL', 'Internal error.') };
}
