// A seller's revenue on the wire (GET /sellers/:payTo/revenue, docs/protocol.md#channels-and-records): what the
// facilitator's revenue tally reports and the console's seller view reads. Amounts are decimal
// strings of base units (the tally sums bigint); earned = settled + receivable + lost.
//
//   const revenue: RevenueReport = await (await fetch(`/sellers/${payTo}/revenue`)).json();
import { z } from 'zod';
import { zAddress, zIsoTime, zUnits } from './schemas.js';

/** Receivables by age of their oldest unclaimed voucher; lower bounds inclusive. */
export const AGING_BUCKETS = ['<1h', '1h-24h', '1d-7d', '>7d'] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

/** The width of one bucket of the revenue time series, on UTC boundaries. */
export const REVENUE_BUCKETS = ['hour', 'day'] as const;
export type RevenueBucket = (typeof REVENUE_BUCKETS)[number];

const zCount = z.number().int().min(0);
const Sums = { earned: zUnits, settled: zUnits, payments: zCount, settlements: zCount };

/** One on-chain settlement (claim) of the seller. */
export const RevenueSettlementSchema = z
  .object({
    settledAt: zIsoTime,
    tx: z.string(),
    channelId: z.string(),
    payer: zAddress.nullable(),
    amount: zUnits,
    paymentsCovered: zCount
      .nullable()
      .meta({ description: 'Vouchers the claim covered; null for a claim made by someone else.' }),
    explorer: z.string().meta({ description: 'Explorer link of the transaction; empty on stellar:local.' }),
  })
  .meta({ id: 'Settlement' });
export type RevenueSettlement = z.output<typeof RevenueSettlementSchema>;

export const RevenueReportSchema = z
  .object({
    payTo: zAddress,
    asOf: zIsoTime,
    totals: z
      .object({
        earned: zUnits.meta({ description: 'Sum of accepted vouchers, all time (restored included).' }),
        restored: zUnits.meta({
          description:
            'Part of earned: what claims on the ledger settled beyond the accepted vouchers on record — vouchers whose records a lost or restored store no longer holds, or a voucher the payee claimed without passing it through /verify.',
        }),
        settled: zUnits.meta({ description: 'Sum claimed on the ledger, all time.' }),
        receivable: zUnits.meta({ description: 'What open channels owe: earned − settled − lost.' }),
        lost: zUnits.meta({
          description:
            'What closed channels owed when they closed: accepted but never claimed, and no longer claimable. earned = settled + receivable + lost.',
        }),
        payments: zCount,
        settlements: zCount,
        paymentsPerSettlement: z.number().nullable().meta({
          description:
            'The payments each settlement covered, on average (2 decimals): settlements whose coverage is unknown (claims made by someone else) are left out; null when there is none.',
        }),
        buyers: zCount,
      })
      .meta({ description: 'All time, as of `asOf`.' }),
    window: z
      .object({ bucket: z.enum(REVENUE_BUCKETS), days: z.number().int(), start: zIsoTime, end: zIsoTime, ...Sums })
      .meta({
        description:
          'The window [start, end): `days` × 24 h of whole UTC buckets ending with the current one, and its own sums.',
      }),
    byResource: z
      .array(z.object({ resource: z.string(), earned: zUnits, payments: zCount }))
      .meta({ description: 'In the window, highest earned first (top 100).' }),
    otherResources: z
      .object({ resources: zCount, earned: zUnits, payments: zCount })
      .meta({ description: 'The window’s resources past the top 100, summed.' }),
    series: z
      .array(z.object({ start: zIsoTime, ...Sums }))
      .meta({ description: 'Every bucket of the window, oldest first, empty ones included.' }),
    receivables: z.object({
      total: zUnits,
      buckets: z.array(z.object({ bucket: z.enum(AGING_BUCKETS), amount: zUnits, channels: zCount })),
      channels: z
        .array(
          z.object({
            channelId: z.string(),
            payer: zAddress.nullable(),
            status: z.enum(['open', 'closed']),
            amount: zUnits,
            oldestUnclaimedAt: zIsoTime.nullable(),
            ageSeconds: zCount,
            bucket: z.enum(AGING_BUCKETS),
          }),
        )
        .meta({
          description:
            'Open channels with accepted vouchers not yet claimed, oldest first; age counts from the oldest unclaimed voucher.',
        }),
    }),
    losses: z
      .object({
        total: zUnits,
        channels: z.array(
          z.object({ channelId: z.string(), payer: zAddress.nullable(), amount: zUnits, closedAt: zIsoTime }),
        ),
        truncated: z.boolean(),
      })
      .meta({
        description:
          'Closed channels that owed the seller something when they closed (all time, newest close first, at most 500): money accepted that can no longer be claimed.',
      }),
    settlements: z.array(RevenueSettlementSchema).meta({ description: 'In the window, newest first (at most 500).' }),
    settlementsTruncated: z.boolean(),
    settlementPolicy: z
      .object({
        threshold: zUnits.meta({
          description: 'A channel is claimed once what it owes the seller (unclaimed) reaches this.',
        }),
        intervalSeconds: z.number().meta({
          description: 'How often the claim scheduler looks: a channel past the threshold is claimed within this.',
        }),
        expiryMarginLedgers: zCount.meta({
          description:
            'Any channel with something unclaimed is claimed from this many ledgers before its expiry, whatever the threshold.',
        }),
        ledgerSeconds: z.number().meta({ description: 'Seconds per ledger, to turn ledgers into time.' }),
      })
      .meta({ description: 'When the facilitator claims (the seller gets paid): this instance’s claim settings.' }),
  })
  .meta({ id: 'SellerRevenue' });
export type RevenueReport = z.output<typeof RevenueReportSchema>;
/** What one bucket of the series (and the window as a whole) sums. */
export type RevenueSums = Omit<RevenueReport['series'][number], 'start'>;
/** Receivables aging: what open channels owe, by age. */
export type AgingReport = RevenueReport['receivables'];
/** What closed channels owed when they closed. */
export type LossReport = RevenueReport['losses'];
