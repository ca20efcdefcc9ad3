// Open event streams (GET /events) counted across instances, so the caps of the spec — 8 per
// address, 200 in all — hold for the cluster, not per instance. Each instance publishes its own
// counts per address every `everyMs` into one small table and reads everyone else's; a row not
// refreshed for `staleMs` (its instance died) no longer counts. Between two refreshes an instance
// sees the others' counts as of the last one, so the cap can be passed by what opened on other
// instances within that second — a bound on streams held open, not on money.
import postgres from 'postgres';
import type { Sql } from 'postgres';
import { randomBytes } from 'node:crypto';
import { PG_DRIVER_OPTIONS } from '../store/postgres/driver.js';

export interface StreamPresence {
  /** Streams open from `ip` on the other instances. */
  elsewhere(ip: string): number;
  /** Streams open on the other instances. */
  elsewhereTotal(): number;
  close(): Promise<void>;
}

/** One instance: nothing elsewhere. */
export const NO_PRESENCE: StreamPresence = {
  elsewhere: () => 0,
  elsewhereTotal: () => 0,
  close: () => Promise.resolve(),
};

const DEFAULT_EVERY_MS = 1_000;
const DEFAULT_STALE_MS = 10_000;

export class PostgresStreamPresence implements StreamPresence {
  readonly #sql: Sql;
  readonly #table: string;
  readonly #instance = randomBytes(8).toString('hex');
  readonly #local: () => ReadonlyMap<string, number>;
  readonly #timer: NodeJS.Timeout;
  readonly #staleMs: number;
  #others = new Map<string, number>();
  #othersTotal = 0;
  #published = new Set<string>();
  #running: Promise<void> | null = null;

  private constructor(
    sql: Sql,
    table: string,
    local: () => ReadonlyMap<string, number>,
    everyMs: number,
    staleMs: number,
    onError: (err: unknown) => void,
  ) {
    this.#sql = sql;
    this.#table = table;
    this.#local = local;
    this.#staleMs = staleMs;
    this.#timer = setInterval(() => {
      this.#running ??= this.refresh()
        .catch(onError)
        .finally(() => (this.#running = null));
    }, everyMs);
    this.#timer.unref();
  }

  /** `local` gives this instance's open streams per address. */
  static async open(o: {
    url: string;
    schema: string;
    local: () => ReadonlyMap<string, number>;
    everyMs?: number;
    staleMs?: number;
    onError?: (err: unknown) => void;
  }): Promise<PostgresStreamPresence> {
    const sql = postgres(o.url, {
      ...PG_DRIVER_OPTIONS,
      max: 1,
      onnotice: () => undefined,
      connection: { application_name: 'svc-presence' },
    });
    const table = `${o.schema.replace(/"/g, '""')}"."svc_event_streams`;
    await sql.unsafe(
      `CREATE TABLE IF NOT EXISTS "${table}" (instance text NOT NULL, ip text NOT NULL, n integer NOT NULL, seen timestamptz NOT NULL, PRIMARY KEY (instance, ip))`,
    );
    const presence = new PostgresStreamPresence(
      sql,
      table,
      o.local,
      o.everyMs ?? DEFAULT_EVERY_MS,
      o.staleMs ?? DEFAULT_STALE_MS,
      o.onError ?? (() => undefined),
    );
    await presence.refresh();
    return presence;
  }

  elsewhere(ip: string): number {
    return this.#others.get(ip) ?? 0;
  }

  elsewhereTotal(): number {
    return this.#othersTotal;
  }

  /** Publishes this instance's counts and reads the others'. */
  async refresh(): Promise<void> {
    const local = this.#local();
    const ips = [...local.keys()];
    const counts = ips.map((ip) => local.get(ip) ?? 0);
    const gone = [...this.#published].filter((ip) => !local.has(ip));
    await this.#sql.begin(async (tx) => {
      if (gone.length > 0)
        await tx.unsafe(
          `DELETE FROM "${this.#table}" WHERE instance = $1 AND ip IN (SELECT json_array_elements_text($2::text::json))`,
          [this.#instance, JSON.stringify(gone)],
        );
      if (ips.length > 0) {
        await tx.unsafe(
          `INSERT INTO "${this.#table}" (instance, ip, n, seen) SELECT $1, t.ip, t.n, now() FROM json_to_recordset($2::text::json) AS t(ip text, n integer)
           ON CONFLICT (instance, ip) DO UPDATE SET n = EXCLUDED.n, seen = EXCLUDED.seen`,
          [this.#instance, JSON.stringify(ips.map((ip, i) => ({ ip, n: counts[i] })))],
        );
      }
    });
    this.#published = new Set(ips);
    const rows = await this.#sql.unsafe<{ ip: string; n: string }[]>(
      `SELECT ip, sum(n)::text AS n FROM "${this.#table}" WHERE instance <> $1 AND seen > now() - make_interval(secs => $2) GROUP BY ip`,
      [this.#instance, this.#staleMs / 1000],
    );
    this.#others = new Map(rows.map((r) => [r.ip, Number(r.n)]));
    this.#othersTotal = rows.reduce((sum, r) => sum + Number(r.n), 0);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
    await this.#sql.unsafe(`DELETE FROM "${this.#table}" WHERE instance = $1`, [this.#instance]).catch(() => undefined);
    await this.#sql.end({ timeout: 5 });
  }
}
