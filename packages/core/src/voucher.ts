// The voucher (docs/protocol.md#voucher): a payer's signature over a channel's cumulative amount.
//
//   message = "svc:voucher:v1" ‖ sha256(passphrase) ‖ contract id (32) ‖ channel id (u64 BE)
//             ‖ cumulative (i128 BE two's complement)          — 102 bytes
//   signature = ed25519(voucher key, sha256(message))
//
// And the channel id itself, which the contract derives from the voucher key so that a buyer
// knows it before the opening lands (and can sign a voucher in the same request as the deposit):
//
//   digest = sha256("svc:channel-id:v1" ‖ sha256(passphrase) ‖ contract id (32) ‖ voucher key (32))
//   channel id = 1 + (u64 BE of digest[0..8]) mod (2^64 − 1)      — never 0, at most 2^64 − 1
import { sha256 } from '#crypto';
import { concatBytes, i128be, u64be, utf8 } from './bytes.js';
import type { Ed25519Signer } from '#crypto';
import { verifyStrict, verifyStrictAsync } from './ed25519.js';
import { networkId } from './network.js';
import { contractFromRaw, rawFromContract } from './strkey.js';

export const VOUCHER_DOMAIN = 'svc:voucher:v1';
export const VOUCHER_MESSAGE_LENGTH = 102;
export const CHANNEL_ID_DOMAIN = 'svc:channel-id:v1';

const U64_MODULUS = (1n << 64n) - 1n;

function contractRaw(channelContract: string | Uint8Array): Uint8Array {
  const raw = typeof channelContract === 'string' ? rawFromContract(channelContract) : channelContract;
  if (raw.length !== 32) throw new TypeError('a contract id is 32 bytes');
  return raw;
}

/**
 * The id the channel contract gives a channel opened with `voucherKey` (32 bytes), on this network
 * and contract. One voucher key names one channel: the contract refuses a second opening with it.
 */
export function channelIdOf(
  networkPassphrase: string,
  channelContract: string | Uint8Array,
  voucherKey: Uint8Array,
): bigint {
  if (voucherKey.length !== 32) throw new TypeError('a voucher key is 32 bytes');
  const digest = sha256(
    concatBytes(utf8(CHANNEL_ID_DOMAIN), networkId(networkPassphrase), contractRaw(channelContract), voucherKey),
  );
  const prefix = new DataView(digest.buffer, digest.byteOffset, 8).getBigUint64(0);
  return 1n + (prefix % U64_MODULUS);
}

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
  const raw = contractRaw(channelContract);
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
