// x402 version 2 wire types for the `channel` scheme (spec "402 body"; docs/protocol.md#payment-payload to #receipts).
import { PAYMENT_IDENTIFIER, PaymentIdentifierDeclarationSchema } from './payment-identifier.js';
import { z } from 'zod';
import {
  zAddress,
  zChannelId,
  zContract,
  zHex32,
  zHttpUrl,
  zNetwork,
  zSignatureHex,
  zUnit,
  zUnits,
} from './schemas.js';
import { BatchRequirementsSchema } from './batch-requirements.js';
import { safeParse } from './safe-parse.js';

export const X402_VERSION = 2;
export const SCHEME = 'channel';

export const ChannelExtraSchema = z.object({
  channelContract: zContract,
  minDeposit: zUnits,
  facilitator: zHttpUrl,
  areFeesSponsored: z.boolean(),
  sliceTokens: z.number().int().positive().max(1_000_000).optional(),
  sliceSeconds: z.number().int().positive().max(86_400).optional(),
  sliceAmount: zUnits.optional(),
});

/** One element of `accepts`. */
export const PaymentRequirementsSchema = z
  .object({
    scheme: z.literal(SCHEME),
    network: zNetwork,
    asset: zContract,
    payTo: zAddress,
    amount: zUnits,
    unit: zUnit,
    maxTimeoutSeconds: z.number().int().positive().max(86_400),
    extra: ChannelExtraSchema,
  })
  .meta({ id: 'PaymentRequirements' });
export type PaymentRequirements = z.infer<typeof PaymentRequirementsSchema>;

/** Whether an element of `accepts` is the `channel` option (the other: `batch-settlement`). */
export function isChannelTerms(terms: { scheme: string }): terms is PaymentRequirements {
  return terms.scheme === SCHEME;
}

export const BazaarSchema = z
  .object({
    info: z.object({
      input: z.object({
        type: z.literal('http'),
        method: z.string().regex(/^[A-Z]{1,16}$/),
        queryParams: z.record(z.string().max(256), z.string().max(2048)).optional(),
        bodyType: z.string().max(64).optional(),
        body: z.unknown().optional(),
      }),
      output: z.object({
        type: z.string().max(32),
        mimeType: z.string().max(128),
        example: z.unknown().optional(),
      }),
    }),
    schema: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Bazaar' });
export type Bazaar = z.infer<typeof BazaarSchema>;

export const ResourceInfoSchema = z.object({
  url: zHttpUrl,
  description: z.string().max(1024),
  mimeType: z.string().max(128),
});
export type ResourceInfo = z.infer<typeof ResourceInfoSchema>;

/** The 402 body, also carried base64-encoded in PAYMENT-REQUIRED. */
export const PaymentRequiredSchema = z
  .object({
    x402Version: z.literal(X402_VERSION),
    error: z.string(),
    source: z.string(),
    message: z.string(),
    resource: ResourceInfoSchema,
    /** svc's `channel` option first, then the same terms as `batch-settlement` (the standard's name). */
    accepts: z
      .array(z.union([PaymentRequirementsSchema, BatchRequirementsSchema]))
      .min(1)
      .max(8),
    /** `payment-identifier` with the `batch-settlement` option only: the `channel`-only 402 is the specification's. */
    extensions: z.object({
      bazaar: BazaarSchema,
      [PAYMENT_IDENTIFIER]: PaymentIdentifierDeclarationSchema.optional(),
    }),
  })
  .meta({ id: 'PaymentRequired' });
export type PaymentRequired = z.infer<typeof PaymentRequiredSchema>;

export const ChannelPayloadSchema = z
  .object({ channelId: zChannelId, cumulative: zUnits, signature: zSignatureHex })
  .meta({ id: 'ChannelPayload' });
export type ChannelPayload = z.infer<typeof ChannelPayloadSchema>;

/** x402 v2 form: the buyer echoes the requirements it chose in `accepted`. */
export const PaymentPayloadV2Schema = z.object({
  x402Version: z.literal(2),
  accepted: z.looseObject({ scheme: z.literal(SCHEME), network: zNetwork }),
  payload: ChannelPayloadSchema,
  resource: z.looseObject({ url: z.string().max(2048) }).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

/** Flat form, also accepted from v1 clients. */
export const PaymentPayloadFlatSchema = z.object({
  x402Version: z.union([z.literal(1), z.literal(2)]),
  scheme: z.literal(SCHEME),
  network: zNetwork,
  payload: ChannelPayloadSchema,
});

export const PaymentPayloadSchema = z
  .union([PaymentPayloadV2Schema, PaymentPayloadFlatSchema])
  .meta({ id: 'PaymentPayload' });
export type PaymentPayload = z.infer<typeof PaymentPayloadSchema>;

/** A payment after decoding: amounts and ids as bigint, the signature as lowercase hex. */
export interface Payment {
  x402Version: 1 | 2;
  network: string;
  channelId: bigint;
  cumulative: bigint;
  signature: string;
  /** The buyer's copy of the requirements it paid against (v2 form only). */
  accepted?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

export const ReceiptSchema = z
  .object({
    v: z.literal(1),
    id: zHex32,
    network: zNetwork,
    signer: zAddress,
    channelId: zChannelId,
    payer: zAddress,
    payee: zAddress,
    resource: z.string().max(2048),
    method: z.string().max(16),
    unit: zUnit,
    amount: zUnits,
    cumulative: zUnits,
    requestHash: zHex32.nullable(),
    ts: z.iso.datetime(),
    signature: zSignatureHex,
  })
  .meta({ id: 'Receipt' });
export type Receipt = z.infer<typeof ReceiptSchema>;

/** PAYMENT-RESPONSE: shaped so x402 clients read it as a settle response (docs/protocol.md#receipts). */
export const PaymentResponseSchema = z
  .object({
    success: z.literal(true),
    transaction: z.string(),
    network: zNetwork,
    payer: zAddress,
    /** The scheme paid with (`batch-settlement` receipts: `delta` the charge, `cumulative` the channel's charged total). */
    scheme: z.enum([SCHEME, 'batch-settlement']),
    channelId: zChannelId,
    cumulative: zUnits,
    delta: zUnits,
    remaining: zUnits,
    latencyMs: z.number().nonnegative(),
    receipt: ReceiptSchema,
  })
  .meta({ id: 'PaymentResponse' });
export type PaymentResponse = z.infer<typeof PaymentResponseSchema>;

/**
 * A PAYMENT-RESPONSE as svc's meter sends it, or as an official x402 resource server relays the
 * svc facilitator's settle answer (the svc fields under `extra`, which the official facilitator
 * client keeps): the svc envelope either way, or null.
 */
export function readPaymentResponse(value: unknown): PaymentResponse | null {
  const direct = safeParse(PaymentResponseSchema, value);
  if (direct.success) return direct.data;
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const extra = v['extra'];
  if (typeof extra !== 'object' || extra === null) return null;
  const nested = safeParse(PaymentResponseSchema, {
    ...extra,
    success: v['success'],
    transaction: v['transaction'],
    network: v['network'],
    payer: v['payer'],
  });
  return nested.success ? nested.data : null;
}
