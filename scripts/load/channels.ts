// Opens funded payment channels on the local ledger for benchmarks and load tests: one payer
// account and one voucher key per channel. Payers are funded by a few faucet-funded accounts
// (the faucet grants each address only a few times an hour, and every ledger only so many times),
// then open their channels in parallel.
//
//   const channels = await openChannels(ledger, { payees: [seller, seller], deposit: 1_000_000n });
//   ctx.sign(channels[0].voucherKey, channels[0].id, 5000n);
import { randomKeypair } from '@svc/core';
import type { Keypair } from '@svc/core';
import type { LocalLedgerClient } from '@svc/sdk';

const PARALLEL_OPENS = 8;

export interface OpenedChannel {
  id: bigint;
  payer: Keypair;
  voucherKey: Keypair;
  payee: string;
  deposit: bigint;
}

export interface OpenChannelsOptions {
  /** The payee of each channel to open (one channel per entry). */
  payees: readonly string[];
  deposit: bigint;
  /** Called after each channel opens, e.g. for progress. */
  onOpened?: (done: number, total: number) => void;
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** Funds one new payer per channel and opens the channels, in order of `payees`. */
export async function openChannels(ledger: LocalLedgerClient, o: OpenChannelsOptions): Promise<OpenedChannel[]> {
  const payers = await fundPayers(ledger, o.payees.length, o.deposit);
  let done = 0;
  return mapLimit(o.payees, PARALLEL_OPENS, async (payee, i) => {
    const payer = payers[i]!;
    const voucherKey = randomKeypair();
    const { channelId } = await ledger.openChannel({ payer, payee, deposit: o.deposit, voucherKey });
    o.onOpened?.(++done, o.payees.length);
    return { id: channelId, payer, voucherKey, payee, deposit: o.deposit };
  });
}

/** `count` new accounts holding `amount` each: funders draw on the faucet once and pay out transfers. */
async function fundPayers(ledger: LocalLedgerClient, count: number, amount: bigint): Promise<Keypair[]> {
  const payers = Array.from({ length: count }, () => randomKeypair());
  const groups: Keypair[][] = [];
  for (let start = 0; start < count;) {
    const funder = randomKeypair();
    await ledger.faucet(funder.address);
    const perFunder = Number((await ledger.balance(funder.address)) / amount);
    if (perFunder < 1) throw new Error(`a faucet grant cannot fund a deposit of ${amount}; lower the deposit`);
    const group = payers.slice(start, start + perFunder);
    groups.push([funder, ...group]);
    start += group.length;
  }
  // A funder's transfers are sequential (its sequence number); funders run in parallel.
  await mapLimit(groups, PARALLEL_OPENS, async ([funder, ...group]) => {
    for (const payer of group) await ledger.transfer({ from: funder!, to: payer.address, amount });
  });
  return payers;
}
