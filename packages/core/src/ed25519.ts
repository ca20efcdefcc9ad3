// Strict ed25519, the set Soroban's `ed25519_verify` (ed25519-dalek `verify_strict`) accepts and
// no more (docs/protocol.md#strict-verification):
// - the public key A must decode canonically and must not be of small order (isStrictPublicKey
//   when a channel is opened or first cached; and on every verify, cheaply, by its encoding);
// - R must be canonical and not of small order, and S below the group order L (checked on every
//   signature, cheaply, before the backend's verify).
// Node's verify alone accepts the identity key with R = identity and S = 0 for every message.
import { ed25519 } from '@noble/curves/ed25519.js';
import { ed25519Verify, ed25519VerifyAsync } from '#crypto';
import { equalBytes, fromHex } from './bytes.js';

const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/**
 * The encodings of the eight points of small order, plus the two that set the sign bit on a
 * point whose x is 0 (non-canonical, still small order). Every other non-canonical encoding has
 * y ≥ p and is refused by the range check. The test regenerates this list from the curve.
 */
export const SMALL_ORDER_ENCODINGS: readonly Uint8Array[] = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  '0100000000000000000000000000000000000000000000000000000000000080',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
].map((hex) => fromHex(hex, 32));

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

function isSmallOrderEncoding(point: Uint8Array): boolean {
  return SMALL_ORDER_ENCODINGS.some((bad) => equalBytes(bad, point));
}

/** y (the low 255 bits, little-endian) below p = 2^255 − 19: the encoding is canonical. */
function isCanonicalY(point: Uint8Array): boolean {
  if ((point[31]! & 0x7f) !== 0x7f) return true;
  for (let i = 30; i >= 1; i--) if (point[i] !== 0xff) return true;
  return point[0]! < 0xed;
}

/**
 * The cheap check of a public key on every verify: 32 bytes, y canonical, not of small order. A key
 * that passes but is not on the curve fails the backend's verify. With A of small order, R = [s]B
 * and S = s verify for every message (A the identity) under a cofactorless verifier such as
 * node:crypto's, so no caller may skip it.
 */
function hasStrictKeyShape(publicKey: Uint8Array): boolean {
  return publicKey.length === 32 && isCanonicalY(publicKey) && !isSmallOrderEncoding(publicKey);
}

/** A strictly valid ed25519 public key: canonical, on the curve, not of small order. */
export function isStrictPublicKey(publicKey: Uint8Array): boolean {
  if (publicKey.length !== 32 || isSmallOrderEncoding(publicKey)) return false;
  try {
    const point = ed25519.Point.fromBytes(publicKey, false);
    return !point.isSmallOrder();
  } catch {
    return false;
  }
}

/** The cheap per-signature checks: R canonical and not small order, S < L. */
export function hasStrictSignatureShape(signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  const r = signature.subarray(0, 32);
  if (!isCanonicalY(r) || isSmallOrderEncoding(r)) return false;
  return littleEndian(signature.subarray(32)) < L;
}

/** Strict verification: what the chain's verify_strict accepts, whatever key the caller passes. */
export function verifyStrict(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return (
    hasStrictKeyShape(publicKey) && hasStrictSignatureShape(signature) && ed25519Verify(publicKey, message, signature)
  );
}

/** verifyStrict with the curve work off the calling thread where the backend can (Node). */
export async function verifyStrictAsync(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  if (!hasStrictKeyShape(publicKey) || !hasStrictSignatureShape(signature)) return false;
  return ed25519VerifyAsync(publicKey, message, signature);
}
