// The `batch-settlement` option of a 402 (batch-settlement.ts has the rest of the scheme): what a
// seller offers, in a module of its own because the 402 body (x402.ts) lists it beside the `channel`
// option, while the scheme's payments read the `channel` terms.
import { z } from 'zod';
import { zAccount, zChannelId, zContract, zHttpUrl, zNetwork, zSignatureHex, zUnit, zUnits } from './schemas.js';

export const BATCH_SCHEME = 'batch-settlement';

/**
 * What a facilitator shows of a channel (every /verify and /settle answer; a corrective 402). The
 * ledger's figures — balance (the deposit), totalClaimed, refundNonce, expiryLedger — and the one it
 * keeps: chargedCumulativeAmount, what the seller may claim.
 */
export const ChannelStateSchema = z
  .object({
    channelId: zChannelId,
    balance: zUnits,
    totalClaimed: zUnits,
    chargedCumulativeAmount: zUnits,
    refundNonce: z.string().regex(/^[0-9]{1,20}$/),
    expiryLedger: z.number().int().nonnegative(),
  })
  .meta({ id: 'BatchChannelState' });
export type ChannelState = z.infer<typeof ChannelStateSchema>;

/** The highest ceiling the facilitator holds a voucher for, and its signature: what a corrective 402 proves itself with. */
export const VoucherStateSchema = z
  .object({ signedMaxClaimable: zUnits, signature: zSignatureHex })
  .meta({ id: 'BatchVoucherState' });
export type VoucherState = z.infer<typeof VoucherStateSchema>;

export const BatchExtraSchema = z.looseObject({
  /** The key that authorises claims below a voucher's ceiling and refunds: bound to the channel at its opening. */
  receiverAuthorizer: zAccount,
  channelContract: zContract,
  facilitator: zHttpUrl,
  minDeposit: zUnits,
  areFeesSponsored: z.boolean(),
  /** svc: what one unit is, its price, and for streams the slice (`amount` is one payment's most). */
  unit: zUnit,
  unitPrice: zUnits,
  sliceTokens: z.number().int().positive().max(1_000_000).optional(),
  sliceSeconds: z.number().int().positive().max(86_400).optional(),
  sliceAmount: zUnits.optional(),
  /** A corrective 402 only. */
  channelState: ChannelStateSchema.optional(),
  voucherState: VoucherStateSchema.optional(),
});
export type BatchExtra = z.infer<typeof BatchExtraSchema>;

/** A `batch-settlement` element of a 402's `accepts`: `amount` is the most one payment may charge. */
export const BatchRequirementsSchema = z
  .object({
    scheme: z.literal(BATCH_SCHEME),
    network: zNetwork,
    asset: zContract,
    payTo: zAccount,
    amount: zUnits,
    maxTimeoutSeconds: z.number().int().positive().max(86_400),
    extra: BatchExtraSchema,
  })
  .meta({ id: 'BatchPaymentRequirements' });
export type BatchRequirements = z.infer<typeof BatchRequirementsSchema>;
