// Accounts (docs/protocol.md#channels-and-records): the account record, read from the ledger and the channel book, and
// the account's own ledger of events, newest first, paged with an opaque cursor.
import { AccountLedgerPageSchema, AccountSchema, ErrorBodySchema, formatUnits, zAddress } from '@svc/core';
import { z } from 'zod';
import { zQueryInt } from '../query.js';
import { ChannelListing } from '../channel-listing.js';
import { decodeCursor, encodeCursor } from '../events/cursor.js';
import { eventView } from '../events/view.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import type { Store } from '../../store/port.js';
import type { Ledger, LedgerInfo } from '@svc/ledger';

/** What this module uses of the domain. */
export interface AccountDeps {
  ledger: Ledger;
  ledgerInfo: LedgerInfo;
  store: Store;
}

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;
const TAGS = ['accounts'];

/** A page's `limit` (its value is the digits: Number() it). */
export const zPageLimit = zQueryInt('limit', 1, PAGE_MAX, PAGE_DEFAULT);

export function accountRoutes(deps: AccountDeps, listing: ChannelListing): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/accounts/:address',
      summary: 'An account: policy, today’s spend, frozen flag, balances, open channels.',
      tags: TAGS,
      params: z.object({ address: zAddress }),
      responses: {
        200: { description: 'The account', schema: AccountSchema },
        400: { description: 'Not an address', schema: ErrorBodySchema },
        429: { description: 'Over 250 open channels count against the per-IP costly limit', schema: ErrorBodySchema },
        503: { description: 'Ledger unavailable', schema: ErrorBodySchema },
      },
      handler: async ({ params, reply, costly }) => {
        const account = await deps.ledger.getAccount(params.address);
        const smart = account.account;
        // One faucet grant can open thousands of channels for one payer: listed like GET /channels.
        const list = await listing.list({ payer: params.address, status: 'open' });
        if (list.costly) await costly();
        const codes = new Map([[deps.ledgerInfo.contracts.asset, deps.ledgerInfo.asset.code]]);
        const record = {
          address: params.address,
          kind: smart ? 'smart' : 'account',
          policy: smart?.policy
            ? {
                ...smart.policy,
                perTxCap: formatUnits(smart.policy.perTxCap),
                dailyCap: formatUnits(smart.policy.dailyCap),
              }
            : null,
          spentToday: formatUnits(smart?.spentToday ?? 0n),
          day: smart?.day ?? null,
          frozen: smart?.frozen ?? false,
          balances: account.balances.map((b) => ({
            asset: b.asset,
            code: codes.get(b.asset) ?? '',
            amount: formatUnits(b.amount),
          })),
        };
        // The record's JSON with `channels` (already JSON) as its last member.
        const head = JSON.stringify(record).slice(0, -1);
        return reply
          .type('application/json; charset=utf-8')
          .send(Buffer.concat([Buffer.from(`${head},"channels":`), ChannelListing.array(list), Buffer.from('}')]));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/accounts/:address/ledger',
      summary: 'The account’s events, newest first, cursor-paginated (50 by default, at most 200).',
      tags: TAGS,
      params: z.object({ address: zAddress }),
      query: z.object({ cursor: z.string().max(200).optional(), limit: zPageLimit }),
      responses: {
        200: { description: 'A page of events', schema: AccountLedgerPageSchema },
        400: { description: 'Bad cursor or limit', schema: ErrorBodySchema },
      },
      handler: async ({ params, query }) => {
        const before = decodeCursor(query.cursor);
        const events = await deps.store.events({
          account: params.address,
          order: 'desc',
          limit: Number(query.limit),
          ...(before !== undefined ? { before } : {}),
        });
        const last = events.at(-1);
        return {
          events: events.map(eventView),
          nextCursor: events.length === Number(query.limit) && last ? encodeCursor(last.id) : null,
        };
      },
    }),
  ];
}
