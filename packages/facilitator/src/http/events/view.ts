// A stored event as the wire shows it (docs/protocol.md#channels-and-records; the shape is @svc/core's EventView): GET /events,
// the event feed, an account's ledger and reports answer with it.
import type { EventView } from '@svc/core';
import type { StoredEvent } from '../../store/port.js';

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
