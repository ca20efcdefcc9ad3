// One group-commit batch on PostgreSQL: one transaction on the writer's connection, each write()
// call in its own SAVEPOINT, and the whole batch pipelined — BEGIN, the advisory lock and every
// call go out together, so a batch costs about two round trips instead of two per call.
//
// Calls are sent optimistically, each assuming the ones before it succeed. When call k fails (a
// precondition or an error), the calls after it ran on top of its partial effects, so the runner
// rolls back to call k's savepoint — which undoes k and everything after it — records k's outcome,
// and sends the rest again. Conflicts are rare (two copies of one voucher), so nearly every batch
// is a single round. A call that waited past the lock timeout ends the batch there: the calls
// after it would each wait the same lock in turn, so they fail at once with the same
// error and the calls before it commit.
//
// The transaction is driven by hand (BEGIN/SAVEPOINT/COMMIT on a reserved connection) rather than
// with sql.begin(): postgres.js fails a whole begin() scope when any statement in it fails, even
// one rolled back to a savepoint, which would turn one bad call into a failed batch.
//
// When the batch fails as a whole — the connection was cut, the server went away, the batch ran
// past its deadline — nothing more is ever written to that connection, not even ROLLBACK (the
// server rolls back a transaction whose connection ends). postgres.js 3.4 (upstream
// #1154, #1208) leaves the queries it had queued on a reserved connection unsettled when the
// connection closes, and a query written to it afterwards throws from a timer, outside any
// handler, killing the process. So the writer owns a pool of its own and throws it away whole
// after such a failure, and a deadline bounds every batch: a write never waits for a promise the
// driver may never settle.
import postgres from 'postgres';
import type { Options, PendingQuery, Row, Sql } from 'postgres';
import type { CallOutcome } from '../group-commit.js';
import type { WriteOp, WriteResult } from '../port.js';
import { isConnectionLost, isLockTimeout, writeStalled } from '../faults.js';
import { sendPostgresOps } from './postgres-ops.js';

interface Attempt {
  outcome: CallOutcome;
  /** Succeeded: the calls after it ran on the right state. */
  clean: boolean;
}

const savepoint = (i: number): string => `write_call_${i}`;

/** One batch's use of the connection: refuses to send once abandoned, and fails fast when the connection is lost. */
class BatchRun {
  #abandoned = false;
  #fail!: (error: unknown) => void;
  readonly failed: Promise<never>;

  #conn: Sql | null = null;

