// How stream sessions end: by their seller (DELETE /streams/:id), by a wait that decided it
// (streams.ts), idle for longer than the idle timeout, or orphaned by a restart — no seller loop is
// attached to a session that was open before it, so each is ended ABORTED, with what it was
// charged. Whichever comes first writes the end with its `stream.ended` event, once.
import { SvcError, formatUnits } from '@svc/core';
import type { StreamEndReason } from '@svc/core';
import type { Bus } from '../bus/port.js';
import type { StreamRecord, Store } from '../store/port.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import { schemeOf, streamEvent, topicOf } from './stream-records.js';

export interface StreamEndingsDeps {
  store: Store;
  events: EventLog;
  bus: Bus;
  clock: Clock;
  idleMs: number;
  /** Whether a wait is in progress on the session: such a session is never idle. */
  waiting(id: string): boolean;
  /** Told of each session this instance ended, with its reason. */
  ended(reason: StreamEndReason): void;
}

export class StreamEndings {
  constructor(private readonly deps: StreamEndingsDeps) {}

  /** DELETE /streams/:id: the seller ends the session (again: the recorded outcome). */
  async end(id: string, reason: StreamEndReason, units: number | null): Promise<StreamRecord> {
    const stream = await this.deps.store.getStream(id);
    if (!stream) throw new SvcError('STREAM_NOT_FOUND', `No stream session ${id}.`);
    if (stream.status === 'open') await this.finish(stream, reason, units);
    else if (units !== null && stream.units === null)
      await this.deps.store.write([{ op: 'stream.units', streamId: id, units }]);
    this.deps.bus.signal(topicOf(id));
    return (await this.deps.store.getStream(id)) ?? stream;
  }

  /** Ends sessions idle for longer than the idle timeout (no wait, no voucher). */
  async sweep(): Promise<number> {
    const before = new Date(this.deps.clock.now() - this.deps.idleMs).toISOString();
    const idle = await this.deps.store.listStreams({ status: 'open', idleBefore: before });
    let ended = 0;
    for (const s of idle) {
      if (this.deps.waiting(s.id)) continue;
      if (await this.finish(s, 'ABORTED', null)) ended++;
      this.deps.bus.signal(topicOf(s.id));
    }
    return ended;
  }

  /** After a restart no seller loop is attached to an open session: end them, cleanly. */
  async abortOrphans(): Promise<number> {
    let ended = 0;
    for (const s of await this.deps.store.listStreams({ status: 'open' }))
      if (await this.finish(s, 'ABORTED', null)) ended++;
    return ended;
  }

  /** Ends an open session with its stream.ended event, once; false when it was no longer open. */
  async finish(s: StreamRecord, reason: StreamEndReason, units: number | null): Promise<boolean> {
    const at = new Date(this.deps.clock.now()).toISOString();
    const result = await this.deps.events.commit([
      { op: 'stream.end', streamId: s.id, reason, units, at },
      streamEvent('stream.ended', s, at, {
        streamId: s.id,
        channelId: s.channelId.toString(),
        unit: s.unit,
        resource: s.resource,
        reason,
        units,
        charged: formatUnits(s.charged),
        vouchers: s.vouchers,
        ...schemeOf(s),
      }),
    ]);
    if (result.ok) this.deps.ended(reason);
    return result.ok;
  }
}
