import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  SMALL_ORDER_ENCODINGS,
  accountFromPublicKey,
  concatBytes,
  fromHex,
  hasStrictSignatureShape,
  isStrictPublicKey,
  keypairFromSeed,
  networkId,
  signReceipt,
  toHex,
  verifyLedgerTx,
  verifyReceipt,
  verifyReport,
  verifySellerTokenRequest,
  verifyStrict,
  verifyStrictAsync,
  voucherContext,
} from '@svc/core';
import * as web from '../src/crypto-web.ts';
import vector from './fixtures/voucher-vector.json' with { type: 'json' };

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const seed = fromHex(vector.voucherSecretSeedHex, 32);
const keys = keypairFromSeed(seed);
const local = voucherContext(vector.networkPassphrase, fromHex(vector.contractIdRawHex, 32));
const channelId = BigInt(vector.channelId);
const cumulative = BigInt(vector.cumulative);

function le(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

describe('voucher test vector (docs/protocol.md#voucher)', () => {
  it('reproduces the network id, message, hash, public key and signature byte for byte', () => {
    expect(toHex(networkId(vector.networkPassphrase))).toBe(vector.expected.networkIdHex);
    const message = local.message(channelId, cumulative);
    expect(message.length).toBe(102);
    expect(toHex(message)).toBe(vector.expected.messageHex);
    expect(toHex(local.hash(channelId, cumulative))).toBe(vector.expected.hashHex);
    expect(keys.publicKeyHex).toBe(vector.expected.publicKeyHex);
    expect(toHex(local.sign(keys, channelId, cumulative))).toBe(vector.expected.signatureHex);
  });

  it('reproduces the testnet hash and signature', () => {
    const testnet = voucherContext(vector.testnet.networkPassphrase, fromHex(vector.contractIdRawHex, 32));
    expect(toHex(testnet.hash(channelId, cumulative))).toBe(vector.testnet.hashHex);
    expect(toHex(testnet.sign(keys, channelId, cumulative))).toBe(vector.testnet.signatureHex);
  });

  it('the browser backend signs the same bytes', () => {
    const signer = web.ed25519Signer(seed);
    expect(toHex(signer.sign(local.hash(channelId, cumulative)))).toBe(vector.expected.signatureHex);
    expect(toHex(web.sha256(local.message(channelId, cumulative)))).toBe(vector.expected.hashHex);
  });

  it('verifies the vector and refuses any other amount, channel or network', async () => {
    const sig = fromHex(vector.expected.signatureHex, 64);
    expect(local.verify(keys.publicKey, channelId, cumulative, sig)).toBe(true);
    expect(await local.verifyAsync(keys.publicKey, channelId, cumulative, sig)).toBe(true);
    expect(local.verify(keys.publicKey, channelId, cumulative + 1n, sig)).toBe(false);
    expect(local.verify(keys.publicKey, channelId + 1n, cumulative, sig)).toBe(false);
    const testnet = voucherContext(vector.testnet.networkPassphrase, fromHex(vector.contractIdRawHex, 32));
    expect(testnet.verify(keys.publicKey, channelId, cumulative, sig)).toBe(false);
  });

  it('encodes the cumulative as i128 two’s complement and the id as u64', () => {
    const m = local.message(0xffff_ffff_ffff_ffffn, -1n);
    expect(toHex(m.subarray(78, 86))).toBe('ffffffffffffffff');
    expect(toHex(m.subarray(86))).toBe('ff'.repeat(16));
    expect(() => local.message(1n << 64n, 1n)).toThrow();
  });
});

describe('strict ed25519', () => {
  it('the small-order list is exactly the curve’s eight torsion points plus the two x=0 sign variants', () => {
    const torsion = new Set<string>();
    const P = ed25519.Point;
    const t = torsionGenerator();
    let q = P.ZERO;
    for (let k = 0; k < 8; k++, q = q.add(t)) torsion.add(toHex(q.toBytes()));
    expect(torsion.size).toBe(8);
    const listed = SMALL_ORDER_ENCODINGS.map(toHex);
    expect(new Set(listed.slice(0, 8))).toEqual(torsion);
    for (const extra of listed.slice(8)) {
      expect(P.fromBytes(fromHex(extra, 32), true).isSmallOrder()).toBe(true);
    }
  });

  it('refuses the identity key with R = identity and S = 0, which node:crypto alone accepts', () => {
    const identity = fromHex('01' + '00'.repeat(31), 32);
    const sig = concatBytes(identity, new Uint8Array(32));
    const msg = local.hash(channelId, cumulative);
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), identity]);
    const nodeKey = crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
    expect(crypto.verify(null, msg, nodeKey, sig)).toBe(true); // the hazard this module exists for
    expect(verifyStrict(identity, msg, sig)).toBe(false);
    expect(local.verify(identity, channelId, cumulative, sig)).toBe(false);
    expect(isStrictPublicKey(identity)).toBe(false);
  });

  it('refuses a signature forged for a small-order key, in every verifier that takes the key from its caller', async () => {
    // With A of small order, R = [s]B and S = s satisfy [S]B = R + [k]A whenever [k]A is the
    // identity: for every message when A is the identity, for 1 in 2–8 messages otherwise. A
    // cofactorless verifier (node:crypto) takes them; the chain's verify_strict refuses small-order A.
    const s = 123456789n;
    const forged = concatBytes(ed25519.Point.BASE.multiply(s).toBytes(), le(s));
    expect(hasStrictSignatureShape(forged)).toBe(true); // R is not small: only the key can tell
    let forgedFor = 0;
    for (const key of [...SMALL_ORDER_ENCODINGS, le(2n ** 255n - 19n + 1n)]) {
      const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), key]);
      let nodeKey;
      try {
        nodeKey = crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' });
      } catch {
        continue;
      }
      for (let n = 1n; n <= 32n; n++) {
        const msg = local.hash(channelId, n);
        if (!crypto.verify(null, msg, nodeKey, forged)) continue;
        forgedFor++;
        expect(verifyStrict(key, msg, forged)).toBe(false);
        expect(await verifyStrictAsync(key, msg, forged)).toBe(false);
      }
    }
    expect(forgedFor).toBeGreaterThan(32); // the identity key alone gives 32
    // The identity key as an account: each signed request of @svc/core, forged.
    const identity = fromHex('01' + '00'.repeat(31), 32);
    const account = accountFromPublicKey(identity);
    const sig = toHex(forged);
    const pass = vector.networkPassphrase;
    const tx = { source: account, seq: 1, op: 'transfer', args: { to: account, amount: '1' }, signature: sig };
    expect(verifyLedgerTx(identity, pass, tx)).toBe(false);
    expect(verifyReport(identity, pass, { account, tx: 'ab'.repeat(32) }, sig)).toBe(false);
    const tokenRequest = {
      network: 'stellar:local',
      facilitator: 'http://127.0.0.1:4020',
      payTo: account,
      ts: '2026-11-27T00:00:00.000Z',
      expiresAt: '2026-11-28T00:00:00.000Z',
    };
    expect(verifySellerTokenRequest(tokenRequest, sig)).toBe(false);
    const forger = { publicKey: identity, sign: () => forged, signAsync: () => Promise.resolve(forged) };
    const receipt = signReceipt(forger, {
      v: 1,
      network: 'stellar:local',
      signer: account,
      channelId: '1',
      payer: account,
      payee: account,
      resource: 'https://seller.example/book',
      method: 'GET',
      unit: 'request',
      amount: '5000',
      cumulative: '5000',
      requestHash: null,
      ts: '2026-11-27T00:00:00.000Z',
    });
    expect(verifyReceipt(receipt)).toEqual({ ok: false, reason: 'bad signature' });
  });

  it('refuses every small-order or non-canonical public key, accepts a normal one', () => {
    for (const bad of SMALL_ORDER_ENCODINGS) expect(isStrictPublicKey(bad)).toBe(false);
    const p = 2n ** 255n - 19n;
    expect(isStrictPublicKey(le(p + 2n))).toBe(false); // y ≥ p
    expect(isStrictPublicKey(new Uint8Array(31))).toBe(false);
    expect(isStrictPublicKey(keys.publicKey)).toBe(true);
  });

  it('refuses a signature whose R is of small order, even when the signer made it verify', () => {
    // With a mixed-order key A = aB + T, R = -hT and S = h·a verifies under a cofactorless
    // verifier for 1 in 8 tries; the chain's verify_strict refuses it, so must we.
    const a = 123456789n;
    const P = ed25519.Point;
    const T = torsionGenerator();
    const A = P.BASE.multiply(a).add(T).toBytes();
    let found = false;
    for (let n = 0n; n < 200n && !found; n++) {
      const msg = local.hash(channelId, n + 1n);
      for (let k = 0n; k < 8n && !found; k++) {
        let R = P.ZERO;
        for (let j = 0n; j < k; j++) R = R.add(T);
        const Rb = R.toBytes();
        const h = BigInt('0x' + toHex(sha512(concatBytes(Rb, A, msg)).reverse())) % L;
        let minusHT = P.ZERO;
        for (let j = 0n; j < h % 8n; j++) minusHT = minusHT.add(T);
        if (!minusHT.negate().equals(R)) continue;
        const S = (h * a) % L;
        const sig = concatBytes(Rb, le(S));
        expect(ed25519.verify(sig, msg, A, { zip215: true })).toBe(true); // a lax verifier takes it
        expect(verifyStrict(A, msg, sig)).toBe(false);
        expect(hasStrictSignatureShape(sig)).toBe(false);
        found = true;
      }
    }
    expect(found).toBe(true);
  });

  it('refuses S ≥ L (the malleated twin of a valid signature) and a non-canonical R', () => {
    const msg = local.hash(channelId, cumulative);
    const sig = fromHex(vector.expected.signatureHex, 64);
    const S = BigInt('0x' + toHex(sig.slice(32).reverse()));
    const malleated = concatBytes(sig.slice(0, 32), le(S + L));
    expect(verifyStrict(keys.publicKey, msg, malleated)).toBe(false);
    const nonCanonicalR = concatBytes(le(2n ** 255n - 19n + 1n), sig.slice(32));
    expect(hasStrictSignatureShape(nonCanonicalR)).toBe(false);
    // The range check's edge: y = p and y = p with the sign bit are refused, y = p − 2 is canonical.
    const p = 2n ** 255n - 19n;
    expect(hasStrictSignatureShape(concatBytes(le(p), sig.slice(32)))).toBe(false);
    expect(hasStrictSignatureShape(concatBytes(le(p + 2n ** 255n), sig.slice(32)))).toBe(false);
    expect(hasStrictSignatureShape(concatBytes(le(p - 2n), sig.slice(32)))).toBe(true);
    expect(verifyStrict(keys.publicKey, msg, sig)).toBe(true);
  });
});

/** A point of order exactly 8: the torsion part (L·P) of some curve point P. */
function torsionGenerator() {
  const P = ed25519.Point;
  for (let i = 2; i < 256; i++) {
    let point;
    try {
      point = P.fromBytes(concatBytes(new Uint8Array([i]), new Uint8Array(31)), true);
    } catch {
      continue;
    }
    let t = P.ZERO;
    let acc = point;
    for (let s = L; s > 0n; s >>= 1n) {
      if (s & 1n) t = t.add(acc);
      acc = acc.double();
    }
    if (!t.double().double().equals(P.ZERO)) return t;
  }
  throw new Error('no order-8 point found');
}

function sha512(data: Uint8Array): Uint8Array {
  return new Uint8Array(crypto.createHash('sha512').update(data).digest());
}
