// Each connection's prepared statements, compiled once by their SQL text. Apart from the ops that
// use them (sqlite-ops.ts, sqlite-channel-cas.ts, sqlite-queries.ts), which import it and not each other for it.
import type Database from 'better-sqlite3';

/** Prepared statements by SQL text: each shape is compiled once per connection. */
export class StatementCache {
  readonly #db: Database.Database;
  readonly #cache = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
  }

  get(sql: string): Database.Statement {
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      stmt = this.#db.prepare(sql);
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }
}
