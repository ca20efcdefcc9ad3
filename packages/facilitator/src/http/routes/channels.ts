// Channels: the list and view of PROTOCOL.md §7, and the manual claim (callable by anyone; pays
// only the channel's payee; minimum amount and a cooldown per channel).
import {
  ChannelViewSchema,
  ClaimResponseSchema,
  ErrorBodySchema,
  SvcError,
  formatUnits,
  zAddress,
  zChannelId,
} from '@svc/core';
import { z } from 'zod';
import type { Services } from '../../services.js';
import type { ChannelListing } from '../channel-listing.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

const TAGS = ['channels'];
const IdParams = z.object({ id: zChannelId });

export function channelRoutes(s: Services, listing: ChannelListing): AnyRoute[] {
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
        200: { description: 'Channels', schema: z.object({ channels: z.array(ChannelViewSchema) }) },
        429: {
          description: 'A long list (over 250 channels) counts against the per-IP costly limit',
          schema: ErrorBodySchema,
        },
      },
      // Built in pages and shared (channel-listing.ts); one of over 250 channels counts as a costly request.
      handler: async ({ query, reply, costly }) => {
        const list = await listing.list(query);
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
        const record = (await s.store.getChannel(id)) ?? (await s.book.get(id))?.record;
        if (!record) throw new SvcError('NOT_FOUND', `Channel ${id} does not exist on ${s.ledgerInfo.network}.`);
        return s.channelView(record);
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
      handler: async ({ params }) => {
        const id = BigInt(params.id);
        const record = (await s.store.getChannel(id)) ?? (await s.book.get(id))?.record;
        if (!record) throw new SvcError('NOT_FOUND', `Channel ${id} does not exist on ${s.ledgerInfo.network}.`);
        // The contract takes claims only until the channel closes (PROTOCOL.md §7): sending one
        // now would only be refused (21) and cost a transaction.
        if (record.status === 'closed')
          throw new SvcError('CONFLICT', `Channel ${id} is closed; nothing more can be claimed on it.`);
        const unclaimed = record.lastAccepted - record.claimed;
        if (unclaimed < s.config.MANUAL_CLAIM_MIN) {
          throw new SvcError(
            'CONFLICT',
            `Channel ${id} has ${unclaimed > 0n ? unclaimed : 0n} unclaimed; a manual claim needs at least ${s.config.MANUAL_CLAIM_MIN}.`,
          );
        }
        // Counted on the limiter backend: with RATE_LIMIT_STORE=postgres or redis the cooldown holds
        // across every instance of a cluster.
        const wait = (await s.claimCooldown?.take(id.toString())) ?? null;
        if (wait !== null)
          throw new SvcError(
            'RATE_LIMITED',
            `Channel ${id} was claimed manually less than ${s.config.MANUAL_CLAIM_COOLDOWN_SECONDS} s ago.`,
            { retryAfter: wait },
          );
        const out = await s.claimer.claim(id);
        if (out.status === 'nothing') throw new SvcError('CONFLICT', `Channel ${id} has nothing left to claim.`);
        if (out.status === 'rejected') {
          throw new SvcError('LEDGER_REJECTED', `The ledger rejected the claim: ${out.codeName} (${out.code}).`, {
            source: 'ledger',
            tx: out.tx,
          });
        }
        return {
          channelId: id.toString(),
          amount: formatUnits(out.amount),
          cumulative: formatUnits(out.cumulative),
          vouchersCovered: out.vouchersCovered,
          tx: out.tx,
          ledger: out.ledger,
        };
      },
    }),
  ];
}
