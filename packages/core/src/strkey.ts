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

/**
 * What was given where an address was expected, for an error message, without ever showing a
 * secret: a secret seed is named, not printed (it is what a newcomer most often pastes by mistake),
 * and so is any other string that could be a key in another form. Only what cannot be secret —
 * a mistyped `G…`/`C…` address — is shown.
 */
export function describeNonAddress(value: unknown): string {
  if (value === undefined || value === null) return 'nothing';
  if (typeof value !== 'string') return `a ${typeof value}`;
  if (value === '') return 'an empty string';
  if (value.length === 56 && value[0] === 'S' && StrKey.isValidEd25519SecretSeed(value))
    return 'a secret seed (S…), not shown: never hand it to anyone; give the account’s public address (G…) instead';
  if (value.length === 69 && value[0] === 'M' && StrKey.isValidMed25519PublicKey(value))
    return 'a muxed address (M…): give its account’s G… address';
  if (/^[GC][A-Z2-7]*$/.test(value) && value.length <= 60)
    return `${JSON.stringify(value)}, which is not a valid G… or C… address (wrong length or checksum)`;
  if (/^[0-9a-fA-F]{64}$/.test(value)) return '64 hexadecimal digits (not shown: they may be a raw key)';
  return `a string of ${value.length} characters (not shown)`;
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
