// Stellar StrKeys through the reference library: `G…` accounts (ed25519 public keys), `C…`
// contracts, `S…` secret seeds.
import { Buffer } from 'buffer';
import { StrKey } from '@stellar/stellar-base';

export type AccountAddress = string;
export type ContractAddress = string;

// A facilitator checks the same few addresses (its asset, its channel contract, its sellers) on
// every request, and the library's base32 decoding is not cheap: remember recent verdicts.
const MEMO_MAX = 10_000;
const verdicts = new Map<string, boolean>();

function memoized(value: string, check: (v: string) => boolean): boolean {
  let ok = verdicts.get(value);
  if (ok === undefined) {
    ok = check(value);
    if (verdicts.size >= MEMO_MAX) verdicts.clear();
    verdicts.set(value, ok);
  }
  return ok;
}

export function isAccountAddress(value: unknown): value is AccountAddress {
  return (
    typeof value === 'string' &&
    value.length === 56 &&
    value[0] === 'G' &&
    memoized(value, (v) => StrKey.isValidEd25519PublicKey(v))
  );
}

export function isContractAddress(value: unknown): value is ContractAddress {
  return (
    typeof value === 'string' &&
    value.length === 56 &&
    value[0] === 'C' &&
    memoized(value, (v) => StrKey.isValidContract(v))
  );
}

/** Either an account or a contract (a smart account is a contract). */
export function isAddress(value: unknown): value is string {
  return isAccountAddress(value) || isContractAddress(value);
}

export function accountFromPublicKey(publicKey: Uint8Array): AccountAddress {
  return StrKey.encodeEd25519PublicKey(toBuffer(publicKey, 32));
}

export function publicKeyFromAccount(address: AccountAddress): Uint8Array {
  return new Uint8Array(StrKey.decodeEd25519PublicKey(address));
}

export function contractFromRaw(raw: Uint8Array): ContractAddress {
  return StrKey.encodeContract(toBuffer(raw, 32));
}

export function rawFromContract(address: ContractAddress): Uint8Array {
  return new Uint8Array(StrKey.decodeContract(address));
}

export function secretFromSeed(seed: Uint8Array): string {
  return StrKey.encodeEd25519SecretSeed(toBuffer(seed, 32));
}

export function seedFromSecret(secret: string): Uint8Array {
  if (!StrKey.isValidEd25519SecretSeed(secret)) throw new TypeError('not an S… secret seed');
  return new Uint8Array(StrKey.decodeEd25519SecretSeed(secret));
}

function toBuffer(bytes: Uint8Array, length: number) {
  if (bytes.length !== length) throw new TypeError(`expected ${length} bytes`);
  // stellar-base wants its Buffer ('buffer' is Node's own, or the npm polyfill in a browser build).
  return Buffer.from(bytes);
}
