// The credit pool as the facilitator shows it (GET /float, /float/lines/:account,
// /float/positions/:address; docs/protocol.md#channels-and-records): amounts as decimal strings of base units, basis
// points as JSON numbers. Not the ledger's own pool wire (ledger-pool-wire.ts, which the
// facilitator reads): this is what the facilitator answers, and what the console's float view reads.
//
//   const float: FloatView = await (await fetch('/float')).json();
import { z } from 'zod';
import { zAddress, zUnits } from './schemas.js';

/** The most lines and positions GET /float lists, largest first (its counts cover all of them). */
export const FLOAT_LISTED = 100;

const zBps = z.number().int().meta({ description: 'Basis points (10000 = 100 %).' });

export const FloatLineSchema = z
  .object({
    account: zAddress,
    debt: zUnits.meta({ description: 'What the account owes the pool: principal and fee.' }),
    value: zUnits.meta({ description: "The account's holdings, valued in the pool's asset." }),
    healthBps: zBps.meta({ description: 'value × 10000 / debt.' }),
    liquidatable: z.boolean().meta({ description: 'healthBps below the liquidation threshold.' }),
    openedAt: z.string(),
  })
  .meta({ id: 'CreditLine' });
export type FloatLine = z.output<typeof FloatLineSchema>;

export const FloatPositionSchema = z
  .object({
    address: zAddress,
    shares: zUnits.meta({ description: 'Pool shares held (7 decimals, like the asset).' }),
    value: zUnits.meta({ description: 'shares × share price, in base units of the asset.' }),
  })
  .meta({ id: 'PoolPosition' });
export type FloatPosition = z.output<typeof FloatPositionSchema>;

/** One sample of the pool, taken every FLOAT_SAMPLE_SECONDS. */
export const FloatSampleSchema = z.object({
  at: z.string(),
  sharePrice: zUnits,
  size: zUnits,
  lent: zUnits,
  utilizationBps: zBps,
});
export type FloatSample = z.output<typeof FloatSampleSchema>;

export const FloatSchema = z
  .object({
    pool: z.object({
      address: zAddress,
      asset: zAddress,
      size: zUnits.meta({ description: 'Idle funds plus outstanding debt.' }),
      idle: zUnits,
      lent: zUnits,
      totalShares: zUnits,
      sharePrice: zUnits.meta({ description: 'Base units of the asset per whole share (10000000 at the start).' }),
      utilizationBps: zBps.meta({ description: 'lent × 10000 / size.' }),
      liquidationThresholdBps: zBps,
      lineCount: z.number().int(),
      investorCount: z.number().int(),
    }),
    lines: z
      .array(FloatLineSchema)
      .meta({ description: `Credit lines, largest debt first (at most ${FLOAT_LISTED}).` }),
    positions: z
      .array(FloatPositionSchema)
      .meta({ description: `Investor positions, most shares first (at most ${FLOAT_LISTED}).` }),
    history: z.array(FloatSampleSchema).meta({ description: 'Periodic samples (FLOAT_SAMPLE_SECONDS), oldest first.' }),
    sampleSeconds: z.number(),
  })
  .meta({ id: 'Float' });
export type FloatView = z.output<typeof FloatSchema>;
