// Shared fixtures for the unit tests: svc-shaped /supported kinds, and channel and batch-settlement terms.
import { batchTermsOf, contractFromRaw, randomBytes, randomKeypair } from '@svc/core';
import type { BatchRequirements, PaymentRequirements } from '@svc/core';
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
  const receiverAuthorizer = randomKeypair().address;
  const batchKind: SupportedKind = {
    x402Version: 2,
    scheme: 'batch-settlement',
    network: 'stellar:local',
    extra: { ...kind.extra, receiverAuthorizer },
  };
  const batchTerms: BatchRequirements = batchTermsOf(terms, receiverAuthorizer);
  const voucherKey = randomKeypair();
  const signer = (deposit = 1_000_000n, channelId = 7n, bound: string | null = receiverAuthorizer) =>
    new ChannelSigner({
      channelId,
      deposit,
      voucherKey,
      networkPassphrase: PASSPHRASE,
      channelContract,
      network: 'stellar:local',
      payee: payTo,
      asset,
      ...(bound === null ? {} : { receiverAuthorizer: bound }),
    });
  return { asset, channelContract, payTo, kind, terms, receiverAuthorizer, batchKind, batchTerms, voucherKey, signer };
}
