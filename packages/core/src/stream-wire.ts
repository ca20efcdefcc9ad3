// A stream session on the wire (docs/protocol.md#streams): the seller's meter opens it for a first slice
// already paid (POST /streams), long-polls for each next slice's voucher (POST /streams/:id/wait)
// and ends it (DELETE /streams/:id); the buyer posts each slice's voucher (POST
// /channels/:id/voucher). The facilitator's routes validate and document with these schemas; the
// meter sends and parses with them, so neither side can change a field alone.
//
//   const opened = StreamOpenedSchema.parse(await res.json());
import { z } from 'zod';
import { STREAM_END_REASONS } from './codes.js';
import { zAddress, zChannelId, zSignatureHex, zUnits } from './schemas.js';
import { PaymentResponseSchema } from './x402.js';

/** The long poll of POST /streams/:id/wait lasts this long at most (and at least); default 10 s. */
export const STREAM_WAIT_MIN_MS = 1_000;
export const STREAM_WAIT_MAX_MS = 30_000;
export const STREAM_WAIT_DEFAULT_MS = 10_000;

export const zStreamId = z.string().regex(/^[0-9a-f]{32}$/, 'a stream id: 32 lowercase hex characters');

export const StreamOpenSchema = z
  .object({
    channelId: zChannelId,
    payTo: zAddress,
    resource: z.string().min(1).max(2048),
    unit: z.enum(['token', 'second']),
    sliceCost: zUnits.refine((v) => !/^0+$/.test(v), 'a slice costs at least 1 base unit'),
    initialCharge: zUnits,
    receiptId: z.string().regex(/^[0-9a-f]{64}$/, 'the first slice’s receipt id'),
    /**
     * The scheme the first slice was paid with, and every next one is (default `channel`): under
     * `batch-settlement` each slice's voucher is a ceiling, what was charged plus the slice.
     */
    scheme: z.enum(['channel', 'batch-settlement']).optional().meta({
      description:
        'The scheme the first slice was paid with (default channel); under batch-settlement each slice’s voucher is a ceiling, what was charged on the channel plus the slice, and the channel must be bound to this facilitator’s receiver authorizer.',
    }),
  })
  .meta({ id: 'StreamOpen' });
export type StreamOpen = z.input<typeof StreamOpenSchema>;

export const StreamOpenedSchema = z
  .object({ streamId: zStreamId, requiredCumulative: zUnits, voucherUrl: z.string(), deposit: zUnits })
  .meta({ id: 'StreamOpened' });
export type StreamOpened = z.output<typeof StreamOpenedSchema>;

export const StreamWaitSchema = z
  .object({ timeoutMs: z.number().int().min(0).max(3_600_000).optional() })
  .meta({ id: 'StreamWait' });
export type StreamWait = z.input<typeof StreamWaitSchema>;

export const StreamWaitResultSchema = z
  .union([
    z.object({ kind: z.literal('paid'), receipt: PaymentResponseSchema, requiredCumulative: zUnits, deposit: zUnits }),
    z.object({ kind: z.enum(['timeout', 'exhausted', 'frozen', 'aborted']) }),
  ])
  .meta({ id: 'StreamWaitResult' });
export type StreamWaitResult = z.output<typeof StreamWaitResultSchema>;

export const StreamEndSchema = z
  .object({ reason: z.enum(STREAM_END_REASONS), units: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) })
  .meta({ id: 'StreamEnd' });
export type StreamEnd = z.input<typeof StreamEndSchema>;

export const StreamEndedSchema = z
  .object({
    charged: zUnits,
    vouchers: z.number().int(),
    reason: z.enum(STREAM_END_REASONS),
    units: z.number().int().nullable(),
  })
  .meta({ id: 'StreamEnded' });
export type StreamEnded = z.output<typeof StreamEndedSchema>;

/** POST /channels/:id/voucher: a slice's voucher (or a bare one, without `streamId`). */
export const StreamVoucherSchema = z
  .object({ streamId: zStreamId.optional(), cumulative: zUnits, signature: zSignatureHex })
  .meta({ id: 'Voucher' });
export type StreamVoucher = z.input<typeof StreamVoucherSchema>;

export const VoucherAcceptedSchema = z
  .object({
    accepted: z.literal(true),
    streamId: zStreamId.nullable(),
    requiredCumulative: zUnits.nullable(),
    receipt: PaymentResponseSchema,
  })
  .meta({ id: 'VoucherAccepted' });
export type VoucherAccepted = z.output<typeof VoucherAcceptedSchema>;
