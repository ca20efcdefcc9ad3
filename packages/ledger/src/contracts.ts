// The local ledger's network and the addresses of its contracts (PROTOCOL.md §1, §9). The
// addresses are derived from the network id, so every local ledger, on every machine and after
// every restart, names the same contracts and vouchers signed for one stay valid on another.
import { concatBytes, contractFromRaw, NETWORKS, networkId, sha256, utf8 } from '@svc/core';
import type { NetworkName } from '@svc/core';

export const LOCAL_NETWORK: NetworkName = 'stellar:local';
export const LOCAL_PASSPHRASE = NETWORKS[LOCAL_NETWORK].passphrase;
export const ASSET_CODE = 'USDC';
export const ASSET_DECIMALS = 7;
/** The first ledger of a fresh data directory. */
export const GENESIS_LEDGER = 1;
/** PROTOCOL.md §7: the payer may close only this many ledgers after the channel's expiry. */
export const PAYER_CLOSE_DELAY_LEDGERS = 120;

const CONTRACT_DOMAINS = {
  channel: 'svc:contract:channel:v1',
  asset: 'svc:contract:asset:v1',
  creditPool: 'svc:contract:credit-pool:v1',
} as const;

export interface LocalContracts {
  channel: string;
  asset: string;
  /** Reserved for the credit pool (PROTOCOL.md §9); no op uses it yet. */
  creditPool: string;
}

function deriveContract(domain: string, passphrase: string): string {
  return contractFromRaw(sha256(concatBytes(utf8(domain), networkId(passphrase))));
}

export function localContracts(passphrase: string = LOCAL_PASSPHRASE): LocalContracts {
  return {
    channel: deriveContract(CONTRACT_DOMAINS.channel, passphrase),
    asset: deriveContract(CONTRACT_DOMAINS.asset, passphrase),
    creditPool: deriveContract(CONTRACT_DOMAINS.creditPool, passphrase),
  };
}
