// Stellar StrKeys (SEP-0023): `G…` accounts (ed25519 public keys), `C…` contracts, `S…` secret
// seeds, and `M…` muxed accounts (only recognised, to say what was given). One implementation, and
// it runs in the browser too (the console checks addresses as it is given them): base32 (RFC 4648,
// no padding, @scure/base) of a version byte, the payload, and a CRC16-XModem of those bytes,
// little-endian. @stellar/stellar-base's StrKey computes the same, but wants a Buffer polyfill and
// would grow the console's bundle six times over; test/strkey-reference.test.ts holds this one to
// its verdicts and encodings.
import { base32nopad } from '@scure/base';

export type AccountAddress = string;
export type ContractAddress = string;

/** Version bytes by kind: the first base32 character of each is its letter. */
const VERSION = { account: 6 << 3, muxed: 12 << 3, seed: 18 << 3, contract: 2 << 3 } as const;
type Kind = keyof typeof VERSION;
/** Payload bytes by kind: an ed25519 key, or a contract id, and for a muxed account its 8-byte id too. */
const PAYLOAD: Record<Kind, number> = { account: 32, muxed: 40, seed: 32, contract: 32 };
/** Characters by kind: base32 of version, payload and checksum. */
const LENGTH: Record<Kind, number> = { account: 56, muxed: 69, seed: 56, contract: 56 };

function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function encodeCheck(kind: Kind, payload: Uint8Array): string {
  if (payload.length !== PAYLOAD[kind]) throw new TypeError(`expected ${PAYLOAD[kind]} bytes`);
  const body = new Uint8Array(1 + payload.length + 2);
  body[0] = VERSION[kind];
  body.set(payload, 1);
  const crc = crc16Xmodem(body.subarray(0, 1 + payload.length));
  body[1 + payload.length] = crc & 0xff;
  body[2 + payload.length] = crc >> 8;
  return base32nopad.encode(body);
}

/** The payload of a StrKey of this kind; null when `value` is not one (kind, length, characters or checksum). */
function decodeCheck(kind: Kind, value: unknown): Uint8Array | null {
  if (typeof value !== 'string' || value.length !== LENGTH[kind]) return null;
  let bytes: Uint8Array;
  try {
    // Strict: upper case only, and no bits set past the last byte.
    bytes = base32nopad.decode(value);
  } catch {
    return null;
  }
  const n = PAYLOAD[kind];
  if (bytes.length !== 1 + n + 2 || bytes[0] !== VERSION[kind]) return null;
  const crc = crc16Xmodem(bytes.subarray(0, 1 + n));
  if (bytes[1 + n] !== (crc & 0xff) || bytes[2 + n] !== crc >> 8) return null;
  return bytes.slice(1, 1 + n);
}

function decodeOrThrow(kind: Kind, value: string): Uint8Array {
  const payload = decodeCheck(kind, value);
  if (!payload) throw new TypeError(`not a valid ${kind} StrKey`);
  return payload;
}

// A facilitator checks the same few addresses (its asset, its channel contract, its sellers) on
// every request, and a check decodes base32 and sums it (~4 µs; a lookup here ~0.1): remember
// recent verdicts.
const MEMO_MAX = 10_000;
const verdicts = new Map<string, boolean>();

/** The verdicts share one memo: the first letter, which the version byte makes, tells the kinds apart. */
function memoized(kind: 'account' | 'contract', value: unknown): boolean {
  if (typeof value !== 'string' || value.length !== LENGTH[kind]) return false;
  if (value[0] !== (kind === 'account' ? 'G' : 'C')) return false;
  let ok = verdicts.get(value);
  if (ok === undefined) {
    ok = decodeCheck(kind, value) !== null;
    if (verdicts.size >= MEMO_MAX) verdicts.clear();
    verdicts.set(value, ok);
  }
  return ok;
}

export function isAccountAddress(value: unknown): value is AccountAddress {
  return memoized('account', value);
}

export function isContractAddress(value: unknown): value is ContractAddress {
  return memoized('contract', value);
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
  if (decodeCheck('seed', value))
    return 'a secret seed (S…), not shown: never hand it to anyone; give the account’s public address (G…) instead';
  if (decodeCheck('muxed', value)) return 'a muxed address (M…): give its account’s G… address';
  if (/^[GC][A-Z2-7]*$/.test(value) && value.length <= 60)
    return `${JSON.stringify(value)}, which is not a valid G… or C… address (wrong length or checksum)`;
  if (/^[0-9a-fA-F]{64}$/.test(value)) return '64 hexadecimal digits (not shown: they may be a raw key)';
  return `a string of ${value.length} characters (not shown)`;
}

export function accountFromPublicKey(publicKey: Uint8Array): AccountAddress {
  return encodeCheck('account', publicKey);
}

export function publicKeyFromAccount(address: AccountAddress): Uint8Array {
  return decodeOrThrow('account', address);
}

export function contractFromRaw(raw: Uint8Array): ContractAddress {
  return encodeCheck('contract', raw);
}

export function rawFromContract(address: ContractAddress): Uint8Array {
  return decodeOrThrow('contract', address);
}

export function secretFromSeed(seed: Uint8Array): string {
  return encodeCheck('seed', seed);
}

export function seedFromSecret(secret: string): Uint8Array {
  const seed = decodeCheck('seed', secret);
  if (!seed) throw new TypeError('not an S… secret seed');
  return seed;
}
