// Price parsing: money is bigint base units; floats, negatives and ambiguous strings are refused.
import { describe, expect, it } from 'vitest';
import { I128_MAX } from '@svc/core';
import { ChannelSchemeServer, PriceError, priceToUnits } from '../src/index.js';

describe('priceToUnits', () => {
  it('takes bigints and base-unit strings as base units', () => {
    expect(priceToUnits(5000n)).toBe(5000n);
    expect(priceToUnits('5000')).toBe(5000n);
    expect(priceToUnits(' 1 ')).toBe(1n);
    expect(priceToUnits(I128_MAX)).toBe(I128_MAX);
  });

  it('takes asset units with an explicit marker, up to 7 decimals', () => {
    expect(priceToUnits('$0.0005')).toBe(5000n);
    expect(priceToUnits('$1')).toBe(10_000_000n);
    expect(priceToUnits('$0.0000001')).toBe(1n);
    expect(priceToUnits('0.0005 USDC')).toBe(5000n);
    expect(priceToUnits('2 usdc')).toBe(20_000_000n);
    expect(priceToUnits('0.5 PTS', { symbol: 'PTS', decimals: 2 })).toBe(50n);
  });

  it('takes { amount, asset } with a base-unit amount', () => {
    expect(priceToUnits({ amount: '5000', asset: 'USDC' })).toBe(5000n);
    expect(() => priceToUnits({ amount: '0.5', asset: 'USDC' })).toThrow(PriceError);
    expect(() => priceToUnits({ amount: '-5', asset: 'USDC' })).toThrow(PriceError);
  });

  it('refuses JavaScript numbers, floats or not', () => {
    expect(() => priceToUnits(0.0005)).toThrow(/not the number 0.0005/);
    expect(() => priceToUnits(5000)).toThrow(PriceError);
    expect(() => priceToUnits(Number.NaN)).toThrow(PriceError);
  });

  it('refuses negative and zero prices', () => {
    expect(() => priceToUnits(-5n)).toThrow(/positive/);
    expect(() => priceToUnits(0n)).toThrow(/positive/);
    expect(() => priceToUnits('0')).toThrow(/positive/);
    expect(() => priceToUnits('-5000')).toThrow(/positive/);
    expect(() => priceToUnits('$0')).toThrow(/positive/);
    expect(() => priceToUnits('$-1')).toThrow(PriceError);
  });

  it('refuses more precision than the asset has, ambiguous and foreign amounts', () => {
    expect(() => priceToUnits('$0.00000001')).toThrow(/at most 7 decimals/);
    expect(() => priceToUnits('0.0005')).toThrow(/ambiguous/);
    expect(() => priceToUnits('5e3')).toThrow(PriceError);
    expect(() => priceToUnits('0.0005 EUR')).toThrow(PriceError);
    expect(() => priceToUnits('')).toThrow(PriceError);
    expect(() => priceToUnits(null)).toThrow(PriceError);
    expect(() => priceToUnits((I128_MAX + 1n).toString())).toThrow(/i128/);
    expect(() => priceToUnits(I128_MAX + 1n)).toThrow(/i128/);
  });
});

describe('ChannelSchemeServer.parsePrice', () => {
  const server = new ChannelSchemeServer();

  it('answers a decimal string of base units and leaves the asset to the facilitator', async () => {
    await expect(server.parsePrice('$0.0005', 'stellar:local')).resolves.toEqual({ amount: '5000', asset: '' });
    await expect(server.parsePrice('5000', 'stellar:local')).resolves.toEqual({ amount: '5000', asset: '' });
    await expect(server.parsePrice({ amount: '7', asset: 'USDC', extra: { a: 1 } }, 'stellar:local')).resolves.toEqual({
      amount: '7',
      asset: 'USDC',
      extra: { a: 1 },
    });
  });

  it('rejects floats and negative prices', async () => {
    await expect(server.parsePrice(0.01, 'stellar:local')).rejects.toThrow(PriceError);
    await expect(server.parsePrice('-1', 'stellar:local')).rejects.toThrow(PriceError);
  });

  it('accepts a bigint at runtime, as JavaScript sellers may pass one', async () => {
    await expect(server.parsePrice(5000n as unknown as string, 'stellar:local')).resolves.toEqual({
      amount: '5000',
      asset: '',
    });
  });
});
