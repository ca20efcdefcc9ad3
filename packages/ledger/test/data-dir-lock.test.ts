// One process per ledger file: a second LocalLedger on a data directory — in this
// process or another — is refused, naming who holds it; the lock goes with its holder, however the
// holder ends.
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DataDirInUse, LocalLedger } from '../src/index.js';
import { tempDir } from './helpers/actors.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '../../..');
const CRASH_CHILD = path.join(HERE, 'fixtures/crash-child.ts');

describe('one local ledger per data directory', () => {
  it('refuses a second ledger on a directory in use, naming this process; closing the first lets it go', async () => {
    const tmp = tempDir();
    const first = await LocalLedger.open({ dataDir: tmp.dir });
    const refused = await LocalLedger.open({ dataDir: tmp.dir }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DataDirInUse);
    expect((refused as Error).message).toContain(`DATA_DIR ${tmp.dir} is in use by process ${process.pid}`);
    expect((refused as Error).message).toMatch(/ledger\.sqlite/);
    expect((refused as Error).message).toMatch(/started \d{4}-\d\d-\d\dT/);
    // The refused open changed nothing: the first goes on, and a ledger elsewhere opens beside it.
    expect(await first.latestLedger()).toBeGreaterThan(0);
    const other = tempDir();
    const elsewhere = await LocalLedger.open({ dataDir: other.dir });
    await elsewhere.close();
    await first.close();
    const again = await LocalLedger.open({ dataDir: tmp.dir });
    await again.close();
    tmp.remove();
    other.remove();
  });

  it('refuses a ledger on a directory another process holds, and takes it the moment that process is killed -9', async () => {
    const tmp = tempDir();
    const child = spawn(process.execPath, ['--import', 'tsx', CRASH_CHILD, tmp.dir], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      for await (const line of readline.createInterface({ input: child.stdout })) if (line.startsWith('ready')) break;
      const refused = await LocalLedger.open({ dataDir: tmp.dir }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(DataDirInUse);
      expect((refused as Error).message).toContain(`in use by process ${child.pid} (`);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    // No stale lock to clear by hand: the kernel let it go with the process.
    const ledger = await LocalLedger.open({ dataDir: tmp.dir });
    expect(await ledger.latestLedger()).toBeGreaterThan(0);
    await ledger.close();
    tmp.remove();
  }, 30_000);
});
