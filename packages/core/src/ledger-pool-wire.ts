// The credit pool on the wire (GET /ledger/pool, packages/ledger/docs/credit-pool.md): every amount a
// decimal string, bigint once parsed; basis points stay JSON numbers (small ratios, never amounts).
// The ledger's routes write it with poolToWire; LedgerHttpClient parses it with PoolStateSchema.
import { z } from 'zod';
import { zUnits } from './schemas.js';

const zAmount = zUnits.transform((v) => BigInt(v));
const zBps = z.number().int().min(0);

/** A credit line from the pool to a smart account. */
export const CreditLineSchema = z.object({
  account: z.string(),
  /** What the account owes the pool: the line's principal plus its fee. */
  debt: zAmount,
  /** What the account holds, valued in the pool's asset (its USDC plus its XLM at the DEX rate). */
  value: zAmount,
  /** value × 10000 / debt, rounded down. */
  healthBps: zBps,
  liquidatable: z.boolean(),
  /** ISO time (ledger close time) the line was opened. */
  openedAt: z.string(),
});
export type CreditLine = z.output<typeof CreditLineSchema>;

/** An investor's stake in the pool. */
export const PoolPositionSchema = z.object({
  address: z.string(),
  shares: zAmount,
  /** shares × share price, in the pool's asset. */
  value: zAmount,
});
export type PoolPosition = z.output<typeof PoolPositionSchema>;

/** The credit pool (the float): investors' deposits lent to smart accounts. */
export const PoolStateSchema = z.object({
  address: z.string(),
  /**
   * Idle funds plus what is lent out, in base units. The local ledger counts a line at its
   * principal: its fee is the investors' once repaid (so a close raises the share price).
   */
  size: zAmount,
  idle: zAmount,
  /** The principal of the open lines. */
  lent: zAmount,
  totalShares: zAmount,
  /** Base units of the asset per whole share (a share has 7 decimals like the asset). */
  sharePrice: zAmount,
  /** lent × 10000 / size. */
  utilizationBps: zBps,
  /** A line below this health is liquidatable. */
  liquidationThresholdBps: zBps,
  lines: z.array(CreditLineSchema),
  positions: z.array(PoolPositionSchema),
});
export type PoolState = z.output<typeof PoolStateSchema>;
export type PoolStateWire = z.input<typeof PoolStateSchema>;

export function poolToWire(pool: PoolState): PoolStateWire {
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
