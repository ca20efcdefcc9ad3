import { describe, expect, it } from 'vitest';
import {
  accountFromPublicKey,
  contractFromRaw,
  describeNonAddress,
  fromHex,
  isAccountAddress,
  isAddress,
  isContractAddress,
  keypairFromSecret,
  publicKeyFromAccount,
  rawFromContract,
  secretFromSeed,
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

  it('takes each of 128 valid addresses and refuses every altered one', () => {
    const samples: unknown[] = ['hello', 42, '', 'G'.repeat(56), 'S' + 'A'.repeat(55)];
    for (let i = 0; i < 64; i++) {
      const key = fromHex(((i * 37 + 11) % 256).toString(16).padStart(2, '0').repeat(32), 32);
      for (const address of [accountFromPublicKey(key), contractFromRaw(key)]) {
        // Itself, each of three characters changed, and the other kind's prefix.
        samples.push(
          address,
          address.slice(0, -1) + (address.endsWith('A') ? 'B' : 'A'),
          address.slice(0, 20) + (address[20] === 'Q' ? 'R' : 'Q') + address.slice(21),
        );
        samples.push((address[0] === 'G' ? 'C' : 'G') + address.slice(1), address.slice(0, 55));
      }
    }
    expect(samples.filter((s) => isAddress(s)).length).toBe(128);
  });
});

describe('describeNonAddress', () => {
  const secret = secretFromSeed(new Uint8Array(32).fill(7));
  it('names a secret seed without showing it, and says what to pass instead', () => {
    const said = describeNonAddress(secret);
    expect(said).not.toContain(secret.slice(1, 12));
    expect(said).toMatch(/secret seed \(S…\)/);
    expect(said).toMatch(/G…/);
  });
  it('shows what cannot be a secret: a short or mistyped public address', () => {
    expect(describeNonAddress('GABC')).toBe('"GABC", which is not a valid G… or C… address (wrong length or checksum)');
    expect(describeNonAddress(42)).toBe('a number');
    expect(describeNonAddress('')).toBe('an empty string');
  });
  it('shows no other string: it may be a key in another form', () => {
    const hex = 'ab'.repeat(32);
    expect(describeNonAddress(hex)).toBe('64 hexadecimal digits (not shown: they may be a raw key)');
    expect(describeNonAddress('correct horse battery staple')).toBe('a string of 28 characters (not shown)');
  });
});
