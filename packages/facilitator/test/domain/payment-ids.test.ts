// The payment-identifier fingerprint is stored with each answer (payment_ids) and recomputed on
// every retry: if its parts or their order changed, every stored answer would stop matching its
// replay and be refused as a conflict. These hashes were computed before the two schemes' copies
// of the mapping became one (payment-ids.ts paymentIdFingerprint).
import { describe, expect, it } from 'vitest';
import { paymentIdFingerprint } from '../../src/domain/payment-ids.js';

const PAID = {
  payment: { channelId: 123456789012345678901234567890n, cumulative: 5000n, signature: 'AB'.repeat(64) },
  requirements: { network: 'stellar:local', asset: 'CASSET', payTo: 'GPAYTO' },
  resource: 'http://seller.test/x?q=1',
  method: 'POST',
  requestHash: null,
};

describe('paymentIdFingerprint', () => {
  it('hashes the same parts as the records already stored, for both schemes, with and without a request hash', () => {
    const hashed = { ...PAID, requestHash: 'ff'.repeat(32) };
    expect(paymentIdFingerprint('channel', PAID)).toBe(
      '5392812153fc9ba2fc874553912c1064ddb0cf64003ee2a5ccd78318a2be088c',
    );
    expect(paymentIdFingerprint('channel', hashed)).toBe(
      '67da890de1e1c58aa34c59e02539ff51177c3b3694c6f4b3834e3997b11f0cdd',
    );
    expect(paymentIdFingerprint('batch-settlement', PAID)).toBe(
      '09b2c8ad353a47c1828b3b78ed3268e2f0a79c1c17dfc7f12a13509402f31ece',
    );
    expect(paymentIdFingerprint('batch-settlement', hashed)).toBe(
      'c8e9ec64ffccd3c6bdea1b2057e4b15c43560c7623ac16cafb1129541fb48521',
    );
  });

  it('reads a signature in either case as the same payment', () => {
    const lower = { ...PAID, payment: { ...PAID.payment, signature: 'ab'.repeat(64) } };
    expect(paymentIdFingerprint('channel', lower)).toBe(paymentIdFingerprint('channel', PAID));
  });
});
