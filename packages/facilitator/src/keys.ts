// The facilitator's ed25519 key signs receipts and claim transactions. FACILITATOR_SECRET wins;
// otherwise a key is generated once and kept in DATA_DIR (mode 0600). Secrets are never logged.
import fs from 'node:fs';
import path from 'node:path';
import { keypairFromSecret, randomKeypair } from '@svc/core';
import type { Keypair } from '@svc/core';

export function loadOrCreateKey(dataDir: string, file: string, secret?: string): Keypair {
  if (secret) return keypairFromSecret(secret);
  const full = path.join(dataDir, file);
  try {
    return keypairFromSecret(fs.readFileSync(full, 'utf8').trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`cannot read the key in ${full}: ${(err as Error).message}`);
  }
  const keys = randomKeypair();
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    // 'wx': two processes starting at once cannot both create a different key.
    fs.writeFileSync(full, `${keys.secret()}\n`, { mode: 0o600, flag: 'wx' });
    return keys;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      return keypairFromSecret(fs.readFileSync(full, 'utf8').trim());
    throw err;
  }
}
