// Networks (docs/protocol.md#networks-and-ledgers). The service runs on test networks only.
import { sha256 } from '#crypto';
import { utf8 } from './bytes.js';

export const NETWORKS = {
  'stellar:local': { passphrase: 'Standalone Network ; February 2017', explorer: null },
  'stellar:testnet': {
    passphrase: 'Test SDF Network ; September 2015',
    explorer: 'https://stellar.expert/explorer/testnet/tx/',
  },
} as const;

export type NetworkName = keyof typeof NETWORKS;

export const PUBNET_PASSPHRASE = 'Public Global Stellar Network ; September 2015';

export function isNetworkName(value: unknown): value is NetworkName {
  return typeof value === 'string' && Object.hasOwn(NETWORKS, value);
}

export function passphraseOf(network: NetworkName): string {
  return NETWORKS[network].passphrase;
}

/** The network a passphrase belongs to; refuses the public network outright. */
export function networkOfPassphrase(passphrase: string): NetworkName {
  if (passphrase === PUBNET_PASSPHRASE)
    throw new Error('refused: svc runs on test networks only; mainnet funds must not be sent');
  for (const [name, net] of Object.entries(NETWORKS)) if (net.passphrase === passphrase) return name as NetworkName;
  throw new Error(`unknown network passphrase: ${passphrase}`);
}

const ids = new Map<string, Uint8Array>();

/** sha256 of the passphrase, as Stellar defines the network id. */
export function networkId(passphrase: string): Uint8Array {
  let id = ids.get(passphrase);
  if (!id) {
    id = sha256(utf8(passphrase));
    ids.set(passphrase, id);
  }
  return id;
}
