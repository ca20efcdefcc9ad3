import type { StoredEvent } from '../store/port.js';
import type { Bus, Unsubscribe } from './port.js';

/** In-process fan-out. A listener that throws is isolated from the others. */
export class MemoryBus implements Bus {
  private readonly listeners = new Set<(event: StoredEvent) => void>();
  private readonly topics = new Map<string, Set<() => void>>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {}

  publish(events: readonly StoredEvent[]): void {
    for (const event of events) {
      for (const listener of this.listeners) this.safely(() => listener(event));
    }
  }

  subscribe(listener: (event: StoredEvent) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  signal(topic: string): void {
    for (const listener of [...(this.topics.get(topic) ?? [])]) this.safely(listener);
  }

  onSignal(topic: string, listener: () => void): Unsubscribe {
    let set = this.topics.get(topic);
    if (!set) {
      set = new Set();
      this.topics.set(topic, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.topics.delete(topic);
    };
  }

  close(): Promise<void> {
    this.listeners.clear();
    this.topics.clear();
    return Promise.resolve();
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.onListenerError(err);
    }
  }
}
