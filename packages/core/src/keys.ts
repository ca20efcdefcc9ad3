// Keypairs: an ed25519 seed with its G… address and S… secret.
import { ed25519Signer, randomBytes } from '#crypto';
import type { Ed25519Signer } from '#crypto';
import { fromHex, toHex } from './bytes.js';
import { accountFromPublicKey, secretFromSeed, seedFromSecret } from './strkey.js';

export interface Keypair extends Ed25519Signer {
  /** G… address of the public key. */
  readonly address: string;
  /** Lowercase hex of the public key (voucher keys travel this way). */
  readonly publicKeyHex: string;
  /** S… secret seed. Never log it. */
  secret(): string;
}

export function keypairFromSeed(seed: Uint8Array): Keypair {
  const signer = ed25519Signer(seed);
  const copy = Uint8Array.from(seed);
  return {
    publicKey: signer.publicKey,
    sign: (message) => signer.sign(message),
    signAsync: (message) => signer.signAsync(message),
    address: accountFromPublicKey(signer.publicKey),
    publicKeyHex: toHex(signer.publicKey),
    secret: () => secretFromSeed(copy),
  };
}

export function randomKeypair(): Keypair {
  return keypairFromSeed(randomBytes(32));
}

/** From an `S…` secret or 64 hex characters of seed. */
export function keypairFromSecret(secret: string): Keypair {
  return keypairFromSeed(/^[0-9a-fA-F]{64}$/.test(secret) ? fromHex(secret, 32) : seedFromSecret(secret));
}
