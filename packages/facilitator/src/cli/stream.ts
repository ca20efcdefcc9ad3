// `svc stream <url> [--post JSON]`: buys a paid event stream (per token or per second) and prints
// each event the moment it arrives. The wallet is the one `svc pay` uses (SVC_WALLET).
import os from 'node:os';
import path from 'node:path';
import { displayAmount } from '@svc/core';
import { Wallet, streamPaid } from '@svc/sdk';

export async function streamCommand(args: string[]): Promise<void> {
  const [url, ...rest] = args;
  if (!url || !/^https?:\/\//.test(url)) throw new Error('usage: svc stream <http(s) url> [--post JSON]');
  const postAt = rest.indexOf('--post');
  const body = postAt >= 0 ? (rest[postAt + 1] ?? '{}') : undefined;
  if (body !== undefined) JSON.parse(body); // refuse a body that is not JSON before paying
  const file = process.env['SVC_WALLET'] ?? path.join(os.homedir(), '.svc', 'wallet.json');
  const wallet = Wallet.open({ file, log: (line) => console.log(`  ${line}`) });
  const started = Date.now();
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  const run = await streamPaid({
    url,
    ...(body !== undefined ? { method: 'POST', body } : {}),
    signer: (terms) => wallet.signerFor(terms),
    signal: abort.signal,
    onEvent: (e) => console.log(`${((e.at - started) / 1000).toFixed(3).padStart(8)}s  ${e.event.padEnd(16)} ${JSON.stringify(e.data)}`),
  });
  wallet.save();
  const e = run.ended;
  console.log(`ended: ${e.reason}${e.units !== undefined ? `, ${e.units} units` : ''}${e.charged ? `, charged ${e.charged}` : ''}; paid ${run.paid} base units (${displayAmount(run.paid)}) in ${run.vouchers} voucher${run.vouchers === 1 ? '' : 's'}`);
}
