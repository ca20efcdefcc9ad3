// What the load runs against: by default a facilitator of its own, `svc start` as a child process
// (embedded ledger, SQLite in a temporary DATA_DIR, or DATABASE_URL when set), with the per-IP
// limits off (all buyers share one client address; connections per address too) and the manual
// claim cooldown off, and the claim scheduler as the facilitator has it by default (threshold and
// interval: CLAIM_THRESHOLD and CLAIM_INTERVAL_SECONDS in the environment still reach the child);
// or, with LOAD_URL, running facilitators that share one ledger.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startChild } from '../../packages/facilitator/test/helpers/process.js';
import type { Child } from '../../packages/facilitator/test/helpers/process.js';

const OUTPUT_TAIL = 64 * 1024;
const KILL_GRACE_MS = 10_000;

/** Fixed for the child: the load comes from one address, and the final claims come all at once. */
const CHILD_FIXED = {
  LOG_LEVEL: 'warn',
  DEMO: 'off',
  IP_RATE_LIMIT_PER_MINUTE: '0',
  IP_COSTLY_LIMIT_PER_MINUTE: '0',
  CONN_MAX_PER_IP: '0',
  MANUAL_CLAIM_COOLDOWN_SECONDS: '0',
};
/** Settings of the child the environment may give (it reaches the child anyway): shown when set. */
const CHILD_SHOWN = ['CLAIM_THRESHOLD', 'CLAIM_INTERVAL_SECONDS', 'CHANNEL_VOUCHER_LIMIT_PER_MINUTE'];

export interface Target {
  /** Facilitator base URLs, used round-robin. */
  urls: string[];
  ledgerUrl: string;
  describe: string[];
  /** The child's last output (empty for running facilitators). */
  output(): string;
  /** How the child ended if it ended on its own (a crash), else null. */
  crashed(): string | null;
  /** Stops the child (if any) and removes its data unless `keep`; safe to call twice. */
  stop(keep: boolean): Promise<void>;
}

export function external(urls: string[], ledgerUrl: string | null): Target {
  const ledger = ledgerUrl ?? `${urls[0]!}/ledger`;
  return {
    urls,
    ledgerUrl: ledger,
    describe: [`  target: ${urls.length} running facilitator(s): ${urls.join(', ')}`, `  ledger: ${ledger}`],
    output: () => '',
    crashed: () => null,
    stop: () => Promise.resolve(),
  };
}

export async function ownChild(): Promise<Target> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-load-'));
  const env: Record<string, string> = { ...CHILD_FIXED, DATA_DIR: dataDir };
  for (const k of CHILD_SHOWN) if (process.env[k]) env[k] = process.env[k];
  let child: Child;
  try {
    child = await startChild(env);
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const tail = keepTail(child);
  let stopped: Promise<void> | null = null;
  let crashed: string | null = null;
  child.proc.once('exit', (code, signal) => {
    if (!stopped) crashed = `the facilitator exited on its own (code ${code ?? '-'}, signal ${signal ?? '-'})`;
  });
  const database = process.env['DATABASE_URL'] ? redact(process.env['DATABASE_URL']) : `SQLite in ${dataDir}`;
  return {
    urls: [child.url],
    ledgerUrl: `${child.url}/ledger`,
    describe: [
      `  target: svc start (child pid ${child.proc.pid ?? '?'}) at ${child.url}, embedded ledger, ${database}`,
      `  child env: ${Object.entries(env)
        .filter(([k]) => k !== 'DATA_DIR')
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    ],
    output: () => tail.text,
    crashed: () => crashed,
    stop: (keep) => {
      stopped ??= (async () => {
        await stopChild(child);
        if (keep) console.log(`  kept the facilitator's data in ${dataDir}`);
        else fs.rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/** The helper keeps all output; keep only the last OUTPUT_TAIL characters instead (bounded memory). */
function keepTail(child: Child): { text: string } {
  const tail = { text: child.output().slice(-OUTPUT_TAIL) };
  for (const stream of [child.proc.stdout, child.proc.stderr]) {
    if (!stream) continue;
    stream.removeAllListeners('data');
    stream.on('data', (chunk: Buffer) => {
      tail.text = (tail.text + chunk.toString()).slice(-OUTPUT_TAIL);
    });
  }
  return tail;
}

/** SIGTERM (the facilitator drains and closes its store), SIGKILL if it does not exit in time. */
async function stopChild(child: Child): Promise<void> {
  const timer = setTimeout(() => void child.kill('SIGKILL'), KILL_GRACE_MS);
  try {
    await child.kill('SIGTERM');
  } finally {
    clearTimeout(timer);
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
