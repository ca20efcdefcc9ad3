// Facilitator wire schemas shared by the facilitator (which validates with them and generates
// its OpenAPI document from them), the meter and the sdk (which parse replies with them).
import { z } from 'zod';
import { REASON_STATUS } from './codes.js';
import type { ReasonCode } from './codes.js';
import { zAccount, zAddress, zChannelId, zContract, zHex32, zHttpUrl, zNetwork, zUnit, zUnits } from './schemas.js';
import { PaymentRequirementsSchema, PaymentResponseSchema, ReceiptSchema } from './x402.js';
import {
  BATCH_CODE_NAMES,
  BATCH_CODE_PREFIX,
  BatchRequirementsSchema,
  ChannelStateSchema,
  VoucherStateSchema,
} from './batch-settlement.js';
import type { BatchCode } from './batch-settlement.js';

const reasonCodes = Object.keys(REASON_STATUS) as [ReasonCode, ...ReasonCode[]];
export const zReasonCode = z.enum(reasonCodes);
const batchCodes = BATCH_CODE_NAMES.map((name) => `${BATCH_CODE_PREFIX}${name}`) as [BatchCode, ...BatchCode[]];
/** Why a payment was refused: svc's code, or for a `batch-settlement` payment the scheme's. */
export const zRefusalCode = z.union([zReasonCode, z.enum(batchCodes)]);

export const ErrorBodySchema = z
  .object({
    error: zReasonCode,
    source: z.enum(['gateway', 'facilitator', 'ledger']),
    message: z.string(),
    tx: z.string().optional(),
  })
  .meta({ id: 'Error' });

// Official x402 resource servers send requirements without svc's `unit`: per request, then.
const ChannelRequirementsSchema = PaymentRequirementsSchema.extend({ unit: zUnit.default('request') });
const svcFields = {
  method: z
    .string()
    .regex(/^[A-Z]{1,16}$/)
    .optional(),
  requestHash: zHex32.nullable().optional(),
};

/**
 * POST /verify and POST /settle. `paymentPayload` is decoded separately, so that a malformed
 * payment is a rejection (isValid: false, PAYMENT_MALFORMED) rather than a broken request.
 * `method` and `requestHash` are svc extensions the meter sends for the receipt.
 */
export const VerifyRequestSchema = z.object({
  x402Version: z.union([z.literal(1), z.literal(2)]),
  paymentPayload: z.record(z.string(), z.unknown()),
  paymentRequirements: ChannelRequirementsSchema,
  ...svcFields,
});
export type VerifyRequest = z.infer<typeof VerifyRequestSchema>;

/**
 * What /verify and /settle take as a request at all (anything else is a 400): any x402 version,
 * and requirements of any scheme — the official client builds such requests, and expects a
 * refusal it understands (isValid: false / success: false) rather than an error.
 */
export const VerifyEnvelopeSchema = z
  .object({
    x402Version: z.number().int().meta({ description: '1 or 2; another version is refused with UNSUPPORTED_VERSION.' }),
    paymentPayload: z.record(z.string(), z.unknown()),
    paymentRequirements: z
      .union([ChannelRequirementsSchema, BatchRequirementsSchema, z.record(z.string(), z.unknown())])
      .meta({
        description:
          'The `channel` or `batch-settlement` terms; requirements of another scheme are refused with UNSUPPORTED_SCHEME.',
      }),
    ...svcFields,
  })
  .meta({ id: 'VerifyRequest' });
export type VerifyEnvelope = z.infer<typeof VerifyEnvelopeSchema>;

/**
 * A valid payment: the specification's `{ isValid, receipt }`, and the svc envelope of the receipt
 * (and the attest token) in `extra`, which the official x402 facilitator client keeps (it drops
 * unknown top-level fields, `receipt` among them).
 */
