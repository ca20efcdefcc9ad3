// x402's payment-identifier extension: the id's format, reading it from a payment payload, and
// appending it to a seller's declaration.
import { describe, expect, it } from 'vitest';
import {
  PAYMENT_ID_RE,
  generatePaymentId,
  paymentIdentifierDeclaration,
  readPaymentId,
  withPaymentId,
} from '@svc/core';

const ID = 'pay_7d5d747be160e280504c099d984bcfe0';

describe('payment-identifier', () => {
  it('generates ids of the extension’s format, each new', () => {
    const a = generatePaymentId();
    expect(a).toMatch(/^pay_[0-9a-f]{32}$/);
    expect(a).toMatch(PAYMENT_ID_RE);
    expect(generatePaymentId()).not.toBe(a);
  });

  it('reads the id of a payload: none without the extension or without an id, an error for a malformed one', () => {
    expect(readPaymentId({})).toEqual({ ok: true, id: null });
    expect(readPaymentId({ extensions: { bazaar: {} } })).toEqual({ ok: true, id: null });
    expect(readPaymentId({ extensions: { 'payment-identifier': { info: { required: false } } } })).toEqual({
      ok: true,
      id: null,
    });
    expect(readPaymentId({ extensions: { 'payment-identifier': { info: { required: false, id: ID } } } })).toEqual({
      ok: true,
      id: ID,
    });
    for (const id of ['short', 'x'.repeat(129), 'pay_with spaces_0123456789', 'pay_ünïcode_0123456789', 42, null])
      expect(readPaymentId({ extensions: { 'payment-identifier': { info: { id } } } })).toMatchObject({ ok: false });
    expect(readPaymentId({ extensions: { 'payment-identifier': 'pay' } })).toMatchObject({ ok: false });
    expect(readPaymentId({ extensions: { 'payment-identifier': { info: { id: 'x'.repeat(16) } } } })).toEqual({
      ok: true,
      id: 'x'.repeat(16),
    });
  });

  it('appends an id to a declaration, leaving the declaration and other extensions as they were', () => {
    const declared = { bazaar: { a: 1 }, 'payment-identifier': paymentIdentifierDeclaration() };
    const named = withPaymentId(declared, ID);
    expect(named).toEqual({
      bazaar: { a: 1 },
      'payment-identifier': { ...paymentIdentifierDeclaration(), info: { required: false, id: ID } },
    });
    expect(declared['payment-identifier'].info).toEqual({ required: false });
    expect(withPaymentId({ bazaar: {} }, ID)).toEqual({ bazaar: {} });
    expect(withPaymentId(undefined, ID)).toBeUndefined();
    expect(() => withPaymentId(declared, 'bad id')).toThrow(/16–128/);
  });
});
