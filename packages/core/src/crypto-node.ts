// Node backend of the crypto primitives (selected by the "#crypto" import condition `node`).
// node:crypto is ~12× faster than a pure-JS ed25519 (docs/performance.md#building-blocks); verification of a known key
// reuses its KeyObject, and the async form runs on libuv's threadpool so signature work spreads
// over every core. These primitives are NOT strict on their own: see ed25519.ts.
import crypto from 'node:crypto';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const KEY_CACHE_MAX = 50_000;
const keyCache = new Map<string, crypto.KeyObject>();

export const backend = 'node';

export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(crypto.createHash('sha256').update(data).digest());
}

/** An incremental sha256, for data that arrives in pieces (a response body as it is written). */
export interface Sha256 {
  update(data: Uint8Array): Sha256;
  digest(): Uint8Array;
}

export function createSha256(): Sha256 {
  const hash = crypto.createHash('sha256');
  const self: Sha256 = {
    update(data) {
      hash.update(data);
      return self;
    },
    digest: () => new Uint8Array(hash.digest()),
  };
  return self;
}

export function randomBytes(length: number): Uint8Array {
  return new Uint8Array(crypto.randomBytes(length));
}

function publicKeyObject(publicKey: Uint8Array): crypto.KeyObject {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('latin1');
  let key = keyCache.get(id);
  if (!key) {
    key = crypto.createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    // Bounded: a flood of fresh keys costs re-imports, never memory.
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

/** Plain RFC 8032 verification (not strict). */
export function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return crypto.verify(null, message, publicKeyObject(publicKey), signature);
  } catch {
    return false;
  }
}

/** The same on the threadpool. */
export function ed25519VerifyAsync(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      crypto.verify(null, message, publicKeyObject(publicKey), signature, (err, ok) => resolve(!err && ok));
    } catch {
      resolve(false);
    }
  });
}

export interface Ed25519Signer {
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
  /** The same signature, computed off the calling thread where the backend can. */
  signAsync(message: Uint8Array): Promise<Uint8Array>;
}

export function ed25519Signer(seed: Uint8Array): Ed25519Signer {
  if (seed.length !== 32) throw new TypeError('an ed25519 seed is 32 bytes');
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = crypto.createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(SPKI_PREFIX.length));
  return {
    publicKey,
    sign: (message) => new Uint8Array(crypto.sign(null, message, privateKey)),
    signAsync: (message) =>
      new Promise((resolve, reject) => {
        crypto.sign(null, message, privateKey, (err, sig) => (err ? reject(err) : resolve(new Uint8Array(sig))));
      }),
  };
}
