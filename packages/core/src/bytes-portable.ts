// Base64 and hex without Node's Buffer (browsers), for bytes.ts; not part of the package's API.

/** toBase64 without Buffer (browsers); the test holds both to the same text. */
export function toBase64Portable(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/** fromBase64 of padded text without Buffer (browsers). */
export function fromBase64Portable(padded: string): Uint8Array {
  const bin = atob(padded);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const HEX_PAIRS = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/**
 * toHex without Buffer (browsers); the test holds both to the same text. One join, not `+=`: a
 * string built of 64 concatenations is kept as a tree of them (~1.9 KB for a signature's 128
 * characters) until something flattens it. That is why this is not @noble/hashes' bytesToHex
 * (fromHex's decoder): without the engine's own Uint8Array.prototype.toHex it builds with `+=`,
 * measured at 1.9 KB a kept signature on Node 20.
 */
export function toHexPortable(bytes: Uint8Array): string {
  const pairs = new Array<string>(bytes.length);
  for (let i = 0; i < bytes.length; i++) pairs[i] = HEX_PAIRS[bytes[i]!]!;
  return pairs.join('');
}
