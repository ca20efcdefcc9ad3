// Channels: the list and view of docs/protocol.md#channels-and-records, and the manual claim (its rules:
// domain/manual-claims.ts).
import {
  ChannelListSchema,
  ChannelViewSchema,
  ClaimResponseSchema,
  ErrorBodySchema,
  SvcError,
  zAddress,
  zChannelId,
} from '@svc/core';
import { z } from 'zod';
import type { ChannelView } from '@svc/core';
import type { ChannelBook } from '../../domain/channel-book.js';
import type { ManualClaims } from '../../domain/manual-claims.js';
import type { ChannelRecord, Store } from '../../store/port.js';
import type { ChannelListing } from '../channel-listing.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

const TAGS = ['channels'];
const IdParams = z.object({ id: zChannelId });

export interface ChannelDeps {
  store: Store;
  book: ChannelBook;
  listing: ChannelListing;
  manualClaims: ManualClaims;
  network: string;
  channelView: (record: ChannelRecord) => ChannelView;
}

export function channelRoutes(deps: ChannelDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/channels',
      summary:
        'Every known channel, newest first (not paginated; a list of over 100 channels may be up to a second old).',
      tags: TAGS,
      query: z.object({
        payer: zAddress.optional(),
        payee: zAddress.optional(),
        status: z.enum(['open', 'closed']).optional(),
      }),
      responses: {
        200: { description: 'Channels', schema: ChannelListSchema },
        429: {
          description: 'A long list (over 250 channels) counts against the per-IP costly limit',
          schema: ErrorBodySchema,
        },
      },
      // Built in pages and shared (channel-listing.ts); one of over 250 channels counts as a costly request.
      handler: async ({ query, reply, costly }) => {
        const list = await deps.listing.list(query);
        if (list.costly) await costly();
        return reply.type('application/json; charset=utf-8').send(list.json);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/channels/:id',
      summary: 'One channel: deposit, claimed, last accepted, remaining, expiry.',
      tags: TAGS,
      params: IdParams,
      responses: {
        200: { description: 'The channel', schema: ChannelViewSchema },
        404: { description: 'Unknown channel', schema: ErrorBodySchema },
        503: { description: 'Ledger unavailable', schema: ErrorBodySchema },
      },
      handler: async ({ params }) => {
        const id = BigInt(params.id);
        const record = (await deps.store.getChannel(id)) ?? (await deps.book.get(id))?.record;
        if (!record) throw new SvcError('NOT_FOUND', `Channel ${id} does not exist on ${deps.network}.`);
        return deps.channelView(record);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/channels/:id/claim',
      costly: true,
      summary: "Settles the channel's accepted amount on the ledger now. Callable by anyone; pays only the payee.",
      tags: TAGS,
      params: IdParams,
      responses: {
        200: { description: 'Claimed', schema: ClaimResponseSchema },
        404: { description: 'Unknown channel', schema: ErrorBodySchema },
        409: {
          description: 'The channel is closed, or less than the manual claim minimum is unclaimed',
          schema: ErrorBodySchema,
        },
        429: { description: 'Claimed too recently (cooldown per channel)', schema: ErrorBodySchema },
        502: { description: 'The ledger rejected the claim', schema: ErrorBodySchema },
        503: { description: 'Ledger unavailable', schema: ErrorBodySchema },
      },
      handler: ({ params }) => deps.manualClaims.claim(BigInt(params.id)),
    }),
  ];
}
