// One instance per data directory: a second `svc start` on a DATA_DIR another one
// runs on started beside it, two processes writing one SQLite store and one ledger file. It is now
// refused, naming the process that holds the directory; the lock goes with its holder, however the
// holder ends. Instances on PostgreSQL and a standalone ledger keep nothing of their own in
// DATA_DIR, and still share one (as `npm run cluster` does).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLedgerServer } from '@svc/ledger';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import { spawnSvc, startChild } from '../helpers/process.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lock-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Runs `svc <args>` to its end (killed after `limitMs` if it is still running: a server that started). */
function svcRun(
  args: string[],
  env: Record<string, string>,
  limitMs = 30_000,
): Promise<{ code: number | null; out: string }> {
  const proc = spawnSvc(args, { PORT: '0', ...env });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), limitMs);
  return new Promise((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

const config = (dataDir: string, env: Record<string, string> = {}) =>
  loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO: 'off', LEDGER_SECONDS: '1', ...env });

describe('svc start: one instance per DATA_DIR', () => {
  it('a second svc start on a DATA_DIR in use exits 1, naming the process that holds it; svc ledger there too; the first serves on, and after a kill -9 the directory is free at once', async () => {
    const dataDir = tmp();
    const first = await startChild({ DATA_DIR: dataDir, DEMO_SEED: '0', LEDGER_SECONDS: '1' });
    try {
      const second = await svcRun(['start'], { DATA_DIR: dataDir });
      expect(second.code, second.out).toBe(1);
      expect(second.out).toMatch(
        new RegExp(
          `^svc: DATA_DIR ${dataDir} is in use by process ${first.proc.pid} \\(svc start on [^,]+, started \\d{4}-\\d\\d-\\d\\dT[^)]+\\)`,
          'm',
        ),
      );
      expect(second.out).toMatch(/Stop that process, or give this one another DATA_DIR/);
      expect(second.out).not.toMatch(/listening on/);
      expect(second.out).not.toMatch(/\n\s+at /); // no stack trace
      // A standalone ledger on it would share the embedded ledger's file.
      const ledger = await svcRun(['ledger'], { DATA_DIR: dataDir });
      expect(ledger.code, ledger.out).toBe(1);
      expect(ledger.out).toContain(`DATA_DIR ${dataDir} is in use by process ${first.proc.pid}`);
      expect(ledger.out).toMatch(/ledger\.sqlite/);
      expect((await fetch(`${first.url}/health`)).status).toBe(200);
    } finally {
      await first.kill('SIGKILL');
    }
    const again = await startChild({ DATA_DIR: dataDir, DEMO_SEED: '0', LEDGER_SECONDS: '1' });
    try {
      expect((await fetch(`${again.url}/health`)).status).toBe(200);
    } finally {
      await again.kill('SIGTERM');
    }
  }, 90_000);

  it('in one process: a second facilitator on a DATA_DIR in use is refused, one elsewhere is not, and close() lets the directory go', async () => {
    const dataDir = tmp();
    const first = await createFacilitator({ config: config(dataDir) });
    await expect(createFacilitator({ config: config(dataDir) })).rejects.toThrow(
      `DATA_DIR ${dataDir} is in use by process ${process.pid}`,
    );
    const elsewhere = await createFacilitator({ config: config(tmp()) });
    await elsewhere.close();
    await first.listen();
    await first.close();
    const again = await createFacilitator({ config: config(dataDir) });
    await again.close();
  }, 30_000);

  it('instances on PostgreSQL with a standalone ledger keep nothing of their own in DATA_DIR: two share one', async ({
    skip,
  }) => {
    if (!(await pgEnabled())) return skip();
    const db = await createPgDatabase();
    const ledger = await startLedgerServer({ port: 0, dataDir: tmp(), ledgerSeconds: 1 });
    const shared = {
      DATABASE_URL: db.url,
      LEDGER_URL: ledger.url,
      FACILITATOR_SECRET: '0a'.repeat(32),
    };
    const dataDir = tmp();
    try {
      const a = await createFacilitator({ config: config(dataDir, shared) });
      const b = await createFacilitator({ config: config(dataDir, shared) });
      await b.close();
      await a.close();
    } finally {
      await ledger.close();
      await db.drop();
    }
  }, 60_000);
});
