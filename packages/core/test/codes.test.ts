import { describe, expect, it } from 'vitest';
import { DEFAULT_MESSAGES, REASON_STATUS, SvcError, statusOf } from '@svc/core';

// The table of docs/protocol.md#errors, written out once more so a change to either side is seen; plus
// UNSUPPORTED_SCHEME and UNSUPPORTED_VERSION, the refusals of /verify and /settle for a request the
// official x402 client can build and svc does not take.
const EXPECTED: Record<number, string[]> = {
  402: [
    'PAYMENT_REQUIRED',
    'CHANNEL_NOT_FOUND',
    'CHANNEL_CLOSED',
    'CHANNEL_EXPIRING',
    'WRONG_PAYEE',
    'WRONG_ASSET',
    'WRONG_NETWORK',
    'VOUCHER_BAD_SIGNATURE',
    'VOUCHER_NOT_INCREASING',
    'VOUCHER_UNDERPAID',
    'CHANNEL_EXHAUSTED',
    'ACCOUNT_FROZEN',
    'UNSUPPORTED_SCHEME',
    'UNSUPPORTED_VERSION',
  ],
  400: ['PAYMENT_MALFORMED', 'BAD_REQUEST', 'invalid_payment_identifier'],
  401: ['UNAUTHORIZED'],
  403: ['FORBIDDEN'],
  404: ['NOT_FOUND', 'STREAM_NOT_FOUND'],
  409: ['CONFLICT', 'invalid_payment_identifier_conflict'],
  422: ['REPORT_NOT_VERIFIED'],
  429: ['RATE_LIMITED'],
  500: ['INTERNAL'],
  502: ['LEDGER_REJECTED', 'SELLER_MISCONFIGURED'],
  503: ['LEDGER_UNAVAILABLE', 'FACILITATOR_UNAVAILABLE'],
};

describe('reason codes', () => {
  const rows = Object.entries(EXPECTED).flatMap(([status, codes]) =>
    codes.map((code) => [code, Number(status)] as const),
  );

  it.each(rows)('%s answers HTTP %i', (code, status) => {
    expect(statusOf(code as keyof typeof REASON_STATUS)).toBe(status);
  });

  it('has no code beyond the table, and a message for each', () => {
    expect(Object.keys(REASON_STATUS).sort()).toEqual(rows.map(([c]) => c).sort());
    for (const code of Object.keys(REASON_STATUS))
      expect(DEFAULT_MESSAGES[code as keyof typeof REASON_STATUS]).toMatch(/\.$/);
  });

  it('SvcError carries the error body of docs/protocol.md#errors', () => {
    const err = new SvcError('LEDGER_REJECTED', 'claim failed: VOUCHER_NOT_INCREASING (23)', {
      source: 'ledger',
      tx: 'ab',
    });
    expect(err.status).toBe(502);
    expect(err.toBody()).toEqual({
      error: 'LEDGER_REJECTED',
      source: 'ledger',
      message: 'claim failed: VOUCHER_NOT_INCREASING (23)',
      tx: 'ab',
    });
    expect(new SvcError('NOT_FOUND').toBody()).toEqual({
      error: 'NOT_FOUND',
      source: 'facilitator',
      message: 'Not found.',
    });
  });
});
