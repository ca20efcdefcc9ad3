// The harness the HTTP fuzz suites run against, with real values to mix into generated inputs:
// funded buyers with open channels, accepted vouchers (receipt ids and attest tokens), ledger
// transaction hashes, and the addresses the facilitator knows.
import { randomKeypair, toHex, voucherContext } from '@svc/core';
import type { Keypair, VoucherContext } from '@svc/core';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';
import type { Pool } from './arbitraries.js';
import { newTarget } from './http-fuzz.js';
import type { Target } from './http-fuzz.js';

/** Rate limits are tested elsewhere: here they would only hide the handlers behind 429s. */
export const FUZZ_ENV: Record<string, string> = {
  IP_RATE_LIMIT_PER_MINUTE: '0',
  IP_COSTLY_LIMIT_PER_MINUTE: '0',
  CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '10000000',
  MANUAL_CLAIM_COOLDOWN_SECONDS: '0',
  // FUZZ_LOG_LEVEL=error shows the server's own account of a failing case.
  LOG_LEVEL: process.env['FUZZ_LOG_LEVEL'] ?? 'silent',
  SSE_MAX_PER_IP: '100000',
  SSE_MAX_TOTAL: '1000000',
};

const DEPOSIT = 50_000_000_000n;
export const PRICE = 5000n;

/** A buyer whose next voucher is signed on demand: `next()` always signs a higher cumulative. */
export interface FuzzBuyer extends Buyer {
  next(): { channelId: string; cumulative: string; signature: string };
  signAny(channelId: bigint, cumulative: bigint): string;
}

export interface World {
  h: Harness;
  target: Target;
  pool: Pool;
  passphrase: string;
  buyers: { verify: FuzzBuyer; settle: FuzzBuyer; voucher: FuzzBuyer };
  receipts: { id: string; token: string }[];
  close(): Promise<void>;
}

export async function startWorld(): Promise<World> {
  const h = await startHarness(FUZZ_ENV);
  const info = await h.ledger.info();
  const vouchers = voucherContext(info.passphrase, info.contracts.channel);
  const buyers = {
    verify: fuzzBuyer(await h.buyer({ deposit: DEPOSIT }), vouchers),
    settle: fuzzBuyer(await h.buyer({ deposit: DEPOSIT }), vouchers),
    voucher: fuzzBuyer(await h.buyer({ deposit: DEPOSIT }), vouchers),
  };
  const receipts: World['receipts'] = [];
  for (let i = 0; i < 3; i++) {
    const res = await h.verify(buyers.verify.next());
    const receipt = (
      (res.body['extra'] as Record<string, unknown>)['receipt'] as { receipt?: { id?: string } } | undefined
    )?.receipt;
    if (res.body['isValid'] === true && receipt?.id)
      receipts.push({ id: receipt.id, token: String((res.body['extra'] as Record<string, unknown>)['attestToken']) });
  }
  // A payment in the flat form carries no resource: its revenue row has resource '' (a 500 once).
  const flat = await fetch(`${h.url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      x402Version: 2,
      paymentPayload: { x402Version: 2, scheme: 'channel', network: info.network, payload: buyers.verify.next() },
      paymentRequirements: h.requirements(),
    }),
  });
  if (((await flat.json()) as { isValid?: unknown }).isValid !== true)
    throw new Error('the flat-form payment of the fuzz world was refused');
  const stranger = randomKeypair();
  const grant = await h.ledger.faucet(stranger.address);
  const vars: Record<string, string> = {
    payer: buyers.verify.keys.address,
    payee: buyers.verify.payee,
    asset: info.contracts.asset,
    channelContract: info.contracts.channel,
    signer: h.f.address,
    stranger: stranger.address,
    faucetTx: grant.hash,
    ...Object.fromEntries(
      receipts.flatMap((r, i) => [
        [`receipt${i}`, r.id],
        [`attestToken${i}`, r.token],
      ]),
    ),
  };
  const channelIds = Object.values(buyers).map((b) => b.channelId.toString());
  const target = newTarget(h.url, vars);
  const pool = poolOf(h.url, vars, channelIds, receipts, grant.hash, info.network);
  return {
    h,
    target,
    pool,
    passphrase: info.passphrase,
    buyers,
    receipts,
    async close() {
      target.agent.destroy();
      await h.close();
    },
  };
}

function fuzzBuyer(b: Buyer, vouchers: VoucherContext): FuzzBuyer {
  let cumulative = 0n;
  const signAny = (channelId: bigint, amount: bigint) => toHex(vouchers.sign(b.voucherKey, channelId, amount));
  return {
    ...b,
    signAny,
    next() {
      cumulative += PRICE;
      return {
        channelId: b.channelId.toString(),
        cumulative: cumulative.toString(),
        signature: signAny(b.channelId, cumulative),
      };
    },
  };
}

function poolOf(
  url: string,
  vars: Record<string, string>,
  channelIds: string[],
  receipts: World['receipts'],
  tx: string,
  network: string,
): Pool {
  const addresses = [
    vars['payer']!,
    vars['payee']!,
    vars['asset']!,
    vars['channelContract']!,
    vars['signer']!,
    vars['stranger']!,
  ];
  const receiptIds = receipts.map((r) => r.id);
  const amounts = ['1', '4999', '5000', '5001', '50000000000', '50000000001', '100000000000'];
  const byKey: [RegExp, readonly string[]][] = [
    [/^(channelid|id@channels)$/i, [...channelIds, '0', '999999']],
    [/^(payto|payee|payer|address|account|asset|channelcontract|source|to|owner|agentkey|signer)$/i, addresses],
    [/^(receiptid|id@receipts)$/i, receiptIds],
    [/^(tx|hash)$/i, [tx, tx.toUpperCase()]],
    [/^(network)$/i, [network, 'stellar:testnet', 'stellar:pubnet', 'eip155:8453']],
    [/^(cumulative|amount|deposit|slicecost|initialcharge|mindeposit|sliceamount|limit)$/i, amounts],
    [
      /^(facilitator|url|resource)$/i,
      [
        url,
        `${url}/demo/book`,
        'http://x',
        'ftp://x/y',
        'javascript:alert(1)',
        'http://user:pw@x/',
        `${url}/${'a'.repeat(2100)}`,
      ],
    ],
    [/^(cursor)$/i, ['eyJwIjoxfQ', 'eyJwIjotMX0', 'eyJwIjoxZTMwOH0', 'bnVsbA', 'W10', '!!!']],
    [/^(authorization)$/i, receipts.map((r) => `Bearer ${r.token}`)],
  ];
  const all = [...addresses, ...channelIds, ...receiptIds, tx];
  return {
    all,
    valuesFor(key: string) {
      for (const [re, values] of byKey) if (re.test(key)) return values;
      return [];
    },
  };
}

/** A fresh source account for a ledger transaction: its first seq is 1. */
export function freshSource(): Keypair {
  return randomKeypair();
}
