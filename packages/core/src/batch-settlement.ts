// x402 `batch-settlement` on Stellar, as svc speaks it (docs/schemes/scheme_batch_settlement_stellar.md):
// the wire types of its payment requirements, its three payload types and the channel snapshot a
// facilitator answers with, declared once as zod schemas, and the scheme's reason codes.
//
// The voucher is svc's own (voucher.ts): the same bytes and key, read as a ceiling here —
// `maxClaimableAmount` = what was charged on the channel so far + this payment's price — where the
// `channel` scheme reads it as what is owed in all.
import { z } from 'zod';
import { formatUnits, parseUnits } from './amount.js';
import { BatchRefundSchema } from './batch-refund.js';
import type { ReasonCode } from './codes.js';
import type { Decoded } from './header.js';
import { safeParse } from './safe-parse.js';
import { zChannelId, zNetwork, zSignatureHex, zUnits } from './schemas.js';
import { owedPerPayment } from './owed.js';
import { BATCH_SCHEME, ChannelStateSchema } from './batch-requirements.js';
import type { BatchRequirements } from './batch-requirements.js';
import type { Payment, PaymentRequirements } from './x402.js';

export {
  BATCH_SCHEME,
  BatchExtraSchema,
  BatchRequirementsSchema,
  ChannelStateSchema,
  VoucherStateSchema,
} from './batch-requirements.js';
export type { BatchExtra, BatchRequirements, ChannelState, VoucherState } from './batch-requirements.js';

/** Every code of the scheme is this prefix and a name (`invalid_batch_settlement_stellar_channel_busy`). */
export const BATCH_CODE_PREFIX = 'invalid_batch_settlement_stellar_';

export const BATCH_CODE_NAMES = [
  'network_mismatch',
  'scheme',
  'payload_type',
  'voucher_payload',
  'deposit_payload',
  'refund_payload',
  'channel_not_found',
  'channel_closed',
  'receiver_mismatch',
  'asset_mismatch',
  'receiver_authorizer_mismatch',
  'payer_frozen',
  'channel_expiring',
  'voucher_signature',
  'cumulative_exceeds_balance',
  'cumulative_below_claimed',
  'cumulative_amount_mismatch',
  'charge_exceeds_signed_cumulative',
  'channel_busy',
  'deposit_transaction_failed',
  'insufficient_balance',
  'refund_no_balance',
  'refund_amount_invalid',
  'refund_transaction_failed',
] as const;
export type BatchCodeName = (typeof BATCH_CODE_NAMES)[number];
export type BatchCode = `${typeof BATCH_CODE_PREFIX}${BatchCodeName}`;

export function batchCode(name: BatchCodeName): BatchCode {
  return `${BATCH_CODE_PREFIX}${name}`;
}

/** Whether `value` is one of the scheme's codes. */
export function isBatchCode(value: unknown): value is BatchCode {
  return (
    typeof value === 'string' &&
    value.startsWith(BATCH_CODE_PREFIX) &&
    (BATCH_CODE_NAMES as readonly string[]).includes(value.slice(BATCH_CODE_PREFIX.length))
  );
}

/** svc's own reason codes as the scheme names them (the ones a batch-settlement payment can meet). */
const FROM_SVC: Partial<Record<ReasonCode, BatchCodeName>> = {
  WRONG_NETWORK: 'network_mismatch',
  UNSUPPORTED_SCHEME: 'scheme',
  PAYMENT_MALFORMED: 'voucher_payload',
  CHANNEL_NOT_FOUND: 'channel_not_found',
  CHANNEL_CLOSED: 'channel_closed',
  WRONG_PAYEE: 'receiver_mismatch',
  WRONG_ASSET: 'asset_mismatch',
  ACCOUNT_FROZEN: 'payer_frozen',
  CHANNEL_EXPIRING: 'channel_expiring',
  VOUCHER_BAD_SIGNATURE: 'voucher_signature',
  CHANNEL_EXHAUSTED: 'cumulative_exceeds_balance',
  VOUCHER_NOT_INCREASING: 'cumulative_below_claimed',
  VOUCHER_UNDERPAID: 'cumulative_amount_mismatch',
  CONFLICT: 'channel_busy',
};

/** svc's reason code for one of the scheme's: what an svc error body (a stream slice's refusal) says. */
export function svcCodeOfBatch(code: BatchCode): ReasonCode {
  const name = code.slice(BATCH_CODE_PREFIX.length);
  for (const [svc, batch] of Object.entries(FROM_SVC)) if (batch === name) return svc as ReasonCode;
  return name === 'charge_exceeds_signed_cumulative' ? 'VOUCHER_UNDERPAID' : 'CONFLICT';
}

/** The scheme's code for one of svc's own, or null where svc's is the answer (RATE_LIMITED is HTTP 429). */
export function batchCodeOf(code: ReasonCode): BatchCode | null {
  const name = FROM_SVC[code];
  return name === undefined ? null : batchCode(name);
}

export const BatchVoucherSchema = z
  .object({ channelId: zChannelId, maxClaimableAmount: zUnits, signature: zSignatureHex })
  .meta({ id: 'BatchVoucher' });
export type BatchVoucher = z.infer<typeof BatchVoucherSchema>;

/** The payer's signed opening (or top-up) of the channel the voucher names, bounded in size. */
const zTransaction = z
  .union([z.string().max(16_384), z.record(z.string(), z.unknown())])
  .meta({ description: 'stellar:local: the signed ledger transaction (JSON); Stellar: the envelope XDR (base64).' });

