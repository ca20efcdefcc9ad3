// The ledger's asset as @x402/core's spend controls want it described (`DefaultAsset`): the
// client refuses any asset its scheme client does not recognise through `findDefaultAsset`. The
// description comes from a facilitator the buyer trusts (GET /supported), never from the seller.
import type { SupportedResponse } from '@svc/core';
import type { DefaultAsset, Network } from '@x402/core/types';

export interface ChannelAsset extends DefaultAsset {
  network: string;
}

/** The assets a svc facilitator settles in, one per network, from its /supported answer. */
export function assetsFromSupported(supported: SupportedResponse): ChannelAsset[] {
  const out: ChannelAsset[] = [];
  for (const kind of supported.kinds) {
    const { asset, assetCode, decimals } = kind.extra;
    if (!out.some((a) => a.network === kind.network && a.asset === asset)) {
      out.push({ network: kind.network, asset, decimals, symbol: assetCode });
    }
  }
  return out;
}

export function findAsset(assets: readonly ChannelAsset[], asset: string, network: Network): ChannelAsset | undefined {
  return assets.find((a) => a.asset === asset && a.network === network);
}
