// A postgres.js pool whose every query has a deadline, and which is replaced whole when one misses
// it. postgres.js 3.4 can leave a query unsettled for good when its connection dies at the wrong
// moment (upstream #1154, #1208): a read that waits on it would hang its request — seen as a /verify
// that never answered while PostgreSQL crashed under load. Past the deadline the query
// fails as a store fault (503), and the pool it ran on is ended, so no later query queues behind a
// connection that will never answer.
import type { Sql } from 'postgres';

export class ReplaceablePool {
  #sql: Sql;

  constructor(
    first: Sql,
    private readonly open: () => Sql,
    private readonly deadlineMs: number,
  ) {
    this.#sql = first;
  }

  /** The current pool (for work that has no deadline of its own, such as migrations). */
  get sql(): Sql {
    return this.#sql;
  }

  run<T>(query: (sql: Sql) => Promise<T>): Promise<T> {
    const sql = this.#sql;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        this.#replace(sql);
        reject(
          Object.assign(new Error(`the database did not answer within ${this.deadlineMs} ms`), {
            code: 'READ_STALLED',
          }),
        );
      }, this.deadlineMs);
    });
    return Promise.race([query(sql), late]).finally(() => clearTimeout(timer));
  }

  end(timeoutSeconds: number): Promise<void> {
    return this.#sql.end({ timeout: timeoutSeconds });
  }

  #replace(old: Sql): void {
    if (this.#sql !== old) return;
    this.#sql = this.open();
    old.end({ timeout: 0 }).catch(() => undefined);
  }
}
