import { describe, expect, it } from 'vitest';
import {
  safeParse,
  zAccount,
  zAddress,
  zChannelId,
  zContract,
  zHttpUrl,
  zNetwork,
  zSignatureHex,
  zUnits,
} from '@svc/core';

describe('wire schemas never throw on junk', () => {
  const junk: unknown[] = [
    '',
    'x',
    '-1',
    '1e5',
    ' 1',
    '0x1f',
    '９',
    'a'.repeat(5000),
    null,
    undefined,
    12,
    {},
    [],
    '1'.repeat(45),
  ];
  it.each([
    ['zChannelId', zChannelId],
    ['zUnits', zUnits],
    ['zSignatureHex', zSignatureHex],
    ['zAccount', zAccount],
    ['zContract', zContract],
    ['zAddress', zAddress],
    ['zNetwork', zNetwork],
    ['zHttpUrl', zHttpUrl],
  ])('%s rejects junk with an issue, not an exception', (_name, schema) => {
    for (const value of junk) expect(() => schema.safeParse(value)).not.toThrow();
    for (const value of junk) expect(schema.safeParse(value).success).toBe(false);
  });

  it('accepts the edges it should', () => {
    expect(zChannelId.safeParse('18446744073709551615').success).toBe(true);
    expect(zChannelId.safeParse('18446744073709551616').success).toBe(false);
    expect(zUnits.safeParse('18446744073709551616').success).toBe(true);
    expect(zUnits.safeParse('170141183460469231731687303715884105727').success).toBe(true);
    expect(zUnits.safeParse('170141183460469231731687303715884105728').success).toBe(false);
  });

  it('says only what is wrong with an amount: not a decimal string, or past the i128 range', () => {
    const messages = (v: string) => zUnits.safeParse(v).error?.issues.map((i) => i.message);
    for (const bad of ['-1', '1e9', '1.5', '']) expect(messages(bad), bad).toEqual(['a decimal string of base units']);
    expect(messages('170141183460469231731687303715884105728')).toEqual(['exceeds the i128 range']);
  });
});

describe('safeParse', () => {
  it('turns a validator that throws into a failure (zod 4 compares an object length with a number)', () => {
    const hostile = { length: { toString: 'x' } };
    const result = safeParse(zAddress, hostile);
    expect(result.success).toBe(false);
    expect(safeParse(zAddress, 'GABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEJXA').success).toBe(true);
  });
});
