// The amount checks of a batch-settlement payment and its refusals (batch-payments.ts): the voucher
// is a ceiling — what was charged on the channel plus the price — within the deposit and above what
// was claimed; a charge stays under the ceiling its /verify reserved the channel for. A refusal whose
// amounts do not match brings the channel's state and its highest voucher, so a buyer that lost its
// books catches up in one round trip (the corrective 402).
import { formatUnits, batchCode, batchCodeOf } from '@svc/core';
import type { BatchCodeName, BatchRequirements, ChannelState } from '@svc/core';
import type { ChannelRecord } from '../store/port.js';
import type { BatchInput, BatchRefused } from './batch-types.js';
import type { DepositRefused } from './deposits.js';
import type { Rejection } from './payment-checks.js';

/** How long a verified payment holds its channel, at least and at most (its terms' maxTimeoutSeconds between). */
const RESERVATION_MIN_S = 60;
const RESERVATION_MAX_S = 600;

/** The voucher is for exactly what was charged plus `price`, within the deposit and above what was claimed. */
export function fits(
  record: ChannelRecord,
  ceiling: bigint,
  price: bigint,
  payer: string,
): { ok: true } | BatchRefused {
  if (ceiling > record.deposit)
    return {
      ...refuse(
        'cumulative_exceeds_balance',
        `The voucher's ceiling ${ceiling} exceeds the channel's balance ${record.deposit}: top the channel up.`,
      ),
      payer,
    };
  if (ceiling <= record.claimed)
    return mismatch(
      record,
      'cumulative_below_claimed',
      `The voucher's ceiling ${ceiling} is not above what the ledger shows claimed (${record.claimed}).`,
      payer,
    );
  if (ceiling !== record.charged + price)
    return mismatch(
      record,
      'cumulative_amount_mismatch',
      `The voucher's ceiling is ${ceiling}, but ${record.charged} was charged on channel ${record.id} and the price is ${price}: sign ${record.charged + price}.`,
      payer,
    );
  return { ok: true };
}

/** A charge under the ceiling this payment's /verify reserved the channel for. */
export function within(
  record: ChannelRecord,
  ceiling: bigint,
  charge: bigint,
  payer: string,
): { ok: true } | BatchRefused {
  if (record.charged + charge > ceiling)
    return {
      ...refuse(
        'charge_exceeds_signed_cumulative',
        `Charging ${charge} on top of the ${record.charged} charged would pass the voucher's ceiling ${ceiling}.`,
      ),
      payer,
    };
  return { ok: true };
}

export function reservedByOther(record: ChannelRecord, fingerprint: string, now: string): boolean {
  const r = record.reservation;
  return r !== null && r.until > now && r.fingerprint !== fingerprint;
}

export function ownsReservation(record: ChannelRecord, fingerprint: string, now: string): boolean {
  const r = record.reservation;
  return r !== null && r.until > now && r.fingerprint === fingerprint;
}

/** What the voucher leaves to charge above what was charged. */
export function ceilingRoom(record: ChannelRecord, ceiling: bigint): bigint {
  return ceiling > record.charged ? ceiling - record.charged : 0n;
}

/** The price the buyer signed for: its copy of the terms, else the charge itself. */
export function priceOf(input: BatchInput): bigint {
  const echoed = input.payment.accepted?.['amount'];
  return typeof echoed === 'string' && /^[0-9]{1,39}$/.test(echoed) ? BigInt(echoed) : input.amount;
}

export function reservationMs(requirements: BatchRequirements): number {
  return Math.min(RESERVATION_MAX_S, Math.max(RESERVATION_MIN_S, requirements.maxTimeoutSeconds)) * 1000;
}

/** A refusal that brings the buyer's books back: the channel as it is, and its highest voucher. */
export function mismatch(record: ChannelRecord, name: BatchCodeName, message: string, payer: string): BatchRefused {
  const voucherState =
    record.lastSignature === null
      ? undefined
      : { signedMaxClaimable: formatUnits(record.lastAccepted), signature: record.lastSignature };
  return {
    ...refuse(name, message),
    payer,
    channelState: channelStateOf(record),
    ...(voucherState ? { voucherState } : {}),
  };
}

export function busy(record: ChannelRecord, payer: string): BatchRefused {
  return {
    ...refuse(
      'channel_busy',
      `Channel ${record.id} is serving another payment; retry once it is answered (a channel pays one request at a time).`,
    ),
    payer,
    retryAfter: 1,
  };
}

export function refuse(name: BatchCodeName, message: string): BatchRefused {
  return { ok: false, code: batchCode(name), message };
}

/** The channel as a batch-settlement answer shows it (design: channelState). */
export function channelStateOf(record: ChannelRecord): ChannelState {
  return {
    channelId: record.id.toString(),
    balance: formatUnits(record.deposit),
    totalClaimed: formatUnits(record.claimed),
    chargedCumulativeAmount: formatUnits(record.charged),
    refundNonce: String(record.refundNonce),
    expiryLedger: record.expiryLedger,
  };
}

/** A refusal of the checks every payment passes, in the scheme's codes (RATE_LIMITED stays a 429). */
export function refusal(r: Rejection): BatchRefused {
  if (r.code === 'RATE_LIMITED')
    return {
      ok: false,
      code: 'RATE_LIMITED',
      message: r.message,
      ...(r.retryAfter ? { retryAfter: r.retryAfter } : {}),
    };
  return { ok: false, code: batchCodeOf(r.code) ?? batchCode('voucher_payload'), message: r.message };
}

export function depositRefusal(r: DepositRefused): BatchRefused {
  const { ok, code, message, payer, retryAfter } = r;
  return {
    ok,
    code: code === 'RATE_LIMITED' ? code : batchCode(code),
    message,
    ...(payer ? { payer } : {}),
    ...(retryAfter ? { retryAfter } : {}),
  };
}
