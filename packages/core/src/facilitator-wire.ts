// The facilitator's HTTP answers that others read besides its own routes (docs/protocol.md#channels-and-records), declared
// once as zod schemas: the routes declare their responses with them (so the OpenAPI document is
// generated from them) and the console takes their output types, type-only, so the page reads
// exactly what the facilitator sends. Siblings: api.ts (x402, channels, claims), revenue-wire.ts
// (a seller's revenue), float-wire.ts (the credit pool), demo-wire.ts (the demo's controls).
//
//   const stats: StatsView = await (await fetch('/stats')).json();
import { z } from 'zod';
import { ChannelViewSchema } from './api.js';
import { zAddress, zIsoTime, zUnits } from './schemas.js';
import { BatchRequirementsSchema } from './batch-requirements.js';
import { BazaarSchema, PaymentRequirementsSchema } from './x402.js';

/** GET /channels: every known channel, or those of one payer, payee or status. */
export const ChannelListSchema = z.object({ channels: z.array(ChannelViewSchema) });
export type ChannelList = z.output<typeof ChannelListSchema>;

/** An event on the wire (docs/protocol.md#channels-and-records): `{ id, type, source, ts, channelId?, account?, data }`. */
export const EventViewSchema = z
  .object({
    id: z.number().int(),
    type: z.string(),
    source: z.enum(['gateway', 'facilitator', 'ledger']),
    ts: z.string(),
    channelId: z.string().optional(),
    account: z.string().optional(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });
export type EventView = z.output<typeof EventViewSchema>;

/** GET /stats. */
export const StatsSchema = z
  .object({
    vouchersAccepted: z.number().int(),
    vouchersRejected: z.number().int(),
    chainTxCount: z.number().int(),
    volume: z.string(),
    channelsOpen: z.number().int(),
    medianVerifyLatencyMs: z.number().nullable().meta({
      description:
        'Median time to verify a voucher including its durable write, over the last 4,096 accepted vouchers (voucher.accepted events report the time before the write).',
    }),
    vouchersPerClaim: z.number().nullable().meta({
      description:
        'The vouchers each claim covered, on average (1 decimal); claims whose coverage is unknown are left out; null when there is none.',
    }),
    exactEquivalent: z.object({ txCount: z.number().int(), seconds: z.number() }),
  })
  .meta({ id: 'Stats' });
export type StatsView = z.output<typeof StatsSchema>;

/** GET /accounts/:address: the account record, from the ledger and the channel book. */
export const AccountSchema = z
  .object({
    address: zAddress,
    kind: z.enum(['account', 'smart']),
    policy: z
      .object({
        agentKey: z.string(),
        perTxCap: zUnits,
        dailyCap: zUnits,
        payees: z.array(z.string()),
        expiresLedger: z.number().int(),
      })
      .nullable(),
    spentToday: zUnits,
    day: z.string().nullable(),
    frozen: z.boolean(),
    balances: z.array(z.object({ asset: z.string(), code: z.string(), amount: zUnits })),
    channels: z.array(ChannelViewSchema),
  })
  .meta({ id: 'Account' });
export type AccountView = z.output<typeof AccountSchema>;

/** GET /accounts/:address/ledger: the account's events, newest first. */
export const AccountLedgerPageSchema = z
  .object({ events: z.array(EventViewSchema), nextCursor: z.string().nullable() })
  .meta({ id: 'AccountLedgerPage' });
export type AccountLedgerPage = z.output<typeof AccountLedgerPageSchema>;

/** One listing of GET /discovery/resources: a paid resource, keyed by (resource URL, payTo). */
export const DiscoveryItemSchema = z
  .object({
    resource: z.string().meta({ description: 'The resource URL.' }),
    type: z.literal('http'),
    x402Version: z.literal(2),
    accepts: z.array(z.union([PaymentRequirementsSchema, BatchRequirementsSchema])).meta({
      description:
        'The terms of the latest verified payment, as a 402 `accepts` offers them: the `channel` option first, then the same terms as x402 `batch-settlement` (a voucher is a ceiling; the channel is bound to the receiver authorizer).',
    }),
    lastUpdated: zIsoTime,
    extensions: z.object({ bazaar: BazaarSchema }),
    description: z.string(),
    mimeType: z.string(),
    payTo: zAddress,
    payments: z.number().int().min(0).meta({ description: 'Verified payments for this listing.' }),
    payers: z.number().int().min(0).meta({ description: 'Distinct payers.' }),
    firstSeen: zIsoTime,
  })
  .meta({ id: 'DiscoveryItem' });
export type DiscoveryItem = z.output<typeof DiscoveryItemSchema>;

/** GET /discovery/resources: one page of listings. */
export const DiscoveryResponseSchema = z
  .object({
    x402Version: z.literal(2),
    items: z.array(DiscoveryItemSchema),
    pagination: z.object({ limit: z.number().int(), offset: z.number().int(), total: z.number().int() }),
  })
  .meta({ id: 'DiscoveryResources' });
export type DiscoveryResponse = z.output<typeof DiscoveryResponseSchema>;
