// The credit pool on the wire (GET /ledger/pool): PoolState with every amount as a decimal
// string; basis points stay JSON numbers (small ratios, never amounts). HttpLedger parses it back
// to bigint with the same schema.
import { z } from 'zod';
import { zUnits } from '@svc/core';
import type { CreditLine, PoolPosition, PoolState } from './port.js';

const zAmount = zUnits.transform((v) => BigInt(v));
const zBps = z.number().int().min(0);

export const CreditLineWireSchema = z.object({
  account: z.string(),
  debt: zAmount,
  value: zAmount,
  healthBps: zBps,
  liquidatable: z.boolean(),
  openedAt: z.string(),
}) satisfies z.ZodType<CreditLine>;

export const PoolPositionWireSchema = z.object({ address: z.string(), shares: zAmount, value: zAmount }) satisfies z.ZodType<PoolPosition>;

export const PoolWireSchema = z.object({
  address: z.string(),
  size: zAmount,
  idle: zAmount,
  lent: zAmount,
  totalShares: zAmount,
  sharePrice: zAmount,
  utilizationBps: zBps,
  liquidationThresholdBps: zBps,
  lines: z.array(CreditLineWireSchema),
  positions: z.array(PoolPositionWireSchema),
}) satisfies z.ZodType<PoolState>;

export type PoolWire = z.input<typeof PoolWireSchema>;

export function poolToWire(pool: PoolState): PoolWire {
  return {
    ...pool,
    size: pool.size.toString(),
    idle: pool.idle.toString(),
    lent: pool.lent.toString(),
    totalShares: pool.totalShares.toString(),
    sharePrice: pool.sharePrice.toString(),
    lines: pool.lines.map((line) => ({ ...line, debt: line.debt.toString(), value: line.value.toString() })),
    positions: pool.positions.map((p) => ({ ...p, shares: p.shares.toString(), value: p.value.toString() })),
  };
}
