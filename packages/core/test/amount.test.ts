import { describe, expect, it } from 'vitest';
import {
  I128_MAX,
  ceilDiv,
  displayAmount,
  formatUnits,
  parseDisplayAmount,
  parseSignedUnits,
  parseUnits,
} from '@svc/core';

describe('amounts', () => {
  it('round-trips decimal strings and bigint at the i128 edge', () => {
    expect(parseUnits('0')).toBe(0n);
    expect(parseUnits('135000')).toBe(135000n);
    expect(parseUnits(I128_MAX.toString())).toBe(I128_MAX);
    expect(formatUnits(I128_MAX)).toBe('170141183460469231731687303715884105727');
    expect(parseSignedUnits('-170141183460469231731687303715884105728')).toBe(-(1n << 127n));
  });

  it.each(['', '-1', '1.5', '1e3', ' 1', '0x10', '170141183460469231731687303715884105728', '1'.repeat(40)])(
    'refuses %j as base units',
    (text) => expect(() => parseUnits(text)).toThrow(),
  );

  it('shows 7 decimals and parses them back', () => {
    expect(displayAmount(5000n)).toBe('0.0005000');
    expect(displayAmount(100_000_000_000n)).toBe('10000.0000000');
    expect(displayAmount(-1n)).toBe('-0.0000001');
    expect(parseDisplayAmount('10000')).toBe(100_000_000_000n);
    expect(parseDisplayAmount('0.0005')).toBe(5000n);
    expect(() => parseDisplayAmount('0.00000001')).toThrow(/7 decimals/);
  });

  it('divides up for whole slices', () => {
    expect(ceilDiv(0n, 50n)).toBe(0n);
    expect(ceilDiv(1n, 50n)).toBe(1n);
    expect(ceilDiv(100n, 50n)).toBe(2n);
    expect(ceilDiv(101n, 50n)).toBe(3n);
  });
});

describe('hex', async () => {
  const { fromHex, toHex } = await import('@svc/core');
  it('round-trips every byte and either case, and refuses anything else', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(fromHex(toHex(all))).toEqual(all);
    expect(fromHex('ABcd', 2)).toEqual(new Uint8Array([0xab, 0xcd]));
    for (const bad of ['a', 'zz', 'g0', '0x', ' 0', 'é0', '00'.repeat(3)])
      expect(() => fromHex(bad, bad === '000000' ? 2 : undefined)).toThrow();
  });
});
