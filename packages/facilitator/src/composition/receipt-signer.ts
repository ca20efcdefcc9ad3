// The facilitator's key, settled against the store it opened (domain/receipt-signers.ts says why):
// the key FACILITATOR_SECRET or DATA_DIR/facilitator.secret gives must be the store's signer. A
// missing file is generated only for a store that has never been used; anything else is refused
// with what is missing or different, and how to rotate on purpose (addresses only, never a secret).
import type { Keypair } from '@svc/core';
import type { Config } from '../config.js';
import { recordSigner, storeInUse, storeSigners } from '../domain/receipt-signers.js';
import type { RetiredSigner, StoreSigners } from '../domain/receipt-signers.js';
import { FACILITATOR_SECRET_FILE, facilitatorKey, loadOrCreateKey } from '../keys.js';
import type { Store } from '../store/port.js';

const ROTATE = '`svc rotate-key`';

/** A start refused because the key is not the store's signer; `svc start` prints the message alone. */
export class SignerRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignerRefused';
  }
}

export interface ReceiptSigner {
  keys: Keypair;
  /** Signers a rotation retired, whose receipts still count. */
  retired: RetiredSigner[];
}

export async function openReceiptSigner(store: Store, config: Config): Promise<ReceiptSigner> {
  const key = facilitatorKey(config.DATA_DIR, config.FACILITATOR_SECRET);
  const signers = await storeSigners(store);
  if (key.from === 'nowhere' && (signers.current !== null || (await storeInUse(store))))
    throw new SignerRefused(missing(key.file, signers));
  const keys = key.from === 'nowhere' ? loadOrCreateKey(config.DATA_DIR, FACILITATOR_SECRET_FILE) : key.keys;
  const standing = await recordSigner(store, signers.current ?? keys.address);
  if (standing !== keys.address)
    throw new SignerRefused(
      differs(key.from === 'FACILITATOR_SECRET' ? null : key.file, keys.address, standing, signers),
    );
  return { keys, retired: signers.retired };
}

function missing(file: string, signers: StoreSigners): string {
  const signer = signers.current;
  if (signer === null)
    return (
      `${file} is missing, but this store already holds channels or receipts, made under a key it did not record. ` +
      `Starting would make a new key, and every seller token would stop working. Put that key back (restore the file, ` +
      `or set FACILITATOR_SECRET to it). If it is lost for good, ${ROTATE} starts a new signer on purpose; sellers then fetch new tokens.`
    );
  return (
    `${file} is missing, but this store's receipts are signed by ${signer}. Starting would make a new key: ` +
    `those receipts would no longer be listed as this facilitator's, and every seller token would stop working. ` +
    `Put that key back (restore the file, or set FACILITATOR_SECRET to it). If it is lost for good, ${ROTATE} ` +
    `starts a new signer on purpose: the old one stays listed in GET /supported, so its receipts still verify; ` +
    `sellers fetch new tokens.`
  );
}

/** `file` null: the key came from FACILITATOR_SECRET. */
function differs(file: string | null, address: string, signer: string, signers: StoreSigners): string {
  const retired = signers.retired.find((r) => r.address === address);
  const was = retired ? ` (${address} was retired by a rotation at ${retired.retiredAt})` : '';
  const where = file ?? 'FACILITATOR_SECRET';
  const fix = file ? 'put it back in that file, or set FACILITATOR_SECRET to it' : 'set FACILITATOR_SECRET to it';
  const rotate = file
    ? `${ROTATE} (it puts a new key in that file, keeping the one there beside it)`
    : `${ROTATE} with FACILITATOR_SECRET set to the new key`;
  return (
    `${where} is the key of ${address}, but this store's receipts are signed by ${signer}${was}. ` +
    `Use ${signer}'s key (${fix}); to make a new signer on purpose, run ${rotate}.`
  );
}
