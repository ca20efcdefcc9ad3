// Keys kept in DATA_DIR (mode 0600), and where the facilitator's own key comes from: the
// FACILITATOR_SECRET variable wins; otherwise DATA_DIR/facilitator.secret, which a first start
// generates. Whether this key may sign for the store it opens is asked first, before the file is
// ever generated (composition/receipt-signer.ts). Secrets are never logged.
import fs from 'node:fs';
import path from 'node:path';
import { keypairFromSecret, randomKeypair } from '@svc/core';
import type { Keypair } from '@svc/core';

export const FACILITATOR_SECRET_FILE = 'facilitator.secret';

/** Where the facilitator's key is: FACILITATOR_SECRET, the file in DATA_DIR, or nowhere yet (the file is missing). */
export type FacilitatorKey =
  | { from: 'FACILITATOR_SECRET'; keys: Keypair }
  | { from: 'file'; file: string; keys: Keypair }
  | { from: 'nowhere'; file: string };

export function facilitatorKey(dataDir: string, secret?: string): FacilitatorKey {
  if (secret) return { from: 'FACILITATOR_SECRET', keys: keypairFromSecret(secret) };
  const file = path.join(dataDir, FACILITATOR_SECRET_FILE);
  const keys = readKeyFile(file);
  return keys ? { from: 'file', file, keys } : { from: 'nowhere', file };
}

/** The key in `dataDir/file`, generated there on first use. */
export function loadOrCreateKey(dataDir: string, file: string): Keypair {
  const full = path.join(dataDir, file);
  const existing = readKeyFile(full);
  if (existing) return existing;
  fs.mkdirSync(dataDir, { recursive: true });
  const keys = randomKeypair();
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

/**
 * Puts `keys` in DATA_DIR/facilitator.secret (a rotation). The key that was there is not thrown
 * away: it is kept beside it as facilitator.secret.<its address>.retired (still 0600), for the
 * operator to delete once nothing needs it. Returns that file, or null when there was none.
 */
export function replaceFacilitatorKeyFile(dataDir: string, keys: Keypair): string | null {
  const file = path.join(dataDir, FACILITATOR_SECRET_FILE);
  const old = readKeyFile(file);
  let kept: string | null = null;
  if (old) {
    kept = path.join(dataDir, `${FACILITATOR_SECRET_FILE}.${old.address}.retired`);
    fs.renameSync(file, kept);
  }
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${keys.secret()}\n`, { mode: 0o600, flag: 'wx' });
  return kept;
}

/** The key in `file`, or null when there is no such file. */
function readKeyFile(file: string): Keypair | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read the key in ${file}: ${(err as Error).message}`);
  }
  try {
    return keypairFromSecret(text.trim());
  } catch {
    // Never the file's text in the message: it is (or was meant to be) a secret.
    throw new Error(`${file} does not hold a key (an S… secret seed or 64 hex characters)`);
  }
}
