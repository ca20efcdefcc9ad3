// Leader election on PostgreSQL: the leader is the instance whose dedicated connection holds a
// session-level advisory lock. Every instance tries the lock each `pollMs`; the holder's try
// succeeds again (the lock is re-entrant), so it also notices at once if its connection was lost
// and replaced — then someone else may hold the lock and it steps down. When the holder dies
// (kill -9 included) PostgreSQL drops its connection and the lock with it; another instance takes
// it at its next try, so the singleton work moves within one poll (default 1 s).
import postgres from 'postgres';
import type { Sql } from 'postgres';
import type { LeaderWork, Leadership } from './leadership.js';

/** Advisory lock class of leadership, beside the store's migration and write locks. */
export const LEADER_LOCK_CLASS = 0x73766303; // "svc\x03"
export const LEADER_POLL_MS = 1_000;

export interface PostgresLeadershipOptions {
  url: string;
  /** The store's schema: one leader per schema. */
  schema: string;
  pollMs?: number;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export class PostgresLeadership implements Leadership {
  readonly mode = 'elected' as const;
  readonly #sql: Sql;
  readonly #schema: string;
  readonly #pollMs: number;
  readonly #log: NonNullable<PostgresLeadershipOptions['log']> | null;
  #work: LeaderWork | null = null;
  #leader = false;
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;
  #closed = false;

  private constructor(sql: Sql, o: PostgresLeadershipOptions) {
    this.#sql = sql;
    this.#schema = o.schema;
    this.#pollMs = o.pollMs ?? LEADER_POLL_MS;
    this.#log = o.log ?? null;
  }

  static open(o: PostgresLeadershipOptions): PostgresLeadership {
    // One connection, never recycled: the lock lives exactly as long as it does.
    const sql = postgres(o.url, { max: 1, idle_timeout: 0, max_lifetime: null, onnotice: () => undefined, connection: { application_name: 'svc-leader' } });
    return new PostgresLeadership(sql, o);
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
    await this.#sql.end({ timeout: 5 });
  }

  async #tick(): Promise<void> {
    let held = false;
    try {
      const [row] = await this.#sql<{ held: boolean }[]>`SELECT pg_try_advisory_lock(${LEADER_LOCK_CLASS}, hashtext(${this.#schema})) AS held`;
      held = row?.held === true;
    } catch (err) {
      // Without the connection the lock is gone too (or will be): step down until it is back.
      this.#log?.warn({ err }, 'leadership: the database did not answer; not the leader until it does');
    }
    if (!this.#closed) await this.#step(held);
  }

  async #step(leader: boolean): Promise<void> {
    if (leader === this.#leader || !this.#work) return;
    this.#leader = leader;
    this.#log?.info({ leader }, leader ? 'leadership: this instance runs the claim scheduler and the ledger watcher' : 'leadership: stepped down');
    try {
      await (leader ? this.#work.gain() : this.#work.lose());
    } catch (err) {
      this.#log?.warn({ err }, 'leadership: starting or stopping the singleton work failed');
    }
  }
}
