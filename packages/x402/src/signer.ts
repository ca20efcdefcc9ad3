// What the scheme clients need from a channel: the svc SDK's ChannelSigner and Wallet have exactly
// these shapes (structurally), so @svc/x402 does not depend on the SDK and its ledger client.
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

/**
 * A channel's books as `batch-settlement` reads them: `cumulative` is what was charged, a voucher
 * (`next(price)`) the ceiling charged + price, which a seller may charge less of.
 */
export interface BatchVoucherSigner extends VoucherSigner {
  /** The highest amount this signer knows it signed: no account of the channel above it is believed. */
  readonly signed: bigint;
  /** The receiver authorizer the channel is bound to; null when none or not known. */
  readonly receiverAuthorizer: string | null;
  /** Sets what was charged, backwards too; throws outside 0 … signed. */
  rebase(charged: bigint): void;
  /** Whether `signatureHex` is this channel's own voucher for `amount` (then `signed` is at least `amount`). */
  recognize(amount: bigint, signatureHex: string): boolean;
  /**
   * The payer's signed opening (or top-up) of the channel that the next payment carries as a
   * deposit payload, while it is not known on the ledger; absent or null: pay by voucher.
   */
  readonly pendingDeposit?: { amount: bigint; transaction: Record<string, unknown>; hash: string } | null;
  /** The deposit was answered paid: it is on the ledger. */
  depositLanded?(): void;
  /** The payment that carried the deposit was refused: the source checks the ledger before the next. */
  depositRefused?(): void;
  /** Signs a cooperative refund of `amount` (null: all not charged) under `nonce` (core batch-refund.ts); for `refund`. */
  signRefund?(amount: bigint | null, nonce: bigint): string;
  /** The deposit after a refund. */
  refundedTo?(deposit: bigint): void;
}

/** Chooses (or opens) a channel bound to a receiver authorizer. The SDK's `Wallet` is one. */
export interface BatchChannelSource {
  signerFor(
    requirements: PaymentRequirements,
    count: bigint,
    /** byDeposit: a channel it lacks is opened (or topped up) by the next payment's deposit payload. */
    options: { receiverAuthorizer: string; byDeposit?: boolean },
  ): Promise<BatchVoucherSigner>;
  /** The channel already there for these terms, or null — never a new one (what `refund` asks). */
  channelFor?(
    requirements: PaymentRequirements,
    options: { receiverAuthorizer: string },
  ): Promise<BatchVoucherSigner | null>;
  /** Persists the channels' books (the SDK's Wallet writes its file). */
  save?(): void;
}

/** A source that always pays from one channel (for either scheme). */
export function singleChannel<S extends VoucherSigner>(signer: S): { signerFor(): Promise<S> } {
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
