// `svc refund <url> [amount]`: a buyer takes back its unused deposit from the batch-settlement
// channel that pays `url`'s seller, at once (not at the channel's expiry): the whole of it, or
// `amount` base units. The wallet is SVC_WALLET's (default ~/.svc/wallet.json), as for `svc pay`.
import os from 'node:os';
import path from 'node:path';
import { BatchRefundError, displayAmount } from '@svc/core';
import { Wallet } from '@svc/sdk';
import { explainFetchError, readArgs } from './errors.js';

const USAGE = 'usage: svc refund <http(s) url> [amount in base units; default: all not charged]';

export async function refundCommand(args: string[]): Promise<void> {
  const [url, amountArg] = readArgs(args, {}, 2, USAGE).positionals;
  if (!url || !/^https?:\/\//.test(url)) throw new Error(USAGE);
  if (amountArg !== undefined && !/^[1-9][0-9]{0,38}$/.test(amountArg))
    throw new Error(
      `amount must be a whole number of base units above 0, not ${JSON.stringify(amountArg.slice(0, 40))}`,
    );
  const file = process.env['SVC_WALLET'] ?? path.join(os.homedir(), '.svc', 'wallet.json');
  const wallet = Wallet.open({ file });
  console.log(`buyer ${wallet.buyer.address} (wallet ${file})`);
  try {
    const done = await wallet.refund(url, amountArg === undefined ? {} : { amount: BigInt(amountArg) });
    console.log(
      `refunded ${done.refunded} base units (${displayAmount(done.refunded)}) from channel ${done.channelId} (tx ${done.transaction}); ${done.channelState.balance} left in it`,
    );
  } catch (err) {
    if (err instanceof BatchRefundError) {
      console.log(`refund refused: ${err.code}: ${err.message}`);
      process.exitCode = 1;
      return;
    }
    throw explainFetchError(err, url);
  }
}
