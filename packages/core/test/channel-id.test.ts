// A channel's id is derived from its voucher key (channelIdOf): the fixed vector, computed once and
// written down (fixtures/channel-id-vector.json), an independent reimplementation over random keys,
// and the §2 voucher vector, which the derived ids leave exactly as it was.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CHANNEL_ID_DOMAIN,
  channelIdOf,
  contractFromRaw,
  fromHex,
  keypairFromSeed,
  randomKeypair,
  toHex,
  U64_MAX,
  voucherContext,
} from '@svc/core';
import * as web from '../src/crypto-web.ts';
import vector from './fixtures/channel-id-vector.json' with { type: 'json' };
import voucherVector from './fixtures/voucher-vector.json' with { type: 'json' };

const CONTRACT = fromHex(vector.contractIdRawHex, 32);
const KEY = fromHex(vector.voucherPublicKeyHex, 32);

/** The formula written out with node:crypto alone, to check channelIdOf against. */
function reference(passphrase: string, contract: Uint8Array, key: Uint8Array): bigint {
  const networkId = crypto.createHash('sha256').update(passphrase).digest();
  const digest = crypto
    .createHash('sha256')
    .update(Buffer.concat([Buffer.from('svc:channel-id:v1'), networkId, contract, key]))
    .digest();
  return 1n + (digest.readBigUInt64BE(0) % (2n ** 64n - 1n));
}

describe('channelIdOf', () => {
  it('reproduces the vector on the local network and on testnet, from raw bytes or the C… address', () => {
    for (const net of [vector.local, vector.testnet]) {
      expect(channelIdOf(net.networkPassphrase, CONTRACT, KEY)).toBe(BigInt(net.channelId));
      expect(channelIdOf(net.networkPassphrase, contractFromRaw(CONTRACT), KEY)).toBe(BigInt(net.channelId));
      // The preimage and digest the vector writes down, through the browser backend too.
      expect(toHex(web.sha256(fromHex(net.preimageHex)))).toBe(net.digestHex);
      expect(BigInt(`0x${net.digestHex.slice(0, 16)}`) % (2n ** 64n - 1n)).toBe(BigInt(net.channelId) - 1n);
    }
    expect(vector.local.preimageHex.startsWith(toHex(new TextEncoder().encode(CHANNEL_ID_DOMAIN)))).toBe(true);
    expect(vector.local.preimageHex.length).toBe((17 + 32 + 32 + 32) * 2);
  });

  it('is the vector key’s: the §2 voucher seed 01…01', () => {
    const keys = keypairFromSeed(fromHex(voucherVector.voucherSecretSeedHex, 32));
    expect(keys.publicKeyHex).toBe(vector.voucherPublicKeyHex);
  });

  it('matches an independent implementation for random keys and stays within 1 … 2^64 − 1', () => {
    for (let i = 0; i < 200; i++) {
      const key = randomKeypair().publicKey;
      const contract = crypto.randomBytes(32);
      const id = channelIdOf(vector.local.networkPassphrase, contract, key);
      expect(id).toBe(reference(vector.local.networkPassphrase, contract, key));
      expect(id >= 1n && id <= U64_MAX).toBe(true);
    }
  });

  it('differs per network, per contract and per key', () => {
    const ids = new Set([
      channelIdOf(vector.local.networkPassphrase, CONTRACT, KEY),
      channelIdOf(vector.testnet.networkPassphrase, CONTRACT, KEY),
      channelIdOf(vector.local.networkPassphrase, new Uint8Array(32).fill(3), KEY),
      channelIdOf(vector.local.networkPassphrase, CONTRACT, randomKeypair().publicKey),
    ]);
    expect(ids.size).toBe(4);
  });

  it('refuses a key or contract id that is not 32 bytes', () => {
    expect(() => channelIdOf(vector.local.networkPassphrase, CONTRACT, KEY.subarray(1))).toThrow(/32 bytes/);
    expect(() => channelIdOf(vector.local.networkPassphrase, CONTRACT.subarray(1), KEY)).toThrow(/32 bytes/);
  });
});

describe('the §2 voucher vector', () => {
  it('is unchanged: the same message, hash and signatures as before channel ids were derived', () => {
    // Written out here as well as in the fixture, so that neither can drift alone.
    expect(voucherVector.expected.hashHex).toBe('ee5ff2d816f0d9d7bf8306ffeff2b9a8461c0e70731d7f4a8b3b68ebfe992d53');
    expect(voucherVector.testnet.signatureHex).toBe(
      'dcf9935d2aafb0a5662a6889cc1ecb40e7557ac6f3b68df97ea77315014163915f34222e31fdccf94e0eb91c4f36fefc560612719963d4205d5945866ad4a307',
    );
    const keys = keypairFromSeed(fromHex(voucherVector.voucherSecretSeedHex, 32));
    const local = voucherContext(voucherVector.networkPassphrase, fromHex(voucherVector.contractIdRawHex, 32));
    const [channelId, cumulative] = [BigInt(voucherVector.channelId), BigInt(voucherVector.cumulative)];
    expect(toHex(local.hash(channelId, cumulative))).toBe(voucherVector.expected.hashHex);
    expect(toHex(local.sign(keys, channelId, cumulative))).toBe(voucherVector.expected.signatureHex);
  });
});
