// The Bus across instances sharing one PostgreSQL database (LISTEN/NOTIFY).
//
//   const bus = await PostgresBus.open({ url, schema, store });
//
// Events: a NOTIFY carries only "there is more"; every instance — the one that wrote included —
// delivers events by tailing the events table in id order (id > the last delivered). Event ids
// are allocated and committed in order across instances (the store's write lock), so the tail
// never skips one, and an SSE client sees the same ids in the same order on every instance, which
// keeps Last-Event-ID resumption exact. Tails are coalesced: one read in flight, and a wake during
// it means one more read after it, so a burst of commits costs a few reads, not one each.
//
// Signals (a stream wait woken by its voucher): fired locally at once and sent with NOTIFY, so a
// wait on instance A wakes when its voucher lands on instance B. A signal is a hint — the waiter
// re-reads the store — so a duplicate or a lost one costs at most a wait's own timeout.
import postgres from 'postgres';
import { reconnectBackoff } from '../store/faults.js';
import { PG_DRIVER_OPTIONS } from '../store/postgres/driver.js';
import type { Sql } from 'postgres';
import type { Store, StoredEvent } from '../store/port.js';
import type { Bus, Unsubscribe } from './port.js';
import { MemoryBus } from './memory-bus.js';

/** Events read per tail query. */
const TAIL_PAGE = 500;
/** A tail also runs this often without any NOTIFY: a lost notification delays delivery, no more. */
const TAIL_FALLBACK_MS = 1_000;
/** NOTIFY payloads are limited to 8000 bytes; topics are stream ids (32 hex). */
const MAX_TOPIC_CHARS = 200;

export interface PostgresBusOptions {
  url: string;
  /** The store's schema: notification channels are per schema, so test schemas never cross. */
  schema: string;
  store: Store;
  onError?: (err: unknown, what: string) => void;
}

export class PostgresBus implements Bus {
  readonly #sql: Sql;
  readonly #store: Store;
  readonly #local: MemoryBus;
  readonly #channels: { events: string; signals: string };
  readonly #onError: (err: unknown, what: string) => void;
  readonly #fallback: NodeJS.Timeout;
  #unlisten: (() => Promise<void>)[] = [];
  #lastId: number;
  #tailing: Promise<void> | null = null;
  #again = false;
  #notifying = false;
  #notifyAgain = false;
  #closed = false;

  private constructor(sql: Sql, o: PostgresBusOptions, lastId: number) {
    this.#sql = sql;
    this.#store = o.store;
    this.#onError = o.onError ?? (() => undefined);
    this.#local = new MemoryBus((err) => this.#onError(err, 'a bus listener failed'));
    const tag = o.schema.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40);
    this.#channels = { events: `svc_events_${tag}`, signals: `svc_signals_${tag}` };
    this.#lastId = lastId;
    this.#fallback = setInterval(() => this.#tail(), TAIL_FALLBACK_MS);
    this.#fallback.unref();
  }

  static async open(o: PostgresBusOptions): Promise<PostgresBus> {
    // One connection for NOTIFY; postgres.js opens its own dedicated one for LISTEN.
    const sql = postgres(o.url, {
      ...PG_DRIVER_OPTIONS,
      max: 1,
      backoff: reconnectBackoff,
      onnotice: () => undefined,
      connection: { application_name: 'svc-bus' },
    });
    const [newest] = await o.store.events({ order: 'desc', limit: 1 });
    const bus = new PostgresBus(sql, o, newest?.id ?? 0);
    const events = await sql.listen(bus.#channels.events, () => bus.#tail());
    const signals = await sql.listen(bus.#channels.signals, (topic) => bus.#local.signal(topic));
    bus.#unlisten = [() => events.unlisten(), () => signals.unlisten()];
    return bus;
  }

  /** Events this instance stored: every instance (this one first) reads them from the table. */
  publish(events: readonly StoredEvent[]): void {
    if (events.length === 0 || this.#closed) return;
    this.#tail();
    this.#notifyEvents();
  }

  subscribe(listener: (event: StoredEvent) => void): Unsubscribe {
    return this.#local.subscribe(listener);
  }

  signal(topic: string): void {
    this.#local.signal(topic);
    if (this.#closed || topic.length > MAX_TOPIC_CHARS) return;
    this.#sql
      .notify(this.#channels.signals, topic)
      .catch((err: unknown) => this.#onError(err, 'could not send a signal to the other instances'));
  }

  onSignal(topic: string, listener: () => void): Unsubscribe {
    return this.#local.onSignal(topic, listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#fallback);
    await Promise.allSettled(this.#unlisten.map((u) => u()));
    await this.#tailing?.catch(() => undefined);
    await this.#local.close();
    await this.#sql.end({ timeout: 5 });
  }

  /** One NOTIFY in flight; publishes meanwhile fold into one more. */
  #notifyEvents(): void {
    if (this.#notifying) {
      this.#notifyAgain = true;
      return;
    }
    this.#notifying = true;
    this.#notifyAgain = false;
    this.#sql
      .notify(this.#channels.events, '')
      .catch((err: unknown) => this.#onError(err, 'could not notify the other instances of new events'))
      .finally(() => {
        this.#notifying = false;
        if (this.#notifyAgain && !this.#closed) this.#notifyEvents();
      });
  }

  /** Reads and delivers every event after the last delivered one, in id order. */
  #tail(): void {
    if (this.#closed) return;
    if (this.#tailing) {
      this.#again = true;
      return;
    }
    this.#again = false;
    this.#tailing = this.#drain()
      .catch((err: unknown) => this.#onError(err, 'could not read new events'))
      .finally(() => {
        this.#tailing = null;
        if (this.#again) this.#tail();
      });
  }

  async #drain(): Promise<void> {
    for (;;) {
      const page = await this.#store.events({ after: this.#lastId, order: 'asc', limit: TAIL_PAGE });
      if (page.length === 0 || this.#closed) return;
      this.#lastId = page[page.length - 1]!.id;
      this.#local.publish(page);
      if (page.length < TAIL_PAGE) return;
    }
  }
}
