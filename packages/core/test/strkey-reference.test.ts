// core's StrKeys against the reference library's: the same strings out, the same verdicts on
// well-formed, mistyped and foreign input. @stellar/stellar-base is here only as the reference.
import { StrKey } from '@stellar/stellar-base';
import { describe, expect, it } from 'vitest';
import {
  accountFromPublicKey,
  contractFromRaw,
  describeNonAddress,
  isAccountAddress,
  isContractAddress,
  publicKeyFromAccount,
  rawFromContract,
  secretFromSeed,
  seedFromSecret,
} from '@svc/core';

function keyOf(i: number): Uint8Array {
  return Uint8Array.from({ length: 32 }, (_, j) => (i * 131 + j * 17 + 7) % 256);
}

/** A string, each of a few characters changed, a character short, and lower case. */
function mistyped(s: string): string[] {
  const at = (k: number) => s.slice(0, k) + (s[k] === 'A' ? 'B' : 'A') + s.slice(k + 1);
  return [s, at(0), at(1), at(27), at(s.length - 1), s.slice(0, -1), s.toLowerCase(), `${s}A`];
}

describe('StrKeys as the reference library has them', () => {
  it('encodes G…, C… and S… as it does, and decodes them back', () => {
    for (let i = 0; i < 32; i++) {
      const key = keyOf(i);
      const buffer = Buffer.from(key);
      expect(accountFromPublicKey(key)).toBe(StrKey.encodeEd25519PublicKey(buffer));
      expect(contractFromRaw(key)).toBe(StrKey.encodeContract(buffer));
      expect(secretFromSeed(key)).toBe(StrKey.encodeEd25519SecretSeed(buffer));
      expect(publicKeyFromAccount(accountFromPublicKey(key))).toEqual(key);
      expect(rawFromContract(contractFromRaw(key))).toEqual(key);
      expect(seedFromSecret(secretFromSeed(key))).toEqual(key);
    }
  });

  it('gives its verdicts on addresses, seeds and muxed accounts, mistyped or not', () => {
    const samples: unknown[] = ['', 'hello', 42, null, 'G'.repeat(56), 'C'.repeat(56), 'S'.repeat(56)];
    for (let i = 0; i < 16; i++) {
      const key = Buffer.from(keyOf(i));
      samples.push(
        ...mistyped(StrKey.encodeEd25519PublicKey(key)),
        ...mistyped(StrKey.encodeContract(key)),
        ...mistyped(StrKey.encodeEd25519SecretSeed(key)),
        ...mistyped(StrKey.encodeMed25519PublicKey(Buffer.concat([key, Buffer.alloc(8, i)]))),
      );
    }
    const ours = samples.map((s) => [s, isAccountAddress(s), isContractAddress(s)]);
    const theirs = samples.map((s) => [
      s,
      typeof s === 'string' && StrKey.isValidEd25519PublicKey(s),
      typeof s === 'string' && StrKey.isValidContract(s),
    ]);
    expect(ours).toEqual(theirs);
    // The seeds and muxed accounts it recognises are the ones named (never shown) in messages.
    for (const s of samples) {
      if (typeof s !== 'string') continue;
      expect(describeNonAddress(s).startsWith('a secret seed')).toBe(StrKey.isValidEd25519SecretSeed(s));
      expect(describeNonAddress(s).startsWith('a muxed address')).toBe(StrKey.isValidMed25519PublicKey(s));
    }
  });

  it('refuses to decode what is not of its kind', () => {
    const key = keyOf(1);
    expect(() => publicKeyFromAccount(contractFromRaw(key))).toThrow(TypeError);
    expect(() => rawFromContract(accountFromPublicKey(key))).toThrow(TypeError);
    expect(() => seedFromSecret(accountFromPublicKey(key))).toThrow('not an S… secret seed');
    expect(() => accountFromPublicKey(key.subarray(0, 31))).toThrow('expected 32 bytes');
  });
});
