// Base64 takes Node's Buffer where there is one and the portable code elsewhere: both must give
// the same text, accept the same inputs and refuse the same ones.
import { describe, expect, it } from 'vitest';
import { fromBase64Portable, toBase64Portable } from '../src/bytes-portable.js';
import { fromBase64, randomBytes, toBase64 } from '../src/index.js';

describe('base64', () => {
  it('encodes like the portable code, for every length and at an offset into a larger buffer', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = randomBytes(n);
      expect(toBase64(bytes)).toBe(toBase64Portable(bytes));
      const inner = randomBytes(n + 9).subarray(5, 5 + n);
      expect(toBase64(inner)).toBe(toBase64Portable(inner));
      expect(fromBase64(toBase64(inner))).toEqual(inner);
    }
  });

  it('decodes with and without padding, as the portable code does', () => {
    for (const text of ['', 'YQ', 'YQ=', 'YQ==', 'YWI', 'YWI=', 'YWJj', '+/+/', 'AAECAwQ']) {
      const padded = text.padEnd(text.length + ((4 - (text.length % 4)) % 4), '=');
      expect(fromBase64(text)).toEqual(fromBase64Portable(padded));
    }
  });

  it('refuses what is not base64', () => {
    for (const text of ['a', 'abcde', 'abcde=', 'a===', 'ab=c', 'ab c', 'ab-_', '====', 'YQ===']) {
      expect(() => fromBase64(text), text).toThrow(TypeError);
    }
  });
});
