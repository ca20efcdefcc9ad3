// The test vectors of the Stellar binding of x402 batch-settlement
// (docs/schemes/scheme_batch_settlement_stellar.vectors.json), run against svc's own code: the file
// is exactly what scripts/binding-vectors.ts makes, and every vector holds — the network ids, the
// keys, the channel ids (recomputed here from the digest by the formula the binding states), the
// voucher messages, digests and signatures, strict ed25519 verification, and the voucher payload.
// The corrective cases' outcomes are run through the buyer's client in
// packages/x402/test/binding-vectors.test.ts.
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BatchRequirementsSchema,
  CHANNEL_ID_DOMAIN,
  VOUCHER_DOMAIN,
  VOUCHER_MESSAGE_LENGTH,
  accountFromPublicKey,
  channelIdOf,
  concatBytes,
  decodeBatchPayment,
  fromHex,
  keypairFromSeed,
  networkId,
  sha256,
  toHex,
  utf8,
  verifyStrict,
  verifyStrictAsync,
  voucherContext,
} from '@svc/core';
import { VECTORS_FILE, renderBindingVectors } from '../../../scripts/binding-vectors.ts';

const file = new URL(`../../../${VECTORS_FILE}`, import.meta.url);
const text = readFileSync(file, 'utf8');
const vectors = JSON.parse(text);

interface ChannelIdVector {
  networkPassphrase: string;
  channelContractRawHex: string;
  voucherPublicKeyHex: string;
  preimageHex: string;
  digestHex: string;
  channelId: string;
}
interface VoucherVector {
  networkPassphrase: string;
  channelContractRawHex: string;
  channelId: string;
  maxClaimableAmount: string;
  voucherSeedHex: string;
  voucherPublicKeyHex: string;
  messageHex: string;
  digestHex: string;
  signatureHex: string;
}
interface StrictVector {
  name: string;
  digestHex: string;
  publicKeyHex: string;
  signatureHex: string;
  valid: boolean;
}

/** A raw ed25519 verification with no strictness of its own (OpenSSL's, through node:crypto). */
function laxVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicKey)]);
  try {
    const keyObject = crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
    return crypto.verify(null, message, keyObject, signature);
  } catch {
    return false;
  }
}

