// The load test's knobs, from the environment, each with a default that is printed at the start.
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

const KNOBS = {
  seconds: { name: 'LOAD_SECONDS', fallback: '60', help: 'duration of the load' },
  sellers: { name: 'LOAD_SELLERS', fallback: '8', help: 'sellers (payees), prices 1000…5000' },
  buyers: { name: 'LOAD_BUYERS', fallback: '200', help: 'buyers, one channel each' },
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