  constructor() {
    this.failed = new Promise<never>((_resolve, reject) => (this.#fail = reject));
    this.failed.catch(() => undefined);
  }

  get conn(): Sql {
    if (!this.#conn) throw new Error('the write batch has no connection yet');
    return this.#conn;
  }

  attach(conn: Sql): void {
    this.#conn = conn;
  }

  send<T extends Row[]>(query: PendingQuery<T>): Promise<T> {
    if (this.#abandoned) throw new Error('the write batch was abandoned');
    return this.watch(query.execute());
  }

  /** `p`, with a lost connection failing the whole batch at once (the driver may leave other queries unsettled). */
  watch<T>(p: Promise<T>): Promise<T> {
    p.catch((error: unknown) => {
      if (isConnectionLost(error)) this.fail(error);
    });
    return p;
  }

  /** `p`, or the batch's failure, whichever comes first. */
  wait<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.failed]);
  }

  fail(error: unknown): void {
    this.#abandoned = true;
    this.#fail(error);
  }
}

/** Sends calls[first..end) each in its own savepoint; stops early at a call that cannot be sent. */
function sendRound(
  run: BatchRun,
  calls: readonly (readonly WriteOp[])[],
  first: number,
  end: number,
): Promise<Attempt>[] {
  const attempts: Promise<Attempt>[] = [];
  for (let i = first; i < end; i++) {
    const opened = run.send(run.conn.unsafe(`SAVEPOINT ${savepoint(i)}`));
    let result: Promise<WriteResult>;
    try {
      result = run.watch(sendPostgresOps(run.conn, calls[i]!));
    } catch (error) {
      attempts.push(
        opened.then(
          () => ({ outcome: { error }, clean: false }),
          () => ({ outcome: { error }, clean: false }),
        ),
      );
      break;
    }
    attempts.push(
      Promise.all([opened, result]).then(
        ([, r]): Attempt => ({ outcome: { result: r }, clean: r.ok }),
        (error: unknown): Attempt => ({ outcome: { error }, clean: false }),
      ),
    );
  }
  return attempts;
}

async function runCalls(
  run: BatchRun,
  calls: readonly (readonly WriteOp[])[],
  head: Promise<unknown>,
): Promise<CallOutcome[]> {
  const outcomes: CallOutcome[] = [];
  let first = 0;
  let pendingHead: Promise<unknown> | null = head;
  // After a failure the next round starts small and doubles while clean: a burst of copies of
  // one voucher then costs one statement set per copy, not a resend of the whole batch each time.
  let window = calls.length;
  while (first < calls.length) {
    const round = sendRound(run, calls, first, Math.min(calls.length, first + window));
    if (pendingHead) {
      // BEGIN or the lock failed: the transaction is unusable, the batch fails as a whole.
      const failed = await run.wait(
        pendingHead.then(
          () => null,
          (error: unknown) => ({ error }),
        ),
      );
      if (failed) throw failed.error;
      pendingHead = null;
    }
    const attempts = await run.wait(Promise.all(round));
    const k = attempts.findIndex((a) => !a.clean);
    if (k < 0) {
      outcomes.push(...attempts.map((a) => a.outcome));
      first += attempts.length;
      window *= 2;
      continue;
    }
    const failed = attempts[k]!.outcome;
    outcomes.push(...attempts.slice(0, k + 1).map((a) => a.outcome));
    await run.send(run.conn.unsafe(`ROLLBACK TO SAVEPOINT ${savepoint(first + k)}`));
    first += k + 1;
    window = 1;
    // The lock call k waited for past the lock timeout is still held: the calls after it fail now.
    if ('error' in failed && isLockTimeout(failed.error)) {
      while (outcomes.length < calls.length) outcomes.push({ error: failed.error });
      break;
    }
  }
  return outcomes;
}

export interface WriterOptions {
  /** The lock every write transaction takes first: `pg_advisory_xact_lock(lockClass, hashtext(lockName))`. */
  lock: { lockClass: number; lockName: string };
  /** Longest a batch may take from start to COMMIT before it fails as a whole. */
  deadlineMs: number;
}

/** The store's write path: one connection of its own, replaced whenever a batch fails as a whole. */
export class PostgresWriter {
  #sql: Sql | null = null;
  /**
   * Whether the pool's connection is open. postgres.js 3.4 never settles reserve() on a pool with
   * no open connection when fetch_types is off (upstream #751, #1219), and fetch_types stays off
   * (driver.ts): a plain query opens the connection first, on a new pool and after it closed.
   */
  #connected = false;

  constructor(
    private readonly url: string,
    private readonly settings: Options<Record<string, postgres.PostgresType>>,
    private readonly o: WriterOptions,
  ) {}

  /** Applies a batch in one transaction; resolves one outcome per call only after COMMIT succeeded. */
  async run(calls: readonly (readonly WriteOp[])[]): Promise<CallOutcome[]> {
    const sql = (this.#sql ??= this.#open());
    const run = new BatchRun();
    const timer = setTimeout(() => run.fail(writeStalled(this.o.deadlineMs)), this.o.deadlineMs);
    try {
      if (!this.#connected) {
        await run.wait(sql`SELECT 1`.execute());
        this.#connected = this.#sql === sql;
      }
      const conn = await run.wait(sql.reserve());
      run.attach(conn);
      const outcomes = await this.#transaction(run, calls);
      conn.release();
      return outcomes;
    } catch (error) {
      run.fail(error);
      this.#discard(sql);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(timeoutSeconds: number): Promise<void> {
    const sql = this.#sql;
    this.#sql = null;
    await sql?.end({ timeout: timeoutSeconds });
  }

  async #transaction(run: BatchRun, calls: readonly (readonly WriteOp[])[]): Promise<CallOutcome[]> {
    const begin = run.send(run.conn`BEGIN`);
    const locked = run.send(
      run.conn`SELECT pg_advisory_xact_lock(${this.o.lock.lockClass}, hashtext(${this.o.lock.lockName}))`,
    );
    const outcomes = await runCalls(run, calls, Promise.all([begin, locked]));
    const done = await run.wait(run.send(run.conn`COMMIT`));
    // COMMIT of an aborted transaction answers ROLLBACK without an error: never acknowledge that.
    if ((done as unknown as { command: string }).command !== 'COMMIT')
      throw new Error(
        `the write transaction ended with ${(done as unknown as { command: string }).command}, not COMMIT`,
      );
    return outcomes;
  }

  #open(): Sql {
    const sql: Sql = postgres(this.url, {
      ...this.settings,
      max: 1,
      onclose: () => {
        if (this.#sql === sql) this.#connected = false;
      },
    });
    this.#connected = false;
    return sql;
  }

  /** Ends the connection without another word on it; the next batch opens a new one. */
  #discard(sql: Sql): void {
    if (this.#sql === sql) this.#sql = null;
    sql.end({ timeout: 0 }).catch(() => undefined);
  }
}
