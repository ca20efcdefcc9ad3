// `svc pay <url> [count]`: pays a metered endpoint as a buyer. The wallet (a buyer key and its
// channels) lives in SVC_WALLET (default ~/.svc/wallet.json); a channel to the seller is opened on
// first use, funded from the local ledger's faucet.
import os from 'node:os';
import path from 'node:path';
import { displayAmount } from '@svc/core';
import { Wallet, payFetch } from '@svc/sdk';
import type { ChannelSigner } from '@svc/sdk';
import { explainFetchError, readArgs } from './errors.js';

const MAX_COUNT = 1_000_000;
const USAGE = 'usage: svc pay <http(s) url> [count]';

export async function payCommand(args: string[]): Promise<void> {
  const [url, countArg] = readArgs(args, {}, 2, USAGE).positionals;
  if (!url || !/^https?:\/\//.test(url)) throw new Error(USAGE);
  const count = countArg === undefined ? 1 : Number(countArg);
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT)
    throw new Error(`count must be a whole number from 1 to ${MAX_COUNT}`);
  const file = process.env['SVC_WALLET'] ?? path.join(os.homedir(), '.svc', 'wallet.json');
  const wallet = Wallet.open({ file, log: (line) => console.log(`  ${line}`) });
  console.log(`buyer ${wallet.buyer.address} (wallet ${file})`);
  let signer: ChannelSigner | null = null;
  let paid = 0n;
  for (let i = 1; i <= count; i++) {
    const res = await payFetch(
      url,
      {},
      // Asked for a channel bound to a batch-settlement seller's receiver authorizer, the wallet opens it
      // inside the first paid request where the facilitator sponsors deposits.
      { signer: async (terms, options) => (signer ??= await wallet.signerFor(terms, BigInt(count - i + 1), options)) },
    ).catch((err: unknown) => {
      throw explainFetchError(err, url);
    });
    wallet.save();
    const text = await res.text();
    if (res.ok && !res.payment) {
      console.log(text);
      console.log(`#${i} ${url} answered ${res.status} without asking for payment: nothing paid`);
      process.exitCode = 1;
      return;
    }
    if (!res.ok || !res.payment) {
      console.log(`#${i} ${res.status} ${summarise(text)}`);
      process.exitCode = 1;
      return;
    }
    if (res.deposit)
      console.log(
        `#${i} deposited ${res.deposit.amount} (${displayAmount(res.deposit.amount)}) inside this request: tx ${res.deposit.transaction.slice(0, 16)}…`,
      );
    const p = res.payment;
    paid += BigInt(p.delta);
    if (count <= 10 || i === 1 || i === count || i % Math.ceil(count / 10) === 0) {
      console.log(
        `#${i} ${res.status} paid ${p.delta} (cumulative ${p.cumulative} on channel ${p.channelId}, ${p.remaining} left) receipt ${p.receipt.id.slice(0, 16)}… verified, ${p.latencyMs} ms`,
      );
    }
    if (count === 1) console.log(text);
  }
  const s = signer as ChannelSigner | null;
  console.log(
    `paid ${paid} base units (${displayAmount(paid)}) for ${count} request${count === 1 ? '' : 's'}${s ? `; channel ${s.channelId} has ${s.remaining} left` : ''}`,
  );
}

function summarise(body: string): string {
  try {
    const json = JSON.parse(body) as { error?: string; message?: string };
    return `${json.error ?? ''} ${json.message ?? ''}`.trim() || body.slice(0, 200);
  } catch {
    return body.slice(0, 200);
  }
}
