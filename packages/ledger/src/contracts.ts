// The local ledger's network and the addresses of its contracts (docs/protocol.md#networks-and-ledgers and #the-local-ledger). The
// addresses are derived from the network id, so every local ledger, on every machine and after
// every restart, names the same contracts and vouchers signed for one stay valid on another.
import {
  concatBytes,
  contractFromRaw,
  fromHex,
  NETWORKS,
  networkId,
  publicKeyFromAccount,
  sha256,
  utf8,
} from '@svc/core';
import type { NetworkName } from '@svc/core';

export const LOCAL_NETWORK: NetworkName = 'stellar:local';
export const LOCAL_PASSPHRASE = NETWORKS[LOCAL_NETWORK].passphrase;
export const ASSET_CODE = 'USDC';
export const ASSET_DECIMALS = 7;
/** The first ledger of a fresh data directory. */
export const GENESIS_LEDGER = 1;
/** docs/protocol.md#channels-and-records: the payer may close only this many ledgers after the channel's expiry. */
export const PAYER_CLOSE_DELAY_LEDGERS = 120;
/** The DEX pool's second test asset (§9 dex.swap), a token contract like the main asset. */
export const DEX_ASSET_CODE = 'XLM';
export const DEX_ASSET_DECIMALS = 7;
/**
 * The fixed rate of the DEX pool: 1 unit of the main asset (USDC) = 10 units of XLM. Both have 7
 * decimals, so it holds for base units too: USDC → XLM multiplies by 10, XLM → USDC divides by
 * 10 and rounds down (the pool never pays out more than the rate).
 */
export const DEX_RATE = 10n;

/** The pool's holdings at genesis, in base units of each asset. */
export interface DexReserves {
  asset: bigint;
  xlm: bigint;
}

/** 1,000,000,000 USDC and 10,000,000,000 XLM: far more than any faucet-funded test can drain. */
export const DEX_GENESIS_RESERVES: DexReserves = { asset: 10n ** 16n, xlm: 10n ** 17n };

/** Base units of the asset in one whole unit, and base units of a pool share in one whole share. */
export const ASSET_UNIT = 10n ** BigInt(ASSET_DECIMALS);
/** The credit pool's fee on a line, in basis points of its limit (2%), booked as profit when repaid. */
export const POOL_LINE_FEE_BPS = 200n;
/** A credit line whose health (value × 10000 / debt) is below this (110%) may be liquidated. */
export const POOL_LIQUIDATION_THRESHOLD_BPS = 11_000n;

const CONTRACT_DOMAINS = {
  channel: 'svc:contract:channel:v1',
  asset: 'svc:contract:asset:v1',
  creditPool: 'svc:contract:credit-pool:v1',
  dex: 'svc:contract:dex:v1',
  xlm: 'svc:contract:asset-xlm:v1',
} as const;
const SMART_ACCOUNT_DOMAIN = 'svc:account:v1';

export interface LocalContracts {
  channel: string;
  asset: string;
  /** The credit pool, "the float" (docs/protocol.md#the-local-ledger pool.*): investors' deposits lent to smart accounts. */
  creditPool: string;
  /** The fixed-rate DEX pool between `asset` and `xlm` (op dex.swap). */
  dex: string;
  /** The second test asset (XLM, 7 decimals), traded only through the DEX pool. */
  xlm: string;
}

function deriveContract(domain: string, passphrase: string): string {
  return contractFromRaw(sha256(concatBytes(utf8(domain), networkId(passphrase))));
}

export function localContracts(passphrase: string = LOCAL_PASSPHRASE): LocalContracts {
  return {
    channel: deriveContract(CONTRACT_DOMAINS.channel, passphrase),
    asset: deriveContract(CONTRACT_DOMAINS.asset, passphrase),
    creditPool: deriveContract(CONTRACT_DOMAINS.creditPool, passphrase),
    dex: deriveContract(CONTRACT_DOMAINS.dex, passphrase),
    xlm: deriveContract(CONTRACT_DOMAINS.xlm, passphrase),
  };
}

/**
 * The address of the smart account made by the `account.create` tx `txHash` for `owner`:
 * sha256("svc:account:v1" ‖ network id ‖ owner's raw key ‖ tx hash). The tx hash covers the
 * creator's seq, so every create names a new account, and the creator can compute the address
 * before submitting.
 */
export function smartAccountAddress(owner: string, txHash: string, passphrase: string = LOCAL_PASSPHRASE): string {
  return contractFromRaw(
    sha256(
      concatBytes(utf8(SMART_ACCOUNT_DOMAIN), networkId(passphrase), publicKeyFromAccount(owner), fromHex(txHash, 32)),
    ),
  );
}
