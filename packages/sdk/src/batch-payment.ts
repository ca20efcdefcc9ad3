// Paying with x402's `batch-settlement` from a ChannelSigner, shared by payFetch and streamPaid:
// which option of a 402 to pay with, the payload (a voucher, or a deposit payload that carries the
// channel's opening or top-up), and what the answer means for the books.
//
// A channel bound to the option's receiver authorizer pays it; a channel bound to none pays
// `channel`. A signer function is asked for a bound channel first — and, where the facilitator
// sponsors deposits (`extra.areFeesSponsored`), for one opened by the first payment's deposit
// payload (Wallet.signerFor's `byDeposit`) — so a buyer with funds and no channel pays its first
// request with one header.
import {
  BATCH_SCHEME,
  BatchRequirementsSchema,
  batchCode,
  chargedAfter,
  chargedProved,
  channelTermsOf,
  PaymentResponseSchema,
  safeParse,
} from '@svc/core';
import type {
  BatchRequirements,
  BooksVerdict,
  PaidCeiling,
  PaymentRequired,
  PaymentRequirements,
  PaymentResponse,
} from '@svc/core';
import type { ChannelSigner } from './channel-signer.js';

/** What a signer function is asked for (Wallet.signerFor's options). */
export interface SignerForOptions {
  /** A channel bound to this receiver authorizer (batch-settlement); unset: a channel bound to none. */
  receiverAuthorizer?: string;
  /**
   * batch-settlement with a facilitator that sponsors openings (`extra.areFeesSponsored`): a
   * channel this wallet needs is not opened (nor an exhausted one topped up) by a transaction of
   * its own; the opening is signed and left on the signer (`pendingDeposit`) for the next payment's
   * deposit payload to carry. Only with `receiverAuthorizer`.
   */
  byDeposit?: boolean;
}

export type SignerChoice =
  ChannelSigner | ((terms: PaymentRequirements, options?: SignerForOptions) => Promise<ChannelSigner>);

/** The refusals whose 402 carries the channel's proved state for the buyer to catch up. */
export const CORRECTIVE_CODES: ReadonlySet<string> = new Set([
  batchCode('cumulative_amount_mismatch'),
  batchCode('cumulative_below_claimed'),
]);

/** The 402's batch-settlement options that parse as svc's, in the seller's order. */
export function batchOptions(terms: PaymentRequired): BatchRequirements[] {
  const found: BatchRequirements[] = [];
  for (const option of terms.accepts) {
    if (option.scheme !== BATCH_SCHEME) continue;
    const parsed = safeParse(BatchRequirementsSchema, option);
    if (parsed.success) found.push(parsed.data);
  }
  return found;
}

/**
 * The signer and the scheme it pays: the batch-settlement option `offer` when the channel is bound
 * to its receiver authorizer, else `channel` with `fallback` (null: the seller offers no `channel`
 * option, and an unbound channel cannot pay).
 */
export async function chooseSigner(
  given: SignerChoice,
  offer: BatchRequirements | null,
  fallback: PaymentRequirements | null,
): Promise<{ signer: ChannelSigner; batch: BatchRequirements | null } | null> {
  if (typeof given !== 'function') {
    if (offer !== null && given.receiverAuthorizer === offer.extra.receiverAuthorizer)
      return { signer: given, batch: offer };
    return fallback ? { signer: given, batch: null } : null;
  }
  if (offer) {
    const signer = await given(channelTermsOf(offer), {
      receiverAuthorizer: offer.extra.receiverAuthorizer,
      byDeposit: offer.extra.areFeesSponsored,
    });
    if (signer.receiverAuthorizer === offer.extra.receiverAuthorizer) return { signer, batch: offer };
    // A function that keeps one channel per seller, whatever is asked: that channel pays with `channel`.
    if (signer.receiverAuthorizer === null && fallback) return { signer, batch: null };
  }
  return fallback ? { signer: await given(fallback), batch: null } : null;
}

/** A payment signed under batch-settlement: its payload, and what its answer is checked against. */
export interface BatchSigned extends PaidCeiling {
  payload: Record<string, unknown>;
  /** The payment carries the channel's deposit (a deposit payload). */
  deposit: boolean;
}

/** The next payment on the channel: a ceiling of what was charged plus `price`, with the pending deposit if any. */
export function signBatch(signer: ChannelSigner, price: bigint): BatchSigned {
  const previous = signer.cumulative;
  const v = signer.next(price);
  const voucher = { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature };
  const pending = signer.pendingDeposit;
  const payload = pending
    ? {
        type: 'deposit',
        deposit: { amount: pending.amount.toString(), transaction: pending.transaction },
        voucher,
      }
    : { type: 'voucher', voucher };
  return { payload, deposit: pending !== null, previous, ceiling: BigInt(v.cumulative), price };
}

/** The x402 settle answer of a batch-settlement payment: its top-level fields and svc's receipt envelope. */
export interface BatchAnswer {
  success: boolean;
  /** A deposit payload's answer: the deposit transaction and what it deposited. */
  transaction: string;
  amount: string | null;
  extra: unknown;
  /** svc's envelope with the signed receipt (extra.receipt); null when nothing was charged. */
  receipt: PaymentResponse | null;
}

export function readBatchAnswer(value: unknown): BatchAnswer | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as { success?: unknown; transaction?: unknown; amount?: unknown; extra?: unknown };
  if (typeof v.success !== 'boolean') return null;
  const extra = v.extra as { receipt?: unknown } | undefined;
  const receipt = safeParse(PaymentResponseSchema, extra?.receipt);
  return {
    success: v.success,
    transaction: typeof v.transaction === 'string' ? v.transaction : '',
    amount: typeof v.amount === 'string' ? v.amount : null,
    extra: v.extra,
    receipt: receipt.success ? receipt.data : null,
  };
}

/**
 * The books after a paid answer: the deposit it carried is on the ledger, and the charged total
 * moves by the charge when the answer adds up. When it does not, the books stay and the reason is
 * returned: the caller pays no more on that account.
 */
export function adoptAnswer(signer: ChannelSigner, signed: BatchSigned, answer: BatchAnswer): BooksVerdict {
  if (signed.deposit) signer.depositLanded();
  const verdict = chargedAfter(signer, signed, answer.extra);
  if (!verdict.ok)
    return {
      ok: false,
      reason: `the seller's answer to the voucher for ${signed.ceiling} does not add up: ${verdict.reason}`,
    };
  signer.confirm(verdict.charged);
  return verdict;
}

/** A corrective 402 that proves the channel's charged total (its own voucher key signed it): true when the books moved. */
export function catchUp(signer: ChannelSigner, refused: PaymentRequired | null): boolean {
  const option = refused?.accepts.find((a) => a.scheme === BATCH_SCHEME && a.payTo === signer.payee);
  const verdict = chargedProved(signer, option?.extra);
  if (!verdict.ok || verdict.charged === signer.cumulative) return false;
  signer.rebase(verdict.charged);
  return true;
}
