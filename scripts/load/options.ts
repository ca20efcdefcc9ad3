// The load test's knobs, from the environment, each with a default that is printed at the start.
import { LOAD_PRICE } from './market.js';

export interface LoadOptions {
  seconds: number;
  sellers: number;
  buyers: number;
  concurrency: number;
  /** Target requests per second; 0: as fast as the target answers. */
  rate: number;
  /** Fraction of deliberately bad vouchers (forged signature, stale cumulative, wrong payee). */
  bad: number;
  timeoutMs: number;
  /** Deposit of each buyer's channel, in base units. */
  deposit: bigint;
  /** Time allowed for the final claims and for the facilitator to agree with the ledger. */
  settleSeconds: number;
  progressSeconds: number;
  /** Running facilitators to drive (round-robin); empty: start one as a child process. */
  urls: string[];
  ledgerUrl: string | null;
  keepData: boolean;
  /** Run against the first URL alone, then all of them, and compare. */
  compare: boolean;
}

interface Knob {
  name: string;
  fallback: string;
  help: string;
}

// The defaults let the claim scheduler settle during a default run at the facilitator's own
// settings (threshold 1,000,000, a pass every 30 s) and the demo's price (5000 per request, so a
// threshold claim covers ≥ 200 vouchers): 800 requests/s over 64 buyers is 12.5 vouchers a second
// per channel, so a channel reaches the threshold ~16 s into the load, and the 44 s left of a 60 s
// run always hold a scheduler pass, mostly two (200 buyers took 50 s, and a pass often came too
// late). It stays under the per-channel limit of 1200 vouchers a minute (20/s).
const KNOBS = {
  seconds: { name: 'LOAD_SECONDS', fallback: '60', help: 'duration of the load' },
  sellers: {
    name: 'LOAD_SELLERS',
    fallback: '8',
    help: `sellers (payees), each at the demo's per-request price (${LOAD_PRICE}, /demo/book)`,
  },
  buyers: { name: 'LOAD_BUYERS', fallback: '64', help: 'buyers, one channel each' },
  concurrency: { name: 'LOAD_CONCURRENCY', fallback: '64', help: 'requests in flight' },
  rate: { name: 'LOAD_RATE', fallback: '800', help: 'target requests/s (0: as fast as possible)' },
  bad: { name: 'LOAD_BAD', fallback: '0.02', help: 'fraction of bad vouchers' },
  timeoutMs: { name: 'LOAD_TIMEOUT_MS', fallback: '10000', help: 'timeout of every request' },
  deposit: { name: 'LOAD_DEPOSIT', fallback: '1000000000', help: 'deposit per channel, base units' },
  settleSeconds: { name: 'LOAD_SETTLE_SECONDS', fallback: '120', help: 'time allowed for the final claims' },
  progressSeconds: { name: 'LOAD_PROGRESS_SECONDS', fallback: '5', help: 'seconds between progress lines' },
} satisfies Record<string, Knob>;

function raw(k: Knob, env: NodeJS.ProcessEnv): string {
  const v = env[k.name];
  return v === undefined || v === '' ? k.fallback : v;
}

function number(k: Knob, env: NodeJS.ProcessEnv, min: number, max: number, integer = true): number {
  const text = raw(k, env);
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new Error(
      `${k.name}=${JSON.stringify(text)}: must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`,
    );
  }
  return n;
}

function baseUrls(list: string | undefined): string[] {
  if (list === undefined || list.trim() === '') return [];
  return list.split(',').map((u) => {
    const url = new URL(u.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`LOAD_URL: ${u} is not an http(s) URL`);
    return url.href.replace(/\/+$/, '');
  });
}

export function loadOptions(env: NodeJS.ProcessEnv = process.env): LoadOptions {
  if (env['LOAD_COMPARE'] === '1' && baseUrls(env['LOAD_URL']).length < 2)
    throw new Error('LOAD_COMPARE=1 compares one instance with several: give LOAD_URL at least two URLs');
  const deposit = raw(KNOBS.deposit, env);
  if (!/^[1-9][0-9]{0,30}$/.test(deposit))
    throw new Error(`LOAD_DEPOSIT=${JSON.stringify(deposit)}: must be a positive whole number of base units`);
  return {
    seconds: number(KNOBS.seconds, env, 1, 86_400, false),
    sellers: number(KNOBS.sellers, env, 1, 10_000),
    buyers: number(KNOBS.buyers, env, 1, 100_000),
    concurrency: number(KNOBS.concurrency, env, 1, 10_000),
    rate: number(KNOBS.rate, env, 0, 1_000_000, false),
    bad: number(KNOBS.bad, env, 0, 1, false),
    timeoutMs: number(KNOBS.timeoutMs, env, 100, 600_000),
    deposit: BigInt(deposit),
    settleSeconds: number(KNOBS.settleSeconds, env, 1, 86_400, false),
    progressSeconds: number(KNOBS.progressSeconds, env, 1, 3600, false),
    urls: baseUrls(env['LOAD_URL']),
    ledgerUrl: env['LOAD_LEDGER_URL'] ? baseUrls(env['LOAD_LEDGER_URL'])[0]! : null,
    keepData: env['LOAD_KEEP_DATA'] === '1',
    compare: env['LOAD_COMPARE'] === '1',
  };
}

/** One line per knob: its variable, value, whether it is the default, and what it does. */
export function describeOptions(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.values(KNOBS).map((k: Knob) => {
    const given = env[k.name] !== undefined && env[k.name] !== '';
    return `  ${k.name.padEnd(22)} ${raw(k, env).padEnd(11)} ${given ? '(set)    ' : '(default)'} ${k.help}`;
  });
}
