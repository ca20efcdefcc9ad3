// `svc rotate-key`: a new receipt signer, on purpose. The store records the new
// signer and keeps the one it replaces as retired: GET /supported lists it after the new one, so
// every receipt it signed still verifies. The new key is FACILITATOR_SECRET when that is set (the
// operator made it, and gives it to every instance), else a fresh one generated into
// DATA_DIR/facilitator.secret, the old file kept beside it. Seller tokens are HMACs of the key, so
// those minted before stop working: a rotation is also what revokes them all, which is the point
// when a key may have leaked. Prints addresses and file names, never a secret.
import { randomKeypair } from '@svc/core';
import type { Keypair } from '@svc/core';
import { lockDataDir } from '@svc/ledger';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { rotationOps, storeSigners } from '../domain/receipt-signers.js';
import { FACILITATOR_SECRET_FILE, facilitatorKey, replaceFacilitatorKeyFile } from '../keys.js';
import { SQLITE_FILE_NAME, openStore } from '../store/index.js';
import { UsageError } from './errors.js';

export const ROTATE_KEY_USAGE = `usage: [VARIABLE=value …] svc rotate-key

Gives the facilitator a new receipt signer. Run it with the facilitator's own DATA_DIR and
DATABASE_URL, the facilitator stopped (on SQLite it refuses to run beside it). The new key is
FACILITATOR_SECRET when set (then start every instance with it), else a new key generated into
DATA_DIR/facilitator.secret (the old file is kept beside it). The old signer stays listed in
GET /supported, so the receipts it signed still verify; seller tokens minted under the old key stop
working, and sellers fetch new ones (svc seller token).
`;

export async function rotateKeyCommand(args: string[]): Promise<void> {
  if (args.length === 1 && ['--help', '-h', 'help'].includes(args[0]!)) return void console.log(ROTATE_KEY_USAGE);
  if (args.length > 0)
    throw new UsageError(
      `rotate-key takes no arguments (got ${JSON.stringify(args.join(' ').slice(0, 200))})\n\n${ROTATE_KEY_USAGE}`,
    );
  const config = loadConfig();
  // On SQLite a running facilitator holds the store: rotating under it would leave it signing with
  // a key its store no longer names.
  const lock =
    config.DATABASE_URL === undefined
      ? lockDataDir(config.DATA_DIR, 'facilitator', `the SQLite store ${SQLITE_FILE_NAME}`)
      : null;
  try {
    const store = await openStore({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      lockTimeoutMs: config.PG_LOCK_TIMEOUT_MS,
    });
    try {
      const signers = await storeSigners(store);
      const key = facilitatorKey(config.DATA_DIR, config.FACILITATOR_SECRET);
      // A store that never recorded a signer was signed for by the key in its file, if any.
      const before = { ...signers, current: signers.current ?? (key.from === 'file' ? key.keys.address : null) };
      let next: Keypair;
      let kept: string | null = null;
      if (key.from === 'FACILITATOR_SECRET') {
        next = key.keys;
        if (next.address === before.current)
          throw new Error(
            `FACILITATOR_SECRET is the key of ${next.address}, which is already this store's signer: set it to the new key (an S… secret seed or 64 hex characters, e.g. from openssl rand -hex 32) and run svc rotate-key again.`,
          );
      } else {
        next = randomKeypair();
        kept = replaceFacilitatorKeyFile(config.DATA_DIR, next);
      }
      try {
        await store.write(rotationOps(before, next.address, new Date().toISOString()));
      } catch (err) {
        // The store still names the old signer: so does the file again.
        if (key.from !== 'FACILITATOR_SECRET') restoreKeyFile(config.DATA_DIR, kept);
        throw err;
      }
      report(next.address, before.current, key.from === 'FACILITATOR_SECRET', kept, config.DATA_DIR);
    } finally {
      await store.close();
    }
  } finally {
    lock?.release();
  }
}

function restoreKeyFile(dataDir: string, kept: string | null): void {
  const file = path.join(dataDir, FACILITATOR_SECRET_FILE);
  fs.rmSync(file, { force: true });
  if (kept) fs.renameSync(kept, file);
}

function report(next: string, old: string | null, fromEnv: boolean, kept: string | null, dataDir: string): void {
  console.log(`svc: the receipt signer is now ${next}`);
  if (old) console.log(`  retired   ${old}: GET /supported still lists it, so the receipts it signed still verify`);
  if (fromEnv) console.log('  key       FACILITATOR_SECRET: start every instance with it');
  else
    console.log(
      `  key       ${path.join(dataDir, FACILITATOR_SECRET_FILE)}${kept ? ` (the old one is kept in ${kept}: delete it once nothing needs it)` : ''}`,
    );
  console.log(
    '  sellers   tokens minted under the old key no longer work: each seller fetches a new one (svc seller token)',
  );
  console.log(`  stellar   with LEDGER=stellar, fund ${next}: it sends the claim transactions`);
}
