// The Bus port: events fan out to subscribers (SSE clients), and signals wake waiters (a stream
// wait woken by its voucher). In one process the MemoryBus; across instances a PostgreSQL
// LISTEN/NOTIFY bus with the same interface, so a wait on one instance wakes when its voucher
// lands on another.
import type { StoredEvent } from '../store/port.js';

export type Unsubscribe = () => void;

export interface Bus {
  publish(events: readonly StoredEvent[]): void;
  subscribe(listener: (event: StoredEvent) => void): Unsubscribe;
  /** Wakes whoever listens on `topic` (a hint: listeners re-read the store). */
  signal(topic: string): void;
  onSignal(topic: string, listener: () => void): Unsubscribe;
  close(): Promise<void>;
}
