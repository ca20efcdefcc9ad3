// The live event feed: one EventSource on GET /events for the whole page. The facilitator sends
// its last 200 events, then live ones; when the stream drops, the browser reconnects by itself
// and sends Last-Event-ID, so the facilitator resumes after the last event received. Events are
// kept (the last KEEP) and handed to the views in small batches.
import type { EventView } from '@svc/core';
import { connection } from './connection.js';

const KEEP = 1000;
const BATCH_MS = 50;
/** After the facilitator refused the stream (429, or 503 while it stopped), try again this late. */
const REOPEN_MS = 5000;

type Listener = (added: readonly EventView[]) => void;
type StateListener = (open: boolean) => void;

export class Feed {
  private source: EventSource | null = null;
  private readonly kept: EventView[] = [];
  private lastId = 0;
  private pending: EventView[] = [];
  private flushTimer: number | null = null;
  private readonly listeners = new Set<Listener>();
  private readonly stateListeners = new Set<StateListener>();
  private isOpen = false;

  /** `types`: every event name to listen for (SSE frames are named by event type). */
  constructor(private readonly types: readonly string[]) {
    connection.onChange((state) => {
      if (state === 'up' && this.source?.readyState === EventSource.CLOSED) this.connect();
    });
  }

  start(): void {
    if (!this.source) this.connect();
  }

  get open(): boolean {
    return this.isOpen;
  }

  /** Events received so far, oldest first. */
  get events(): readonly EventView[] {
    return this.kept;
  }

  /** `listener` gets each batch of new events. Returns the unsubscribe. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onState(listener: StateListener): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private connect(): void {
    this.source?.close();
    const source = new EventSource('/events');
    this.source = source;
    const receive = (message: MessageEvent<string>) => this.receive(message);
    for (const type of this.types) source.addEventListener(type, receive);
    source.addEventListener('message', receive);
    source.onopen = () => {
      connection.up();
      this.setOpen(true);
    };
    source.onerror = () => {
      this.setOpen(false);
      void this.diagnose(source);
    };
  }

  /** The stream failed: is the facilitator down, or did it refuse this stream? */
  private async diagnose(source: EventSource): Promise<void> {
    try {
      const res = await fetch('/supported', { cache: 'no-store' });
      if (!res.ok) throw new Error(String(res.status));
      connection.up();
      if (source.readyState === EventSource.CLOSED) window.setTimeout(() => this.reopen(source), REOPEN_MS);
    } catch {
      connection.down();
    }
  }

  /** Opens a new stream if `closed` is still the current one (it sends the backlog again; seen ids are skipped). */
  private reopen(closed: EventSource): void {
    if (closed === this.source && closed.readyState === EventSource.CLOSED) this.connect();
  }

  private receive(message: MessageEvent<string>): void {
    let event: EventView;
    try {
      event = JSON.parse(message.data) as EventView;
    } catch {
      return;
    }
    if (typeof event.id !== 'number' || event.id <= this.lastId) return;
    this.lastId = event.id;
    this.kept.push(event);
    if (this.kept.length > KEEP) this.kept.splice(0, this.kept.length - KEEP);
    this.pending.push(event);
    this.flushTimer ??= window.setTimeout(() => this.flush(), BATCH_MS);
  }

  private flush(): void {
    this.flushTimer = null;
    const batch = this.pending;
    this.pending = [];
    for (const listener of this.listeners) listener(batch);
  }

  private setOpen(open: boolean): void {
    if (open === this.isOpen) return;
    this.isOpen = open;
    for (const listener of this.stateListeners) listener(open);
  }
}
