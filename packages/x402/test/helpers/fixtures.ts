// Shared fixtures for the unit tests: a svc-shaped /supported kind and channel terms.
import { contractFromRaw, randomBytes, randomKeypair } from '@svc/core';
import type { PaymentRequirements } from '@svc/core';
import { ChannelSigner } from '@svc/sdk';
import type { SupportedKind } from '@x402/core/types';

export const PASSPHRASE = 'Standalone Network ; February 2017';

export function fixture() {
  const asset = contractFromRaw(randomBytes(32));
  const channelContract = contractFromRaw(randomBytes(32));
  const payTo = randomKeypair().address;
  const kind: SupportedKind = {
    x402Version: 2,
    scheme: 'channel',
    network: 'stellar:local',
    extra: {
      asset,
      assetCode: 'USDC',
      decimals: 7,
      channelContract,
      areFeesSponsored: true,
      facilitator: 'http://127.0.0.1:9',
      receiptSigner: randomKeypair().address,
    },
  };
  const terms: PaymentRequirements = {
    scheme: 'channel',
    network: 'stellar:local',
    asset,
    payTo,
    amount: '5000',
    unit: 'request',
    maxTimeoutSeconds: 60,
    extra: { channelContract, minDeposit: '5000000', facilitator: 'http://127.0.0.1:9', areFeesSponsored: true },
  };
  const voucherKey = randomKeypair();
  const signer = (deposit = 1_000_000n, channelId = 7n) =>
    new ChannelSigner({
      channelId,
      deposit,
      voucherKey,
      networkPassphrase: PASSPHRASE,
      channelContract,
      network: 'stellar:local',
      payee: payTo,
      asset,
    });
  return { asset, channelContract, payTo, kind, terms, voucherKey, signer };
}
