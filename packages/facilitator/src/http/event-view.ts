import { z } from 'zod';
import type { StoredEvent } from '../store/port.js';

/** An event on the wire (PROTOCOL.md §7): `{ id, type, source, ts, channelId?, account?, data }`. */
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
export type EventView = z.infer<typeof EventViewSchema>;

export function eventView(e: StoredEvent): EventView {
  return {
    id: e.id,
    type: e.type,
    source: e.source,
    ts: e.ts,
    ...(e.channelId !== null ? { channelId: e.channelId.toString() } : {}),
    ...(e.account !== null ? { account: e.account } : {}),
    data: e.data,
  };
}
