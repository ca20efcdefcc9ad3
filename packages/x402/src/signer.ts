// What the scheme client needs from a channel: the svc SDK's ChannelSigner has exactly this shape
// (structurally), so @svc/x402 does not depend on the SDK and its ledger client.
import type { ChannelPayload, PaymentRequirements } from '@svc/core';

export interface VoucherSigner {
  readonly channelId: bigint;
  readonly network: string;
  readonly payee: string;
  readonly asset: string;
  readonly channelContract: string;
  /** The last cumulative the facilitator accepted, as far as the signer knows. */
  readonly cumulative: bigint;
  /** The voucher that adds `amount` to the accepted cumulative; throws past the deposit. */
  next(amount: bigint): ChannelPayload;
  /** Records an accepted cumulative (never moves backwards). */
  confirm(cumulative: bigint): void;
}

/** Chooses (or opens) the channel that pays given terms. The SDK's `Wallet` is one. */
export interface ChannelSource {
  signerFor(requirements: PaymentRequirements): Promise<VoucherSigner>;
}

/** A source that always pays from one channel. */
export function singleChannel(signer: VoucherSigner): ChannelSource {
  return { signerFor: () => Promise.resolve(signer) };
}

/** Why a channel cannot pay these terms, or null when it can. */
export function channelMismatch(signer: VoucherSigner, terms: PaymentRequirements): string | null {
  if (signer.payee !== terms.payTo)
    return `channel ${signer.channelId} pays ${signer.payee}, the seller is ${terms.payTo}`;
  if (signer.network !== terms.network)
    return `channel ${signer.channelId} is on ${signer.network}, the seller wants ${terms.network}`;
  if (signer.asset !== terms.asset)
    return `channel ${signer.channelId} holds ${signer.asset}, the seller wants ${terms.asset}`;
  if (signer.channelContract !== terms.extra.channelContract)
    return `channel ${signer.channelId} belongs to another channel contract`;
  return null;
}
