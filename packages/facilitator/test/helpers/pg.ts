// PostgreSQL for tests: every test file gets its own throwaway database (svc_test_<random>),
// dropped afterwards. Without a server, Postgres tests skip LOUDLY on a developer machine and
// fail in CI (CI=true), where a skipped adapter would hide a broken one.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/** Server URL for tests; SVC_TEST_POSTGRES_URL overrides the local default. */
const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const PROBE_TIMEOUT_S = 2;

export function pgTestUrl(): string {
  return process.env.SVC_TEST_POSTGRES_URL ?? DEFAULT_URL;
}

export function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

export async function pgServerAnswers(): Promise<boolean> {
  const sql = postgres(pgTestUrl(), { max: 1, connect_timeout: PROBE_TIMEOUT_S, onnotice: () => undefined });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 0 });
  }
}

/** Whether Postgres tests run: always in CI (and fail there if the server is down), else when a server answers. */
export async function pgEnabled(): Promise<boolean> {
  if (inCi()) return true;
  if (await pgServerAnswers()) return true;
  console.warn(
    [
      '',
      '#'.repeat(78),
      '#  POSTGRESQL TESTS SKIPPED: no server answers at ' + pgTestUrl(),
      '#  PostgresStore is NOT being tested. Start PostgreSQL or set SVC_TEST_POSTGRES_URL;',
      '#  with CI=true these tests run and fail instead of skipping.',
      '#'.repeat(78),
      '',
    ].join('\n'),
  );
  return false;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface PgDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
  /** A backup of it restored into a new database, with the standard tools (pg_dump -Fc, pg_restore). */
  copy(): Promise<PgDatabase>;
}

/** Creates an empty database; drop() removes it, closing any connection still open on it. */
export async function createPgDatabase(): Promise<PgDatabase> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(pgTestUrl(), { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const drop = async (): Promise<void> => {
    const sql = postgres(pgTestUrl(), { max: 1, onnotice: () => undefined });
    try {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  const url = withDatabase(pgTestUrl(), name);
  const copy = async (): Promise<PgDatabase> => {
    const target = await createPgDatabase();
    const dump = spawnSync('pg_dump', ['-Fc', '--dbname', url], { maxBuffer: 1 << 30 });
    if (dump.status !== 0) throw new Error(`pg_dump failed: ${dump.stderr.toString()}`);
    const restore = spawnSync('pg_restore', ['--no-owner', '--dbname', target.url], { input: dump.stdout });
    if (restore.status !== 0) throw new Error(`pg_restore failed: ${restore.stderr.toString()}`);
    return target;
  };
  return { url, name, drop, copy };
}

/** Runs fn against a fresh database and drops it afterwards, whatever happens. */
export async function withPgDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const db = await createPgDatabase();
  try {
    return await fn(db.url);
  } finally {
    await db.drop();
  }
}

/** A schema name unique to one test, for isolating tests that share a database. */
export function randomSchema(prefix = 's'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}
