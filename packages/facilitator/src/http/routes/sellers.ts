// Seller revenue (spec: GET /sellers/:payTo/revenue, GET /sellers/:payTo/settlements.csv), computed
// in domain/revenue.ts from the seller's events in the audit ledger. The store has no aggregate
// queries (amounts are text in SQLite): pages of events are summed as bigint in the domain.
import {
  ErrorBodySchema,
  NETWORKS,
  SellerTokenRequestBodySchema,
  SellerTokenSchema,
  SvcError,
  isAccountAddress,
  isNetworkName,
  verifySellerTokenRequest,
  zAddress,
  zUnits,
} from '@svc/core';
import { z } from 'zod';
import {
  AGING_BUCKETS,
  REVENUE_EVENT_TYPES,
  RevenueTally,
  revenueWindow,
  settlementsCsv,
} from '../../domain/revenue.js';
import type { RevenueReport } from '../../domain/revenue.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

/** What this module uses of the domain. */
export type SellerDeps = Pick<Services, 'clock' | 'config' | 'keys' | 'ledgerInfo' | 'sellerTokens' | 'store'>;

const TAGS = ['sellers'];
const PAGE = 1000;
const DAYS_MESSAGE = 'days must be a whole number from 1 to 365';
/** A token request's ts may be this far from the facilitator's clock (a replay is only good that long). */
const TOKEN_REQUEST_SKEW_MS = 5 * 60_000;

const Params = z.object({ payTo: zAddress });

