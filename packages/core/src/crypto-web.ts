// Browser backend of the crypto primitives (the "#crypto" default condition): audited pure-JS
// noble code. Same API as crypto-node.ts. Not strict on its own: see ed25519.ts.
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

export const backend = 'web';

export function sha256(data: Uint8Array): Uint8Array {
  return nobleSha256(data);
}

/** An incremental sha256, for data that arrives in pieces (a response body as it is written). */
export interface Sha256 {
  update(data: Uint8Array): Sha256;
  digest(): Uint8Array;
}

export function createSha256(): Sha256 {
  const hash = nobleSha256.create();
  const self: Sha256 = {
    update(data) {
      hash.update(data);
      return self;
    },
    digest: () => hash.digest(),
  };
  return self;
}

export function randomBytes(length: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(length));
}

export function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

export function ed25519VerifyAsync(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  return Promise.resolve(ed25519Verify(publicKey, message, signature));
}

export interface Ed25519Signer {
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
  signAsync(message: Uint8Array): Promise<Uint8Array>;
}

export function ed25519Signer(seed: Uint8Array): Ed25519Signer {
  if (seed.length !== 32) throw new TypeError('an ed25519 seed is 32 bytes');
  const secret = Uint8Array.from(seed);
  const sign = (message: Uint8Array) => ed25519.sign(message, secret);
  return { publicKey: ed25519.getPublicKey(secret), sign, signAsync: (message) => Promise.resolve(sign(message)) };
}