export const VerifyValidSchema = z.object({
  isValid: z.literal(true),
  payer: zAddress,
  /** The signed receipt (the same as `extra.receipt.receipt`); optional to read an older facilitator's answer. */
  receipt: ReceiptSchema.optional(),
  extra: z.object({
    receipt: PaymentResponseSchema,
    /**
     * For the payee's side only (its seller token), never forwarded to the buyer: the bearer token
     * that lets it attest the response it served (POST /receipts/:id/attest).
     */
    attestToken: zHex32.optional(),
  }),
});
/** A valid `batch-settlement` payment: checked, and its channel reserved for it until /settle. */
export const BatchVerifyValidSchema = z.object({
  isValid: z.literal(true),
  payer: zAddress,
  extra: z.object({ channelState: ChannelStateSchema }),
});
/** What brings a buyer's books back (a `batch-settlement` cumulative_amount_mismatch): the channel and its highest voucher. */
export const CorrectionSchema = z.object({
  channelState: ChannelStateSchema,
  voucherState: VoucherStateSchema.optional(),
});
export const VerifyInvalidSchema = z.object({
  isValid: z.literal(false),
  invalidReason: zRefusalCode,
  invalidMessage: z.string(),
  payer: zAddress.optional(),
  extra: CorrectionSchema.optional(),
});
export const VerifyResponseSchema = z
  .union([VerifyValidSchema, BatchVerifyValidSchema, VerifyInvalidSchema])
  .meta({ id: 'VerifyResponse' });
export type VerifyResponse = z.infer<typeof VerifyResponseSchema>;

export const SettleFailureSchema = z.object({
  success: z.literal(false),
  errorReason: zRefusalCode,
  errorMessage: z.string(),
  transaction: z.literal(''),
  network: zNetwork,
  extra: CorrectionSchema.optional(),
});
/**
 * A settled payment: the svc envelope (PAYMENT-RESPONSE, docs/protocol.md#receipts), plus `amount` (the
 * delta) and, under `extra`, the svc fields again — the official x402 facilitator client keeps
 * only standard fields and `extra`, so a seller on the official middleware still relays the receipt.
 */
export const SettleSuccessSchema = PaymentResponseSchema.extend({
  amount: zUnits,
  extra: PaymentResponseSchema.omit({ success: true, transaction: true, network: true, payer: true }),
});
export type SettleSuccess = z.infer<typeof SettleSuccessSchema>;
/**
 * A `batch-settlement` charge: `transaction` and `amount` empty for a voucher (nothing moved on the
 * ledger) — for a deposit payload, the opening or top-up submitted and what it deposited — the
 * charge and the channel after it, and the svc receipt's envelope (none for a charge of nothing).
 */
export const BatchSettleSuccessSchema = z.object({
  success: z.literal(true),
  transaction: z.string(),
  network: zNetwork,
  payer: zAddress,
  amount: z.string(),
  extra: z.object({
    chargedAmount: zUnits.optional(),
    channelState: ChannelStateSchema,
    receipt: PaymentResponseSchema.optional(),
    /** For the payee's side only (its seller token): lets it attest the response it served. */
    attestToken: zHex32.optional(),
  }),
});
export type BatchSettleSuccess = z.infer<typeof BatchSettleSuccessSchema>;
export const SettleResponseSchema = z
  .union([SettleSuccessSchema, BatchSettleSuccessSchema, SettleFailureSchema])
  .meta({ id: 'SettleResponse' });
export type SettleResponse = z.infer<typeof SettleResponseSchema>;

/** What an Idempotency-Key may be: 1–128 of [A-Za-z0-9_.:-]. */
export const IDEMPOTENCY_KEY_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * POST /verify/unserved: a meter gave up on its POST /verify under `idempotencyKey` (no answer in
 * time) and served nothing. The payment accepted under that key, if any, stays good for the request
 * it paid for: the same payment for the same request is accepted again as the same payment (once),
 * instead of VOUCHER_NOT_INCREASING. Only the meter and the facilitator know the key.
 */
export const UnservedRequestSchema = z
  .object({ idempotencyKey: z.string().regex(IDEMPOTENCY_KEY_RE) })
  .meta({ id: 'UnservedRequest' });
