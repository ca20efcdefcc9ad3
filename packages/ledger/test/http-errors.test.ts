import { describe, expect, it } from 'vitest';
import { SvcError } from '@svc/core';
import { LedgerTxRefused, LedgerUnavailable } from '../src/index.js';
import { toHttpError } from '../src/http-errors.js';

describe('the ledger routes’ error table', () => {
  it('maps every error kind to its status and docs/protocol.md#errors body', () => {
    const rows: Array<[unknown, number, string]> = [
      [new LedgerTxRefused('bad signature'), 400, 'BAD_REQUEST'],
      [new SvcError('BAD_REQUEST', 'x'), 400, 'BAD_REQUEST'],
      [new SvcError('NOT_FOUND', 'x'), 404, 'NOT_FOUND'],
      [new SvcError('RATE_LIMITED', 'x', { retryAfter: 7 }), 429, 'RATE_LIMITED'],
      [new LedgerUnavailable('down'), 503, 'LEDGER_UNAVAILABLE'],
      [Object.assign(new Error('Body is not valid JSON'), { statusCode: 400 }), 400, 'BAD_REQUEST'],
      [Object.assign(new Error('too big'), { statusCode: 413 }), 413, 'BAD_REQUEST'],
      [Object.assign(new Error('media'), { statusCode: 415 }), 415, 'BAD_REQUEST'],
      [Object.assign(new Error('long'), { statusCode: 414 }), 414, 'BAD_REQUEST'],
      [Object.assign(new Error('gone'), { statusCode: 404 }), 404, 'NOT_FOUND'],
      [new TypeError('secret internals'), 500, 'INTERNAL'],
      ['a string', 500, 'INTERNAL'],
    ];
    for (const [err, status, code] of rows) {
      const answer = toHttpError(err);
      expect({ status: answer.status, code: answer.body.error, source: answer.body.source }).toEqual({
        status,
        code,
        source: 'ledger',
      });
    }
    expect(toHttpError(new SvcError('RATE_LIMITED', 'x', { retryAfter: 7 })).retryAfter).toBe(7);
    expect(toHttpError(new LedgerUnavailable('down')).retryAfter).toBe(5); // a 503 says when to come back
    expect(toHttpError(new TypeError('secret internals')).body.message).toBe('Internal error.');
    expect(toHttpError(new LedgerTxRefused('bad signature')).body.message).toMatch(/bad signature/);
  });
});
