// Byte helpers that work the same in Node and in browsers. Base64 and hex use Node's Buffer where
// there is one (every paid answer's PAYMENT-RESPONSE header is base64: ~10× faster than btoa over
// a string of char codes) and the portable code elsewhere; both give the same text.
import { hexToBytes } from '@noble/hashes/utils.js';
import { fromBase64Portable, toBase64Portable, toHexPortable } from './bytes-portable.js';

interface NodeBufferLike {
  from(bytes: ArrayBufferLike, offset: number, length: number): { toString(encoding: 'base64' | 'hex'): string };
  from(text: string, encoding: 'base64'): Uint8Array;
}
const NodeBuffer = (globalThis as { Buffer?: NodeBufferLike }).Buffer;

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Lowercase hex, as one flat string (see toHexPortable). */
export function toHex(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return toHexPortable(bytes);
}

/** Decodes hex of an exact byte length (either case); throws on anything else. */
export function fromHex(hex: string, length?: number): Uint8Array {
  if (typeof hex !== 'string' || hex.length % 2 !== 0) throw new TypeError('not hex');
  if (length !== undefined && hex.length !== length * 2) throw new TypeError(`expected ${length} bytes of hex`);
  try {
    // Strict: ASCII hex digits only, either case (Node's Buffer would stop at the first other one).
    return hexToBytes(hex);
  } catch {
    throw new TypeError('not hex');
  }
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Strict UTF-8 decoding: invalid sequences throw instead of becoming U+FFFD. */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Standard base64 (RFC 4648 §4, with `+/=`). */
export function toBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return toBase64Portable(bytes);
}

/** Standard base64; padding may be omitted. Throws on any other character. */
export function fromBase64(text: string): Uint8Array {
  if (!BASE64_RE.test(text) || text.length % 4 === 1) throw new TypeError('not base64');
  const padded = text.padEnd(text.length + ((4 - (text.length % 4)) % 4), '=');
  // More than two pad characters ("abcde=" padded) is not base64: atob refuses it, so must we.
  if (padded.endsWith('===')) throw new TypeError('not base64');
  if (NodeBuffer) return new Uint8Array(NodeBuffer.from(padded, 'base64'));
  return fromBase64Portable(padded);
}

/** u64 big-endian. */
export function u64be(value: bigint): Uint8Array {
  if (value < 0n || value > 0xffff_ffff_ffff_ffffn) throw new RangeError('u64 out of range');
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value);
  return out;
}

/** i128 big-endian two's complement. */
export function i128be(value: bigint): Uint8Array {
  const out = new Uint8Array(16);
  const view = new DataView(out.buffer);
  const twos = BigInt.asUintN(128, value);
  view.setBigUint64(0, twos >> 64n);
  view.setBigUint64(8, twos & 0xffff_ffff_ffff_ffffn);
  return out;
}