export type UnservedRequest = z.infer<typeof UnservedRequestSchema>;
export const UnservedResponseSchema = z
  .object({
    recoverable: z.boolean().meta({
      description:
        'true: a payment was accepted under the key, and the same payment for the same request will be accepted again as it; false: nothing was accepted under it.',
    }),
  })
  .meta({ id: 'Unserved' });
export type UnservedResponse = z.infer<typeof UnservedResponseSchema>;

/** A `channel` kind of /supported: what a seller needs to build its terms. */
export const ChannelKindSchema = z.object({
  x402Version: z.union([z.literal(1), z.literal(2)]),
  scheme: z.literal('channel'),
  network: zNetwork,
  extra: z.object({
    asset: zContract,
    assetCode: z.string(),
    decimals: z.number().int(),
    channelContract: zContract,
    areFeesSponsored: z.boolean(),
    facilitator: zHttpUrl,
    receiptSigner: zAccount,
  }),
});
export type ChannelKind = z.infer<typeof ChannelKindSchema>;
/** A `batch-settlement` kind: the same, and the receiver authorizer channels must be bound to. */
export const BatchKindSchema = z.object({
  x402Version: z.literal(2),
  scheme: z.literal('batch-settlement'),
  network: zNetwork,
  extra: z.object({
    receiverAuthorizer: zAccount,
    asset: zContract,
    assetCode: z.string(),
    decimals: z.number().int(),
    channelContract: zContract,
    areFeesSponsored: z.boolean(),
    facilitator: zHttpUrl,
    receiptSigner: zAccount,
  }),
});
export type BatchKind = z.infer<typeof BatchKindSchema>;
export const SupportedKindSchema = z.union([ChannelKindSchema, BatchKindSchema]);
export const SupportedResponseSchema = z
  .object({
    kinds: z.array(SupportedKindSchema),
    extensions: z.array(z.string()),
    signers: z.record(z.string(), z.array(z.string())),
  })
  .meta({ id: 'Supported' });
export type SupportedResponse = z.infer<typeof SupportedResponseSchema>;

/** `expired`: open on the ledger but past its expiry ledger, so it takes no voucher; its seller can
 *  still claim until it is closed, and its payer can close it to take the rest back. */
export const CHANNEL_STATUSES = ['open', 'expired', 'closed'] as const;

/** The facilitator's channel view (docs/protocol.md#channels-and-records). */
export const ChannelViewSchema = z
  .object({
    id: zChannelId,
    network: zNetwork,
    channelContract: zContract,
    payer: zAddress,
    payee: zAddress,
    asset: zContract,
    voucherKey: zHex32,
    deposit: zUnits,
    claimed: zUnits,
    lastAccepted: zUnits.meta({
      description:
        'The highest voucher accepted: what is owed in all under `channel`, the highest ceiling signed under `batch-settlement`.',
    }),
    charged: zUnits.optional().meta({
      description:
        'What the seller may claim: equal to lastAccepted unless batch-settlement charges were below their price (absent from an older facilitator).',
    }),
    unclaimed: zUnits.meta({ description: 'charged − claimed.' }),
    remaining: zUnits.meta({ description: 'deposit − charged: what can still be charged.' }),
    expiryLedger: z.number().int(),
    expiresInLedgers: z.number().int(),
    status: z.enum(CHANNEL_STATUSES),
    vouchers: z.number().int(),
    vouchersSinceClaim: z.number().int(),
    openedAt: z.string().nullable(),
    lastVoucherAt: z.string().nullable(),
    closedAt: z.string().nullable(),
    refunded: zUnits.nullable(),
  })
  .meta({ id: 'Channel' });
export type ChannelView = z.infer<typeof ChannelViewSchema>;

export const ClaimResponseSchema = z
  .object({
    channelId: zChannelId,
    amount: zUnits,
    cumulative: zUnits,
    vouchersCovered: z.number().int(),
    tx: z.string(),
    ledger: z.number().int(),
  })
  .meta({ id: 'ClaimResult' });
export type ClaimResponse = z.infer<typeof ClaimResponseSchema>;
