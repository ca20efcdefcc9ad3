// One group-commit batch on PostgreSQL: one transaction on a reserved connection, each write()
// call in its own SAVEPOINT, and the whole batch pipelined — BEGIN, the advisory lock and every
// call go out together, so a batch costs about two round trips instead of two per call.
//
// Calls are sent optimistically, each assuming the ones before it succeed. When call k fails (a
// precondition or an error), the calls after it ran on top of its partial effects, so the runner
// rolls back to call k's savepoint — which undoes k and everything after it — records k's outcome,
// and sends the rest again. Conflicts are rare (two copies of one voucher), so nearly every batch
// is a single round.
//
// The transaction is driven by hand (BEGIN/SAVEPOINT/COMMIT on a reserved connection) rather than
// with sql.begin(): postgres.js fails a whole begin() scope when any statement in it fails, even
// one rolled back to a savepoint, which would turn one bad call into a failed batch.
import type { PendingQuery, Row, Sql } from 'postgres';
import type { CallOutcome } from './group-commit.js';
import type { WriteOp, WriteResult } from './port.js';
import { sendPostgresOps } from './postgres-ops.js';

interface Attempt {
  outcome: CallOutcome;
  /** Succeeded: the calls after it ran on the right state. */
  clean: boolean;
}

const savepoint = (i: number): string => `write_call_${i}`;

function send<T extends Row[]>(query: PendingQuery<T>): PendingQuery<T> {
  return query.execute();
}

/** Sends calls[first..end) each in its own savepoint; stops early at a call that cannot be sent. */
function sendRound(conn: Sql, calls: readonly (readonly WriteOp[])[], first: number, end: number): Promise<Attempt>[] {
  const attempts: Promise<Attempt>[] = [];
  for (let i = first; i < end; i++) {
    const opened = send(conn.unsafe(`SAVEPOINT ${savepoint(i)}`));
    let result: Promise<WriteResult>;
    try {
      result = sendPostgresOps(conn, calls[i]!);
    } catch (error) {
      attempts.push(opened.then(() => ({ outcome: { error }, clean: false }), () => ({ outcome: { error }, clean: false })));
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

async function runCalls(conn: Sql, calls: readonly (readonly WriteOp[])[], head: Promise<unknown>): Promise<CallOutcome[]> {
  const outcomes: CallOutcome[] = [];
  let first = 0;
  let pendingHead: Promise<unknown> | null = head;
  // After a failure the next round starts small and doubles while clean: a burst of copies of
  // one voucher then costs one statement set per copy, not a resend of the whole batch each time.
  let window = calls.length;
  while (first < calls.length) {
    const round = sendRound(conn, calls, first, Math.min(calls.length, first + window));
    if (pendingHead) {
      // BEGIN or the lock failed: the transaction is unusable, the batch fails as a whole.
      const failed = await pendingHead.then(() => null, (error: unknown) => ({ error }));
      await Promise.all(round);
      if (failed) throw failed.error;
      pendingHead = null;
    }
    const attempts = await Promise.all(round);
    const k = attempts.findIndex((a) => !a.clean);
    if (k < 0) {
      outcomes.push(...attempts.map((a) => a.outcome));
      first += attempts.length;
      window *= 2;
      continue;
    }
    outcomes.push(...attempts.slice(0, k + 1).map((a) => a.outcome));
    await conn.unsafe(`ROLLBACK TO SAVEPOINT ${savepoint(first + k)}`);
    first += k + 1;
    window = 1;
  }
  return outcomes;
}

/**
 * Applies a batch in one transaction that first takes `pg_advisory_xact_lock(lockClass,
 * hashtext(lockName))`; resolves one outcome per call only after COMMIT succeeded.
 */
export async function runPostgresBatch(sql: Sql, lock: { lockClass: number; lockName: string }, calls: readonly (readonly WriteOp[])[]): Promise<CallOutcome[]> {
  const conn = await sql.reserve();
  try {
    const begin = send(conn`BEGIN`);
    const locked = send(conn`SELECT pg_advisory_xact_lock(${lock.lockClass}, hashtext(${lock.lockName}))`);
    const outcomes = await runCalls(conn, calls, Promise.all([begin, locked]));
    const done = await conn`COMMIT`;
    // COMMIT of an aborted transaction answers ROLLBACK without an error: never acknowledge that.
    if (done.command !== 'COMMIT') throw new Error(`the write transaction ended with ${done.command}, not COMMIT`);
    return outcomes;
  } catch (error) {
    // Ends whatever is left of the transaction before the connection goes back to the pool; if
    // the connection itself broke, the server has rolled back already.
    await conn`ROLLBACK`.catch(() => undefined);
    throw error;
  } finally {
    conn.release();
  }
}
