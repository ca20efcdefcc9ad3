// Commits writes and publishes the events they stored, once they are durable.
import type { Bus } from '../bus/port.js';
import type { Store, WriteOp, WriteResult } from '../store/port.js';

export class EventLog {
  constructor(
    private readonly store: Store,
    private readonly bus: Bus,
  ) {}

  async commit(ops: WriteOp[]): Promise<WriteResult> {
    const result = await this.store.write(ops);
    if (result.ok && result.events.length > 0) this.bus.publish(result.events);
    return result;
  }
}
