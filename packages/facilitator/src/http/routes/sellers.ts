// Seller revenue (spec: GET /sellers/:payTo/revenue, GET /sellers/:payTo/settlements.csv), computed
// in domain/revenue.ts from the seller's events in the audit ledger. The store has no aggregate
// queries (amounts are text in SQLite): pages of events are summed as bigint in the domain.
import {
  ErrorBodySchema,
  NETWORKS,
  RevenueReportSchema,
  SellerTokenRequestBodySchema,
  SellerTokenSchema,
  SvcError,
  isAccountAddress,
  isNetworkName,
  verifySellerTokenRequest,
  zAddress,
} from '@svc/core';
import type { RevenueReport } from '@svc/core';
import { z } from 'zod';
import { zQueryInt } from '../query.js';
import { REVENUE_EVENT_TYPES, RevenueTally, revenueWindow, settlementsCsv } from '../../domain/revenue.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../domain/clock.js';
import type { SellerTokens } from '../../domain/seller-tokens.js';
import type { Store } from '../../store/port.js';
import type { Keypair } from '@svc/core';
import type { LedgerInfo } from '@svc/ledger';

/** What this module uses of the domain. */
export interface SellerDeps {
  clock: Clock;
  config: Config;
  keys: Keypair;
  ledgerInfo: LedgerInfo;
  /** Seller tokens: the credential of a payee's side (http/seller-auth.ts). */
  sellerTokens: SellerTokens;
  store: Store;
}

const TAGS = ['sellers'];
const PAGE = 1000;
/** A token request's ts may be this far from the facilitator's clock (a replay is only good that long). */
const TOKEN_REQUEST_SKEW_MS = 5 * 60_000;

const Params = z.object({ payTo: zAddress });

const RevenueQuery = z.strictObject(
  {
    bucket: z
      .enum(['hour', 'day'], { error: 'bucket must be "hour" or "day"' })
      .default('day')
      .meta({ description: 'Width of a time-series bucket, on UTC boundaries.' }),
    days: zQueryInt('days', 1, 365, 30).meta({
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
        const answer: RevenueReport = { ...t.report(now, explorerBase), settlementPolicy };
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
