// Hex takes Node's Buffer where there is one and the portable code elsewhere: both must give the
// same text, and a kept hex string must cost its length, not a tree of the pieces it was built
// from (a voucher's signature built with `+=` kept ~1.9 KB of heap instead of ~150 bytes).
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { toHexPortable } from '../src/bytes-portable.js';
import { fromHex, randomBytes, toHex } from '../src/index.js';

/** V8's collector, for this test only: the flag exposes `gc` to contexts made after it is set. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

describe('hex', () => {
  it('encodes like the portable code, for every length and at an offset into a larger buffer', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = randomBytes(n);
      expect(toHex(bytes)).toBe(toHexPortable(bytes));
      expect(toHex(bytes)).toBe(Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(''));
      const inner = randomBytes(n + 9).subarray(5, 5 + n);
      expect(toHex(inner)).toBe(toHexPortable(inner));
      expect(fromHex(toHex(inner))).toEqual(inner);
    }
  });

  for (const [name, encode] of [
    ['toHex', toHex],
    ['the portable code', toHexPortable],
  ] as const) {
    it(`${name}: a kept 64-byte signature's hex costs about its 128 characters of heap`, () => {
      const gc = collector();
      const signatures = Array.from({ length: 64 }, () => randomBytes(64));
      const kept: string[] = [];
      gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 20_000; i++) kept.push(encode(signatures[i % 64]!));
      gc();
      const perString = (process.memoryUsage().heapUsed - before) / kept.length;
      expect(kept[0]).toHaveLength(128);
      // A flat one-byte string of 128 characters is ~150 bytes, plus the array's slot; a string
      // built of 64 concatenations is ~1,900.
      expect(perString).toBeLessThan(400);
    });
  }
});
