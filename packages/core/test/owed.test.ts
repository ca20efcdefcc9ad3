import { describe, expect, it } from 'vitest';
import { owedPerPayment } from '@svc/core';
import type { PaymentRequirements } from '@svc/core';

function buildRequirements(
  overrides: Partial<PaymentRequirements> = {},
  extra: Partial<PaymentRequirements['extra']> = {},
): PaymentRequirements {
  return {
    scheme: 'channel',
    network: 'stellar:local',
    asset: 'CASSET',
    payTo: 'GPAYEE',
    amount: '5000',
    unit: 'request',
    maxTimeoutSeconds: 60,
    ...overrides,
    extra: {
      channelContract: 'CCHANNEL',
      minDeposit: '5000000',
      facilitator: 'http://127.0.0.1:4020',
      areFeesSponsored: true,
      ...extra,
    },
  };
}

describe('owedPerPayment', () => {
  it('owes the price for a request', () => {
    expect(owedPerPayment(buildRequirements({ amount: '5000' }))).toBe(5000n);
  });

  it('owes the price for a request even when the terms name a slice', () => {
    expect(owedPerPayment(buildRequirements({ amount: '5000' }, { sliceAmount: '900' }))).toBe(5000n);
  });

  it.each(['token', 'second'] as const)('owes one slice for a %s', (unit) => {
    expect(owedPerPayment(buildRequirements({ unit, amount: '2' }, { sliceTokens: 100, sliceAmount: '200' }))).toBe(
      200n,
    );
  });

  it.each(['token', 'second'] as const)('owes the price for a %s when the terms name no slice', (unit) => {
    expect(owedPerPayment(buildRequirements({ unit, amount: '7' }))).toBe(7n);
  });

  it('reads amounts past 2^53 exactly', () => {
    expect(owedPerPayment(buildRequirements({ amount: '170141183460469231731687303715884105727' }))).toBe(
      2n ** 127n - 1n,
    );
  });
});
