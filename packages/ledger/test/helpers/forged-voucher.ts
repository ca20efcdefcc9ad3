// A voucher forged against a mixed-order voucher key A = aB + T (T of order 8): with R = −hT
// and S = h·a, the cofactorless check [S]B = R + [h]A holds, so a lax verifier accepts it for
// about one message in eight. The key itself is legal (not of small order), so a channel opens
// with it; only verify_strict's refusal of a small-order R stops the forgery (docs/protocol.md#strict-verification).
import crypto from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { concatBytes, SMALL_ORDER_ENCODINGS, toHex } from '@svc/core';
import { VOUCHERS } from './actors.js';

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const SECRET_SCALAR = 987654321n;
const Point = ed25519.Point;
/** SMALL_ORDER_ENCODINGS[4] is a point of order exactly 8. */
const T = Point.fromBytes(SMALL_ORDER_ENCODINGS[4]!, true);

function littleEndian32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

function torsion(k: bigint) {
  let point = Point.ZERO;
  for (let i = 0n; i < k % 8n; i++) point = point.add(T);
  return point;
}

/** The mixed-order voucher key, as the 64 hex a channel is opened with. */
export const MIXED_ORDER_KEY = Point.BASE.multiply(SECRET_SCALAR).add(T).toBytes();
export const MIXED_ORDER_KEY_HEX = toHex(MIXED_ORDER_KEY);

export interface ForgedVoucher {
  cumulative: bigint;
  signature: Uint8Array;
  /** The hash that was "signed" (what verification checks). */
  hash: Uint8Array;
}

/** Searches cumulative amounts from `from` for one the forgery works on. */
export function forgeVoucher(channelId: bigint, from = 1n): ForgedVoucher {
  for (let cumulative = from; cumulative < from + 400n; cumulative++) {
    const hash = VOUCHERS.hash(channelId, cumulative);
    for (let k = 0n; k < 8n; k++) {
      const R = torsion(k);
      const rBytes = R.toBytes();
      const digest = crypto
        .createHash('sha512')
        .update(concatBytes(rBytes, MIXED_ORDER_KEY, hash))
        .digest();
      const h = BigInt('0x' + toHex(Uint8Array.from(digest).reverse())) % L;
      if (!torsion(h).negate().equals(R)) continue;
      return { cumulative, hash, signature: concatBytes(rBytes, littleEndian32((h * SECRET_SCALAR) % L)) };
    }
  }
  throw new Error('no forgeable cumulative found');
}