export const BatchPayloadSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('voucher'), voucher: BatchVoucherSchema }),
    z.object({
      type: z.literal('deposit'),
      deposit: z.object({ amount: zUnits, transaction: zTransaction }),
      voucher: BatchVoucherSchema,
    }),
    // Signed over the channel's refund nonce, not a voucher (batch-refund.ts).
    BatchRefundSchema,
  ])
  .meta({ id: 'BatchPayload' });
export type BatchPayload = z.infer<typeof BatchPayloadSchema>;

/** The `extra` of a batch-settlement /settle success: the charge and the channel after it. */
export const BatchSettleExtraSchema = z.looseObject({
  chargedAmount: zUnits.optional(),
  channelState: ChannelStateSchema,
});

/** A `batch-settlement` PAYMENT-SIGNATURE payload (x402 v2 only: the buyer echoes the terms it chose). */
export const BatchPaymentPayloadSchema = z.object({
  x402Version: z.literal(2),
  accepted: z.looseObject({ scheme: z.literal(BATCH_SCHEME), network: zNetwork }),
  payload: BatchPayloadSchema,
  resource: z.looseObject({ url: z.string().max(2048) }).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

/**
 * A `batch-settlement` payment after decoding. `cumulative` is the voucher's maxClaimableAmount —
 * a ceiling — and the rest of Payment reads as for `channel`.
 */
export interface BatchPayment extends Payment {
  scheme: typeof BATCH_SCHEME;
  kind: Exclude<BatchPayload['type'], 'refund'>;
  /** A deposit payload's opening (or top-up) and its amount. */
  deposit?: { amount: bigint; transaction: string | Record<string, unknown> };
}

/** A decoded JSON `batch-settlement` payment payload → BatchPayment. */
export function decodeBatchPayment(value: unknown): Decoded<BatchPayment> {
  const parsed = safeParse(BatchPaymentPayloadSchema, value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'payload';
    return {
      ok: false,
      code: 'PAYMENT_MALFORMED',
      message: `Malformed payment: ${`${where}: ${issue?.message ?? 'invalid payload'}`.slice(0, 200)}.`,
    };
  }
  const p = parsed.data;
  if (p.payload.type === 'refund')
    return {
      ok: false,
      code: 'PAYMENT_MALFORMED',
      message: 'A refund payload pays nothing: decodeBatchRefund reads it.',
    };
  const { voucher } = p.payload;
  const payment: BatchPayment = {
    scheme: BATCH_SCHEME,
    kind: p.payload.type,
    x402Version: 2,
    network: p.accepted.network,
    channelId: BigInt(voucher.channelId),
    cumulative: parseUnits(voucher.maxClaimableAmount),
    signature: voucher.signature.toLowerCase(),
    accepted: p.accepted,
  };
  if (p.extensions) payment.extensions = p.extensions;
  if (p.payload.type === 'deposit')
    payment.deposit = { amount: parseUnits(p.payload.deposit.amount), transaction: p.payload.deposit.transaction };
  return { ok: true, value: payment };
}

/** Whether a decoded JSON payment payload names the `batch-settlement` scheme (then decodeBatchPayment reads it). */
export function isBatchPaymentPayload(value: unknown): boolean {
  const accepted = (value as { accepted?: { scheme?: unknown } } | null)?.accepted;
  return typeof accepted === 'object' && accepted !== null && accepted.scheme === BATCH_SCHEME;
}

/**
 * The `batch-settlement` option for the same terms as a `channel` option: `amount` is the most one
 * payment may charge (the price of a request, or of a slice), svc's unit and slices under `extra`,
 * and the receiver authorizer the channel must be bound to.
 */
export function batchTermsOf(terms: PaymentRequirements, receiverAuthorizer: string): BatchRequirements {
  const { extra } = terms;
  return {
    scheme: BATCH_SCHEME,
    network: terms.network,
    asset: terms.asset,
    payTo: terms.payTo,
    amount: formatUnits(owedPerPayment(terms)),
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    extra: {
      receiverAuthorizer,
      channelContract: extra.channelContract,
      facilitator: extra.facilitator,
      minDeposit: extra.minDeposit,
      areFeesSponsored: extra.areFeesSponsored,
      unit: terms.unit,
      unitPrice: terms.amount,
      ...(extra.sliceTokens !== undefined ? { sliceTokens: extra.sliceTokens } : {}),
      ...(extra.sliceSeconds !== undefined ? { sliceSeconds: extra.sliceSeconds } : {}),
      ...(extra.sliceAmount !== undefined ? { sliceAmount: extra.sliceAmount } : {}),
    },
  };
}

/** The `channel` terms a `batch-settlement` option stands for (what receipts, listings and streams read). */
export function channelTermsOf(b: BatchRequirements): PaymentRequirements {
  const { extra } = b;
  return {
    scheme: 'channel',
    network: b.network,
    asset: b.asset,
    payTo: b.payTo,
    amount: extra.unitPrice,
    unit: extra.unit,
    maxTimeoutSeconds: b.maxTimeoutSeconds,
    extra: {
      channelContract: extra.channelContract,
      minDeposit: extra.minDeposit,
      facilitator: extra.facilitator,
      areFeesSponsored: extra.areFeesSponsored,
      ...(extra.sliceTokens !== undefined ? { sliceTokens: extra.sliceTokens } : {}),
      ...(extra.sliceSeconds !== undefined ? { sliceSeconds: extra.sliceSeconds } : {}),
      ...(extra.sliceAmount !== undefined ? { sliceAmount: extra.sliceAmount } : {}),
    },
  };
}
