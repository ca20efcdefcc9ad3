// The Bus port: events fan out to subscribers (SSE clients, stream waits). In one process the
// MemoryBus; across instances a PostgreSQL LISTEN/NOTIFY bus with the same interface.
import type { StoredEvent } from '../store/port.js';

export type Unsubscribe = () => void;

export interface Bus {
  publish(events: readonly StoredEvent[]): void;
  subscribe(listener: (event: StoredEvent) => void): Unsubscribe;
  close(): Promise<void>;
}
