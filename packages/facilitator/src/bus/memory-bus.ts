import type { StoredEvent } from '../store/port.js';
import type { Bus, Unsubscribe } from './port.js';

/** In-process fan-out. A listener that throws is isolated from the others. */
export class MemoryBus implements Bus {
  private readonly listeners = new Set<(event: StoredEvent) => void>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {}

  publish(events: readonly StoredEvent[]): void {
    for (const event of events) {
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (err) {
          this.onListenerError(err);
        }
      }
    }
  }

  subscribe(listener: (event: StoredEvent) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}