describe('binding test vectors', () => {
  it('are exactly what scripts/binding-vectors.ts makes from svc’s code', () => {
    expect(text).toBe(renderBindingVectors());
  });

  it('give each network id as sha256 of its passphrase', () => {
    expect(vectors.networks).toHaveLength(2);
    for (const n of vectors.networks as { networkPassphrase: string; networkIdHex: string }[]) {
      expect(toHex(networkId(n.networkPassphrase))).toBe(n.networkIdHex);
      expect(toHex(sha256(utf8(n.networkPassphrase)))).toBe(n.networkIdHex);
    }
  });

  it('give each fixed key’s public key and G… address', () => {
    for (const k of vectors.keys as { seedHex: string; publicKeyHex: string; address: string }[]) {
      const keys = keypairFromSeed(fromHex(k.seedHex, 32));
      expect(keys.publicKeyHex).toBe(k.publicKeyHex);
      expect(accountFromPublicKey(fromHex(k.publicKeyHex, 32))).toBe(k.address);
    }
  });

  it('derive each channel id from its voucher key: 1 + (first 8 digest bytes, big-endian) mod (2^64 − 1)', () => {
    const cases = vectors.channelIds as ChannelIdVector[];
    expect(cases.length).toBe(4);
    for (const c of cases) {
      const contract = fromHex(c.channelContractRawHex, 32);
      const key = fromHex(c.voucherPublicKeyHex, 32);
      const preimage = concatBytes(utf8(CHANNEL_ID_DOMAIN), networkId(c.networkPassphrase), contract, key);
      expect(toHex(preimage)).toBe(c.preimageHex);
      expect(preimage.length).toBe(17 + 32 + 32 + 32);
      const digest = sha256(preimage);
      expect(toHex(digest)).toBe(c.digestHex);
      const head = BigInt(`0x${c.digestHex.slice(0, 16)}`);
      expect((1n + (head % ((1n << 64n) - 1n))).toString()).toBe(c.channelId);
      expect(channelIdOf(c.networkPassphrase, contract, key).toString()).toBe(c.channelId);
    }
    // The same key names different channels on different networks.
    expect(new Set(cases.map((c) => c.channelId)).size).toBe(cases.length);
  });

  it('give each voucher’s 102-byte message, its sha256 and the deterministic ed25519 signature of that digest', () => {
    const cases = vectors.vouchers as VoucherVector[];
    expect(cases.length).toBe(5);
    for (const v of cases) {
      const contract = fromHex(v.channelContractRawHex, 32);
      const channelId = BigInt(v.channelId);
      const amount = BigInt(v.maxClaimableAmount);
      const ctx = voucherContext(v.networkPassphrase, contract);
      const message = fromHex(v.messageHex, VOUCHER_MESSAGE_LENGTH);
      // The layout, field by field.
      expect(toHex(message.subarray(0, 14))).toBe(toHex(utf8(VOUCHER_DOMAIN)));
      expect(toHex(message.subarray(14, 46))).toBe(toHex(networkId(v.networkPassphrase)));
      expect(toHex(message.subarray(46, 78))).toBe(v.channelContractRawHex);
      expect(BigInt(`0x${toHex(message.subarray(78, 86))}`)).toBe(channelId);
      expect(BigInt(`0x${toHex(message.subarray(86, 102))}`)).toBe(amount);
      expect(toHex(ctx.message(channelId, amount))).toBe(v.messageHex);
      expect(toHex(sha256(message))).toBe(v.digestHex);
      expect(toHex(ctx.hash(channelId, amount))).toBe(v.digestHex);
      const keys = keypairFromSeed(fromHex(v.voucherSeedHex, 32));
      expect(keys.publicKeyHex).toBe(v.voucherPublicKeyHex);
      expect(toHex(keys.sign(fromHex(v.digestHex, 32)))).toBe(v.signatureHex);
      expect(ctx.verify(keys.publicKey, channelId, amount, fromHex(v.signatureHex, 64))).toBe(true);
    }
  });

  it('pin channel-contract.md’s testnet voucher (channel 42, 135000)', () => {
    const v = (vectors.vouchers as (VoucherVector & { network: string })[]).find(
      (x) => x.channelId === '42' && x.network === 'stellar:testnet',
    );
    expect(v?.digestHex.startsWith('94b6447f')).toBe(true);
    expect(v?.digestHex.endsWith('2ccc')).toBe(true);
    expect(v?.signatureHex.startsWith('dcf9935d')).toBe(true);
    expect(v?.signatureHex.endsWith('a307')).toBe(true);
  });

  it('verify strictly: only the valid case passes, sync and async', async () => {
    const cases = vectors.strictVerification as StrictVector[];
    expect(cases.filter((c) => c.valid).map((c) => c.name)).toEqual(['valid']);
    for (const c of cases) {
      const key = fromHex(c.publicKeyHex, 32);
      const digest = fromHex(c.digestHex, 32);
      const sig = fromHex(c.signatureHex, 64);
      expect([c.name, verifyStrict(key, digest, sig)]).toEqual([c.name, c.valid]);
      expect([c.name, await verifyStrictAsync(key, digest, sig)]).toEqual([c.name, c.valid]);
    }
  });

  it('include a small-order key that a cofactorless verifier accepts, which strict verification refuses', () => {
    const c = (vectors.strictVerification as StrictVector[]).find((x) => x.name === 'small_order_key')!;
    const key = fromHex(c.publicKeyHex, 32);
    const sig = fromHex(c.signatureHex, 64);
    // The forgery holds for any message, not only this digest.
    expect(laxVerify(key, fromHex(c.digestHex, 32), sig)).toBe(true);
    expect(laxVerify(key, utf8('anything at all'), sig)).toBe(true);
    expect(verifyStrict(key, fromHex(c.digestHex, 32), sig)).toBe(false);
  });

  it('give a voucher payload that svc decodes to its channel, ceiling and signature, under terms svc parses', () => {
    const { paymentPayload, decoded } = vectors.voucherPayload as {
      paymentPayload: { accepted: unknown; payload: { voucher: { signature: string } } };
      decoded: { channelId: string; maxClaimableAmount: string; kind: string };
    };
    expect(BatchRequirementsSchema.safeParse(vectors.paymentRequirements).success).toBe(true);
    expect(BatchRequirementsSchema.safeParse(paymentPayload.accepted).success).toBe(true);
    const result = decodeBatchPayment(paymentPayload);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.channelId.toString()).toBe(decoded.channelId);
    expect(result.value.cumulative.toString()).toBe(decoded.maxClaimableAmount);
    expect(result.value.kind).toBe(decoded.kind);
    const voucherKey = (vectors.keys as { role: string; publicKeyHex: string }[]).find((k) => k.role === 'voucherKey')!;
    const terms = vectors.paymentRequirements as { network: string; extra: { channelContract: string } };
    expect(terms.network).toBe('stellar:local');
    const ctx = voucherContext('Standalone Network ; February 2017', terms.extra.channelContract);
    expect(
      ctx.verify(
        fromHex(voucherKey.publicKeyHex, 32),
        result.value.channelId,
        result.value.cumulative,
        fromHex(paymentPayload.payload.voucher.signature, 64),
      ),
    ).toBe(true);
  });

  it('sign the client’s sent vouchers with its key, for its books plus the price', () => {
    const corrective = vectors.corrective as {
      networkPassphrase: string;
      channelContractRawHex: string;
      voucherSeedHex: string;
      channelId: string;
      price: string;
      cases: {
        name: string;
        client: { chargedCumulativeAmount: string };
        sentVoucher: { channelId: string; maxClaimableAmount: string; signature: string };
      }[];
    };
    const ctx = voucherContext(corrective.networkPassphrase, fromHex(corrective.channelContractRawHex, 32));
    const keys = keypairFromSeed(fromHex(corrective.voucherSeedHex, 32));
    expect(corrective.cases.length).toBe(10);
    const paid = vectors.paymentResponse as { sentVoucher: { maxClaimableAmount: string; signature: string } };
    expect(
      ctx.verify(
        keys.publicKey,
        BigInt(corrective.channelId),
        BigInt(paid.sentVoucher.maxClaimableAmount),
        fromHex(paid.sentVoucher.signature, 64),
      ),
    ).toBe(true);
    for (const c of corrective.cases) {
      const sent = BigInt(c.sentVoucher.maxClaimableAmount);
      expect(sent).toBe(BigInt(c.client.chargedCumulativeAmount) + BigInt(corrective.price));
      expect(c.sentVoucher.channelId).toBe(corrective.channelId);
      expect(ctx.verify(keys.publicKey, BigInt(corrective.channelId), sent, fromHex(c.sentVoucher.signature, 64))).toBe(
        true,
      );
    }
  });
});
