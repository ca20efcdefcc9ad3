// The seller's command line, `svc-seller` (this package's bin; also `svc seller` of
// @svc/facilitator): a seller's key and its token at a facilitator.
//
//   svc-seller init                 creates the seller's key (its payTo address) in SVC_SELLER
//                                   (default ~/.svc/seller.json, mode 0600) and prints the address
//   svc-seller                      prints the address
//   svc-seller token [--days N]     asks the facilitator (SVC_FACILITATOR, default
//                                   http://127.0.0.1:4020) for a seller token, signed with the key;
//                                   the middleware takes it as svc({ …, sellerToken })
//
// The key is the payTo account's: settlements pay it. It stays in its file; only a signature over
// the token request leaves.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAccountAddress, keypairFromSecret, randomKeypair } from '@svc/core';
import { requestSellerToken } from './seller-token.js';

const DEFAULT_FACILITATOR = 'http://127.0.0.1:4020';

interface SellerFile {
  address: string;
  secret: string;
}

export async function sellerCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const file = process.env['SVC_SELLER'] ?? path.join(os.homedir(), '.svc', 'seller.json');
  if (sub === 'init') return init(file);
  if (sub === undefined) {
    const seller = read(file);
    console.log(`seller ${seller.address} (key in ${file})`);
    return;
  }
  if (sub === 'token') return token(file, rest);
  throw new Error(`usage: svc-seller [init | token [--days N]] (unknown ${JSON.stringify(sub)})`);
}

function init(file: string): void {
  if (fs.existsSync(file)) {
    console.log(`seller ${read(file).address} (key in ${file}, kept: delete the file to make a new one)`);
    return;
  }
  const keys = randomKeypair();
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const data: SellerFile = { address: keys.address, secret: keys.secret() };
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  console.log(`seller ${keys.address}`);
  console.log(`  key written to ${file} (mode 0600): back it up; settlements pay this address`);
  console.log(`  next: svc-seller token   (a token for your middleware: svc({ facilitator, payTo, sellerToken }))`);
}

async function token(file: string, args: string[]): Promise<void> {
  const seller = read(file);
  const days = args[0] === '--days' ? Number(args[1]) : undefined;
  if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 366))
    throw new Error('--days must be a whole number from 1 to 366');
  const facilitator = process.env['SVC_FACILITATOR'] ?? DEFAULT_FACILITATOR;
  const t = await requestSellerToken({ facilitator, secret: seller.secret, ...(days === undefined ? {} : { days }) });
  console.log(`seller token for ${t.payTo} at ${facilitator}, valid until ${t.expiresAt}:`);
  console.log(t.token);
}

function read(file: string): SellerFile {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing
        ? `no seller key in ${file}: run \`svc-seller init\` first (or set SVC_SELLER)`
        : `${file} is not a seller key file`,
    );
  }
  const { address, secret } = (data ?? {}) as Partial<SellerFile>;
  if (typeof secret !== 'string' || typeof address !== 'string' || !isAccountAddress(address))
    throw new Error(`${file} is not a seller key file`);
  if (keypairFromSecret(secret).address !== address) throw new Error(`${file}: the secret does not match the address`);
  return { address, secret };
}
