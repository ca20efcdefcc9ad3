// Leader election on PostgreSQL: the leader is the instance whose dedicated connection holds a
// session-level advisory lock. Every instance tries the lock each `pollMs`; the holder's try
// succeeds again (the lock is re-entrant), so it also notices at once if its connection was lost
// and replaced — then someone else may hold the lock and it steps down. When the holder dies
// (kill -9 included) PostgreSQL drops its connection and the lock with it; another instance takes
// it at its next try, so the singleton work moves within one poll (default 1 s).
//
// Leadership follows the ability to do the work: before each try an instance checks
// that it can write to its store (`canLead`, a small write bounded in time). One that cannot does
// not try, and a leader that cannot lets the lock go and stops its work, so a healthy instance
// takes over. A holder that stops polling altogether — hung, or cut off from the database without
// the connection closing — loses the lock to the server's idle_session_timeout on its leadership
// connection (the lease, 10 polls by default): its session never idles that long while it polls.
import postgres from 'postgres';
import { reconnectBackoff } from '../store/faults.js';
import { PG_DRIVER_OPTIONS } from '../store/postgres/driver.js';
import type { Sql } from 'postgres';
import type { LeaderWork, Leadership } from './leadership.js';

/** Advisory lock class of leadership, beside the store's migration and write locks. */
export const LEADER_LOCK_CLASS = 0x73766303; // "svc\x03"
export const LEADER_POLL_MS = 1_000;
const LEASE_POLLS = 10;
const MIN_LEASE_MS = 5_000;

export interface PostgresLeadershipOptions {
  url: string;
  /** The store's schema: one leader per schema. */
  schema: string;
  pollMs?: number;
  /** Whether this instance can do the leader's work now (its store takes a write); given `timeoutMs`. */
  canLead?: (timeoutMs: number) => Promise<boolean>;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export class PostgresLeadership implements Leadership {
  readonly mode = 'elected' as const;
  readonly #url: string;
  readonly #schema: string;
  readonly #pollMs: number;
  readonly #leaseMs: number;
  /** How long one step of a poll (the ability check, the lock query) may take: well inside the lease. */
  readonly #stepMs: number;
  readonly #canLead: (timeoutMs: number) => Promise<boolean>;
  readonly #log: NonNullable<PostgresLeadershipOptions['log']> | null;
  #sql: Sql | null = null;
  #work: LeaderWork | null = null;
  #leader = false;
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;
  #closed = false;
  #unable = false;

  private constructor(o: PostgresLeadershipOptions) {
    this.#url = o.url;
    this.#schema = o.schema;
    this.#pollMs = o.pollMs ?? LEADER_POLL_MS;
    this.#leaseMs = Math.max(MIN_LEASE_MS, LEASE_POLLS * this.#pollMs);
    this.#stepMs = Math.floor(this.#leaseMs / 3);
    this.#canLead = o.canLead ?? (() => Promise.resolve(true));
    this.#log = o.log ?? null;
  }

  static open(o: PostgresLeadershipOptions): PostgresLeadership {
    return new PostgresLeadership(o);
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  run(work: LeaderWork): void {
    this.#work = work;
    const tick = () => {
      this.#ticking = this.#tick().finally(() => {
        this.#ticking = null;
        if (!this.#closed) this.#timer = setTimeout(tick, this.#pollMs);
      });
    };
    tick();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#ticking;
    await this.#step(false);
    // Ending the connection releases the lock for the next leader at once.
    await this.#sql?.end({ timeout: 5 });
  }

  /** One connection, never recycled while it works: the lock lives exactly as long as it does. */
  #connection(): Sql {
    this.#sql ??= postgres(this.#url, {
      ...PG_DRIVER_OPTIONS,
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      connect_timeout: Math.ceil(this.#stepMs / 1000),
      backoff: reconnectBackoff,
      onnotice: () => undefined,
      connection: { application_name: 'svc-leader', idle_session_timeout: this.#leaseMs },
    });
    return this.#sql;
  }

  async #tick(): Promise<void> {
    const able = await within(this.#canLead(this.#stepMs), this.#stepMs).catch(() => false);
    if (!able) {
      if (!this.#unable || this.#leader)
        this.#log?.warn(
          { leader: this.#leader },
          'leadership: this instance cannot write to its store; not leading until it can',
        );
      this.#unable = true;
      if (this.#leader) await this.#letGo();
      return;
    }
    this.#unable = false;
    let held = false;
    try {
      const sql = this.#connection();
      const rows = await within(
        sql<{ held: boolean }[]>`SELECT pg_try_advisory_lock(${LEADER_LOCK_CLASS}, hashtext(${this.#schema})) AS held`,
        this.#stepMs,
      );
      held = rows[0]?.held === true;
    } catch (err) {
      // Without the connection the lock is gone too (or will be, with the lease): step down until it is back.
      this.#log?.warn({ err }, 'leadership: the database did not answer; not the leader until it does');
      this.#discard();
    }
    if (!this.#closed) await this.#step(held);
  }

  /** Stops the work, then gives the lock back (or drops the connection that holds it). */
  async #letGo(): Promise<void> {
    await this.#step(false);
    try {
      await within(this.#connection()`SELECT pg_advisory_unlock_all()`, this.#stepMs);
    } catch {
      this.#discard();
    }
  }

  #discard(): void {
    const sql = this.#sql;
    this.#sql = null;
    sql?.end({ timeout: 0 }).catch(() => undefined);
  }

  async #step(leader: boolean): Promise<void> {
    if (leader === this.#leader || !this.#work) return;
    this.#leader = leader;
    this.#log?.info(
      { leader },
      leader ? 'leadership: this instance runs the claim scheduler and the ledger watcher' : 'leadership: stepped down',
    );
    try {
      await (leader ? this.#work.gain() : this.#work.lose());
    } catch (err) {
      this.#log?.warn({ err }, 'leadership: starting or stopping the singleton work failed');
    }
  }
}

/** `p`, or a rejection after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_resolve, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  );
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
