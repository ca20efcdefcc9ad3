import { describe, expect, it } from 'vitest';
import {
  accountFromPublicKey, contractFromRaw, fromHex, isAccountAddress, isAddress, isContractAddress,
  keypairFromSecret, publicKeyFromAccount, rawFromContract,
} from '@svc/core';

describe('StrKeys', () => {
  const raw = fromHex('02'.repeat(32), 32);

  it('encodes and decodes G… accounts and C… contracts', () => {
    const g = accountFromPublicKey(raw);
    const c = contractFromRaw(raw);
    expect(g).toBe('GABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEJXA');
    expect(c).toBe('CABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAFNSZ');
    expect(publicKeyFromAccount(g)).toEqual(raw);
    expect(rawFromContract(c)).toEqual(raw);
    expect([isAccountAddress(g), isContractAddress(g), isAddress(g)]).toEqual([true, false, true]);
    expect([isAccountAddress(c), isContractAddress(c), isAddress(c)]).toEqual([false, true, true]);
  });

  it('refuses a bad checksum, a wrong kind and junk', () => {
    const g = accountFromPublicKey(raw);
    expect(isAccountAddress(g.slice(0, -1) + (g.endsWith('A') ? 'B' : 'A'))).toBe(false);
    expect(isAddress('hello')).toBe(false);
    expect(isAddress(42)).toBe(false);
    expect(() => keypairFromSecret(g)).toThrow();
  });

  it('keypairs round-trip through S… secrets and hex seeds', () => {
    const a = keypairFromSecret('01'.repeat(32));
    const b = keypairFromSecret(a.secret());
    expect(b.address).toBe(a.address);
    expect(a.secret()).toMatch(/^S[A-Z2-7]{55}$/);
  });
});
