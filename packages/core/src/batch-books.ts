// What a batch-settlement buyer believes of a seller's account of its channel. The books move on
// two occasions only: a paid answer whose charge adds up, and a corrective 402 whose state is
// proved by a voucher the channel's own key signed. Neither can take the books above what the
// buyer signed, so a seller that lies cannot make the next voucher pay for more than it owes.
import { CorrectionSchema } from './api.js';
import { ChannelStateSchema } from './batch-settlement.js';
import { safeParse } from './safe-parse.js';

/** What the books need of a channel's signer: its id, the most it signed, and its own signatures. */
export interface BooksSigner {
  readonly channelId: bigint;
  /** The highest amount this signer knows it signed: no account of the channel above it is believed. */
  readonly signed: bigint;
  /** Whether `signatureHex` is this channel's own voucher for `amount` (then `signed` is at least `amount`). */
  recognize(amount: bigint, signatureHex: string): boolean;
}

const UNITS_RE = /^[0-9]{1,39}$/;

export type BooksVerdict = { ok: true; charged: bigint } | { ok: false; reason: string };

export interface PaidCeiling {
  /** The signer's charged total when it signed. */
  previous: bigint;
  /** The ceiling it signed: previous + price. */
  ceiling: bigint;
  /** The price it signed for (the terms' amount). */
  price: bigint;
}

/**
 * The channel's charged total after a paid answer (`extra` of PAYMENT-RESPONSE): the charge is a
 * base-unit amount within the price, the state is this channel's, and its charged total is the
 * previous one plus the charge, under the ceiling just signed.
 */
export function chargedAfter(signer: BooksSigner, paid: PaidCeiling, extra: unknown): BooksVerdict {
  const fields = typeof extra === 'object' && extra !== null ? (extra as Record<string, unknown>) : {};
  const charge = fields['chargedAmount'];
  if (typeof charge !== 'string' || !UNITS_RE.test(charge))
    return { ok: false, reason: 'the answer says no charge (extra.chargedAmount)' };
  if (BigInt(charge) > paid.price)
    return { ok: false, reason: `the answer charged ${charge}, above the price of ${paid.price}` };
  const state = safeParse(ChannelStateSchema, fields['channelState']);
  if (!state.success) return { ok: false, reason: 'the answer has no channel state (extra.channelState)' };
  if (state.data.channelId !== signer.channelId.toString())
    return { ok: false, reason: `the answer is for channel ${state.data.channelId}` };
  const total = BigInt(state.data.chargedCumulativeAmount);
  const expected = paid.previous + BigInt(charge);
  if (total !== expected)
    return {
      ok: false,
      reason: `the answer's charged total ${total} is not the ${paid.previous} charged before plus the ${charge} charged now`,
    };
  if (total > paid.ceiling)
    return { ok: false, reason: `the charged total ${total} passes the voucher's ${paid.ceiling}` };
  return { ok: true, charged: total };
}

/**
 * The charged total a corrective 402's batch-settlement option proves (`extra.channelState` and
 * `extra.voucherState`): the highest voucher is the channel's own, the charged total is within it
 * and not below what the ledger shows claimed.
 */
export function chargedProved(signer: BooksSigner, extra: unknown): BooksVerdict {
  const parsed = safeParse(CorrectionSchema, extra);
  if (!parsed.success) return { ok: false, reason: 'the 402 carries no channel state' };
  const { channelState, voucherState } = parsed.data;
  if (channelState.channelId !== signer.channelId.toString())
    return { ok: false, reason: `the 402's state is for channel ${channelState.channelId}` };
  if (!voucherState) return { ok: false, reason: 'the 402 shows no voucher to prove its state' };
  const signed = BigInt(voucherState.signedMaxClaimable);
  if (!signer.recognize(signed, voucherState.signature))
    return { ok: false, reason: `the 402's voucher for ${signed} was not signed by this channel's voucher key` };
  const charged = BigInt(channelState.chargedCumulativeAmount);
  if (charged > signed)
    return { ok: false, reason: `the 402 says ${charged} was charged, above its voucher's ${signed}` };
  if (signed > signer.signed)
    return { ok: false, reason: `the 402's voucher ${signed} is above the ${signer.signed} this signer signed` };
  const claimed = BigInt(channelState.totalClaimed);
  if (charged < claimed)
    return { ok: false, reason: `the 402 says ${charged} was charged, below the ${claimed} claimed on the ledger` };
  return { ok: true, charged };
}