const RevenueQuery = z.strictObject(
  {
    bucket: z
      .enum(['hour', 'day'], { error: 'bucket must be "hour" or "day"' })
      .default('day')
      .meta({ description: 'Width of a time-series bucket, on UTC boundaries.' }),
    days: z
      .string({ error: DAYS_MESSAGE })
      .refine((v) => /^[0-9]{1,3}$/.test(v) && Number(v) >= 1 && Number(v) <= 365, DAYS_MESSAGE)
      .default('30')
      .meta({
        description: 'Window of the time series, revenue by resource and settlement list, in days (1 to 365).',
        example: '30',
      }),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown parameter ${issue.keys.join(', ')} (the parameters are bucket and days)`
        : undefined,
  },
);

const zCount = z.number().int().min(0);
const zTime = z.string().meta({ description: 'ISO 8601 time, UTC.' });
const Sums = { earned: zUnits, settled: zUnits, payments: zCount, settlements: zCount };

const SettlementSchema = z
  .object({
    settledAt: zTime,
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

export const RevenueReportSchema = z
  .object({
    payTo: zAddress,
    asOf: zTime,
    totals: z
      .object({
        earned: zUnits.meta({ description: 'Sum of accepted vouchers, all time.' }),
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
      .object({ bucket: z.enum(['hour', 'day']), days: z.number().int(), start: zTime, end: zTime, ...Sums })
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
      .array(z.object({ start: zTime, ...Sums }))
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
            oldestUnclaimedAt: zTime.nullable(),
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
          z.object({ channelId: z.string(), payer: zAddress.nullable(), amount: zUnits, closedAt: zTime }),
        ),
        truncated: z.boolean(),
      })
      .meta({
        description:
          'Closed channels that owed the seller something when they closed (all time, newest close first, at most 500): money accepted that can no longer be claimed.',
      }),
    settlements: z.array(SettlementSchema).meta({ description: 'In the window, newest first (at most 500).' }),
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

export function sellerRoutes(deps: SellerDeps): AnyRoute[] {
  const net = deps.ledgerInfo.network;
  const explorerBase = isNetworkName(net) ? NETWORKS[net].explorer : null;
  const settlementPolicy = {
    threshold: deps.config.CLAIM_THRESHOLD.toString(),
    intervalSeconds: deps.config.CLAIM_INTERVAL_SECONDS,
    expiryMarginLedgers: deps.config.CLAIM_EXPIRY_MARGIN_LEDGERS,
    ledgerSeconds: deps.ledgerInfo.ledgerSeconds,
  };

  /** The seller's revenue events up to the last event stored when the read began (one consistent cut). */
  async function tally(
    payTo: string,
    bucket: 'hour' | 'day',
    days: number,
  ): Promise<{ tally: RevenueTally; now: number }> {
    const last = await deps.store.lastEventId();
    const now = deps.clock.now();
    const t = new RevenueTally(payTo, revenueWindow(now, bucket, days));
    for (let after = 0; ;) {
      const page = await deps.store.events({
        account: payTo,
        types: REVENUE_EVENT_TYPES,
        after,
        before: last + 1,
        order: 'asc',
        limit: PAGE,
      });
      t.add(page);
      const tail = page.at(-1);
      if (page.length < PAGE || !tail) return { tally: t, now };
      after = tail.id;
    }
  }

  return [
    defineRoute({
      method: 'POST',
      url: '/sellers/:payTo/token',
      costly: true,
      summary:
        'Mints a seller token for payTo: the credential of the payee’s side (its middleware) to stream, attest responses and be listed in discovery. The request is signed by payTo’s own key (@svc/core seller-token.ts); the token expires (at most 366 days).',
      tags: TAGS,
      params: z.object({
        payTo: zAddress.refine(isAccountAddress, 'payTo must be a G… account: its key signs the request'),
      }),
      body: SellerTokenRequestBodySchema,
      responses: {
        200: { description: 'The token', schema: SellerTokenSchema },
        400: { description: 'Malformed, or a time out of range', schema: ErrorBodySchema },
        403: { description: 'The signature is not payTo’s', schema: ErrorBodySchema },
      },
      handler: ({ params, body }) => {
        const now = deps.clock.now();
        const [ts, expiresAt] = [Date.parse(body.ts), Date.parse(body.expiresAt)];
        if (Math.abs(now - ts) > TOKEN_REQUEST_SKEW_MS)
          throw new SvcError(
            'BAD_REQUEST',
            `ts must be within ${TOKEN_REQUEST_SKEW_MS / 60_000} minutes of the facilitator’s time (${new Date(now).toISOString()}).`,
          );
        if (expiresAt <= now) throw new SvcError('BAD_REQUEST', 'expiresAt must be in the future.');
        const request = {
          network: net,
          facilitator: deps.keys.address,
          payTo: params.payTo,
          ts: body.ts,
          expiresAt: body.expiresAt,
        };
        if (!verifySellerTokenRequest(request, body.signature))
          throw new SvcError(
            'FORBIDDEN',
            `The signature is not ${params.payTo}’s over this request (network ${net}, facilitator ${deps.keys.address}).`,
          );
        return deps.sellerTokens.mint(params.payTo, expiresAt);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/sellers/:payTo/revenue',
      summary:
        'Revenue of a seller from the audit ledger: totals, revenue by resource, time series, receivables aging, settlements.',
      tags: TAGS,
      params: Params,
      query: RevenueQuery,
      responses: {
        200: { description: 'Revenue (zeros for a seller with no events)', schema: RevenueReportSchema },
        400: { description: 'Invalid address or query', schema: ErrorBodySchema },
      },
      handler: async ({ params, query }) => {
        const { tally: t, now } = await tally(params.payTo, query.bucket, Number(query.days));
        // Typed against the declared schema too, so the domain's shape and the OpenAPI document cannot drift.
        const report: RevenueReport = t.report(now, explorerBase);
        const answer: z.input<typeof RevenueReportSchema> = { ...report, settlementPolicy };
        return answer;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/sellers/:payTo/settlements.csv',
      summary:
        'Every on-chain settlement of a seller as CSV (settled_at,tx,channel_id,payer,amount,payments_covered,explorer), oldest first.',
      tags: TAGS,
      params: Params,
      responses: {
        200: {
          description: 'RFC 4180 CSV with a header row; amount in asset units (7 decimals)',
          schema: z.string(),
          contentType: 'text/csv',
        },
        400: { description: 'Invalid address', schema: ErrorBodySchema },
      },
      handler: async ({ params, reply }) => {
        // The window does not matter here: a one-day one keeps the unused series small.
        const { tally: t } = await tally(params.payTo, 'day', 1);
        void reply.header('content-type', 'text/csv; charset=utf-8');
        void reply.header('content-disposition', `attachment; filename="settlements-${params.payTo}.csv"`);
        return settlementsCsv(t.settlements(explorerBase));
      },
    }),
  ];
}
