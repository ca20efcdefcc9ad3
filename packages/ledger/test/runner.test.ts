import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, ledgerConfigFromEnv } from '../src/index.js';
import { tempDir } from './helpers/actors.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '../../..');
const MAIN = 'packages/ledger/src/main.ts';

function run(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exit };
}

describe('standalone runner (node --import tsx packages/ledger/src/main.ts)', () => {
  it('prints its URL, answers GET /ledger/info and stops cleanly on SIGTERM', async () => {
    const tmp = tempDir();
    const { child, exit } = run({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: tmp.dir, LEDGER_SECONDS: '2' });
    let url = '';
    for await (const line of readline.createInterface({ input: child.stdout })) {
      url = /listening on (http:\/\/\S+)/.exec(line)?.[1] ?? '';
      break;
    }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ledger$/);
    const res = await fetch(`${url}/info`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ network: 'stellar:local', ledgerSeconds: 2 });
    expect(fs.existsSync(path.join(tmp.dir, 'ledger.sqlite'))).toBe(true);
    child.kill('SIGTERM');
    expect(await exit).toMatchObject({ code: 0 });
    tmp.remove();
  });

  it('a bad environment value stops the start with a message naming the variable', async () => {
    for (const [name, value] of [
      ['LEDGER_SECONDS', 'fast'],
      ['PORT', '99999'],
    ] as const) {
      const { exit } = run({ PORT: '0', [name]: value });
      const result = await exit;
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(name);
    }
  });
});

describe('ledgerConfigFromEnv', () => {
  it('uses the defaults for unset or empty variables', () => {
    expect(ledgerConfigFromEnv({})).toEqual({ host: '127.0.0.1', port: 4021, dataDir: './data', ledgerSeconds: 5 });
    expect(ledgerConfigFromEnv({ PORT: '', LEDGER_SECONDS: ' ' })).toMatchObject({ port: 4021, ledgerSeconds: 5 });
    expect(ledgerConfigFromEnv({ PORT: '8080', HOST: '::1', DATA_DIR: '/tmp/x', LEDGER_SECONDS: '0.25' })).toEqual({
      host: '::1',
      port: 8080,
      dataDir: '/tmp/x',
      ledgerSeconds: 0.25,
    });
  });

  it('names the variable of a bad value', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: '-1' }, 'PORT'],
      [{ PORT: '70000' }, 'PORT'],
      [{ PORT: '12ab' }, 'PORT'],
      [{ HOST: 'a host' }, 'HOST'],
      [{ LEDGER_SECONDS: '0' }, 'LEDGER_SECONDS'],
      [{ LEDGER_SECONDS: '-5' }, 'LEDGER_SECONDS'],
      [{ LEDGER_SECONDS: '1e3' }, 'LEDGER_SECONDS'],
    ];
    for (const [env, name] of cases) {
      expect(() => ledgerConfigFromEnv(env)).toThrow(ConfigError);
      expect(() => ledgerConfigFromEnv(env)).toThrow(name);
    }
  });
});
