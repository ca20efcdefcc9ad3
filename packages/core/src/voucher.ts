// The voucher (PROTOCOL.md §2): a payer's signature over a channel's cumulative amount.
//
//   message = "svc:voucher:v1" ‖ sha256(passphrase) ‖ contract id (32) ‖ channel id (u64 BE)
//             ‖ cumulative (i128 BE two's complement)          — 102 bytes
//   signature = ed25519(voucher key, sha256(message))
import { sha256 } from '#crypto';
import { concatBytes, i128be, u64be, utf8 } from './bytes.js';
import type { Ed25519Signer } from '#crypto';
import { verifyStrict, verifyStrictAsync } from './ed25519.js';
import { networkId } from './network.js';
import { contractFromRaw, rawFromContract } from './strkey.js';

export const VOUCHER_DOMAIN = 'svc:voucher:v1';
export const VOUCHER_MESSAGE_LENGTH = 102;

/** Binds vouchers to one network and one channel contract; build once, hash many. */
export interface VoucherContext {
  readonly networkPassphrase: string;
  readonly channelContract: string;
  message(channelId: bigint, cumulative: bigint): Uint8Array;
  hash(channelId: bigint, cumulative: bigint): Uint8Array;
  sign(signer: Ed25519Signer, channelId: bigint, cumulative: bigint): Uint8Array;
  verify(voucherKey: Uint8Array, channelId: bigint, cumulative: bigint, signature: Uint8Array): boolean;
  verifyAsync(voucherKey: Uint8Array, channelId: bigint, cumulative: bigint, signature: Uint8Array): Promise<boolean>;
}

/** `channelContract` is a `C…` address or its raw 32 bytes. */
export function voucherContext(networkPassphrase: string, channelContract: string | Uint8Array): VoucherContext {
  const raw = typeof channelContract === 'string' ? rawFromContract(channelContract) : channelContract;
  if (raw.length !== 32) throw new TypeError('a contract id is 32 bytes');
  const prefix = concatBytes(utf8(VOUCHER_DOMAIN), networkId(networkPassphrase), raw);
  const message = (channelId: bigint, cumulative: bigint) => concatBytes(prefix, u64be(channelId), i128be(cumulative));
  const hash = (channelId: bigint, cumulative: bigint) => sha256(message(channelId, cumulative));
  return {
    networkPassphrase,
    channelContract: typeof channelContract === 'string' ? channelContract : contractFromRaw(raw),
    message,
    hash,
    sign: (signer, channelId, cumulative) => signer.sign(hash(channelId, cumulative)),
    verify: (key, channelId, cumulative, sig) => verifyStrict(key, hash(channelId, cumulative), sig),
    verifyAsync: (key, channelId, cumulative, sig) => verifyStrictAsync(key, hash(channelId, cumulative), sig),
  };
}
