// The seller's command line, `svc-seller` (this package's bin; also `svc seller` of
// @svc/facilitator): a seller's key and its token at a facilitator.
//
//   svc-seller init                 creates the seller's key (its payTo address) in SVC_SELLER
//                                   (default ~/.svc/seller.json, mode 0600) and prints the address
//   svc-seller                      prints the address
//   svc-seller token [--days N]     asks the facilitator (SVC_FACILITATOR, default
//                                   http://127.0.0.1:4020) for a seller token, signed with the key;
//                                   the middleware takes it as svc({ …, sellerToken })
//   svc-seller help (--help, -h)    prints the usage
//
// The key is the payTo account's: settlements pay it. It stays in its file; only a signature over
// the token request leaves.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isAccountAddress, keypairFromSecret, randomKeypair } from '@svc/core';
import { requestSellerToken } from './seller-token.js';

const DEFAULT_FACILITATOR = 'http://127.0.0.1:4020';

interface SellerFile {
  address: string;
  secret: string;
}

const USAGE = 'usage: svc-seller [init | token [--days N] | help]';

/** `svc-seller help`: the usage, and what each command does. */
const HELP = `${USAGE}

  init               create the seller's key (its payTo address) in SVC_SELLER
                     (default ~/.svc/seller.json, mode 0600) and print the address
  (no command)       print the address
  token [--days N]   get a seller token from SVC_FACILITATOR (default ${DEFAULT_FACILITATOR}),
                     signed with the key, for svc({ facilitator, payTo, sellerToken });
                     valid N days (default 365, at most 366); the token alone goes to
                     standard output: export SVC_SELLER_TOKEN=$(svc-seller token)
  help               this text (also --help, -h)
`;

/** A command line the seller's command does not take: its entry points exit 2 (`exitCode`), no stack trace. */
function usageError(message: string): Error {
  return Object.assign(new Error(`${message}\n${USAGE}`), { exitCode: 2 });
}

export async function sellerCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'help' || sub === '--help' || sub === '-h') {
    if (rest.length > 0)
      throw usageError(`${sub} takes no arguments (got ${JSON.stringify(rest.join(' ').slice(0, 200))})`);
    console.log(HELP);
    return;
  }
  const file = process.env['SVC_SELLER'] ?? path.join(os.homedir(), '.svc', 'seller.json');
  if (sub === 'init') {
    if (rest.length > 0)
      throw usageError(`init takes no arguments (got ${JSON.stringify(rest.join(' ').slice(0, 200))})`);
    return init(file);
  }
  if (sub === undefined) {
    const seller = read(file);
    console.log(`seller ${seller.address} (key in ${file})`);
    return;
  }
  if (sub === 'token') return token(file, tokenDays(rest));
  throw usageError(`unknown command ${JSON.stringify(sub)}`);
}

/** `token`'s one flag, read strictly: `--days N` or `--days=N`, nothing else. */
function tokenDays(args: string[]): string | undefined {
  try {
    return parseArgs({ args, options: { days: { type: 'string' } }, strict: true, allowPositionals: false }).values
      .days;
  } catch (err) {
    // parseArgs' first sentence names the word ("Unknown option '--x'"); the rest is about `--`.
    throw usageError(String((err as Error).message).split('. ')[0]!);
  }
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

async function token(file: string, daysArg: string | undefined): Promise<void> {
  const seller = read(file);
  const days = daysArg === undefined ? undefined : Number(daysArg);
  if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 366))
    throw new Error('--days must be a whole number from 1 to 366');
  const facilitator = process.env['SVC_FACILITATOR'] ?? DEFAULT_FACILITATOR;
  const t = await requestSellerToken({ facilitator, secret: seller.secret, ...(days === undefined ? {} : { days }) });
  // The token alone on standard output, for SVC_SELLER_TOKEN=$(svc-seller token).
  console.error(`seller token for ${t.payTo} at ${facilitator}, valid until ${t.expiresAt}:`);
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
