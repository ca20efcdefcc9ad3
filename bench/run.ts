// npm run bench — prints, from one run on this machine, every figure beside its ceiling:
//
//   1. the paid request, one client for all (keep-alive node:http, 32 in flight, each worker
//      paying its own channel in order), servers in their own process, the four paths taking
//      turns (four slices of 2 s each, measureSideBySide), all fed the same /verify bodies:
//        raw ceiling: node:http that parses the /verify body and does one strict ed25519 verify
//          (bench/ceiling-server.mjs), printed as a reference
//        durable ceiling: the same, plus the work svc may not skip: signs the receipt (@svc/core's
//          signReceipt) and answers once its line is appended durably, one fdatasync per batch
//          of the appends that arrived meanwhile (bench/ceiling-server.mjs <dir>)
//        svc POST /verify (strict verify, compare-and-set, durable commit, signed stored receipt,
//          audit event): its ratio to the durable ceiling is THE goal line
//        svc GET /demo/book through @svc/meter (the demo seller and the facilitator in one process)
//   2. ed25519 verifications per second on one core and on the threadpool (the signature alone),
//      and in-process voucher accepts (the verifier without HTTP) against them;
//   3. the meter's own CPU per paid request in an external Express seller, against the same
//      handler unpaid and one ed25519 verify (bench/seller.ts, bench/PROFILE-seller.md);
//   4. memory at the specification's caps: 1,000 stream sessions and 200 event streams held,
//      against 256 MB RSS (bench/memory.ts).
//
// The CPU profile of each path (where the microseconds go) is in bench/PROFILE.md, with the
// commands that redo it.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import { decodeJsonHeader, encodeJsonHeader, randomKeypair, toHex, voucherContext, isChannelTerms } from '@svc/core';
import type { Keypair, Payment, PaymentRequired, PaymentRequirements } from '@svc/core';
import { LocalLedgerClient } from '@svc/sdk';
import { loadConfig } from '../packages/facilitator/src/config.js';
import { createFacilitator } from '../packages/facilitator/src/facilitator.js';
import { mapLimit } from '../scripts/load/channels.js';
import { drive, send, summary } from './client.js';
import type { Call, Run } from './client.js';
import { memoryAtCaps, memoryLines } from './memory.js';
import { describeSeller, externalSellerCpu, verifyMicros } from './seller.js';
import { cpuSince, processWrites, threadCpu } from './threads.js';

const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 32);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const WARMUP_SECONDS = 2;
/** BENCH_SLICES: each path's measured seconds come in this many slices, the paths taking turns. */
const SLICES = Math.max(1, Number(process.env['BENCH_SLICES'] ?? 4));
const LEAD_IN_SECONDS = 0.5;
const PER_CHANNEL = 2_500;
const CEILING_N = 20_000;
/**
 * The goal of POST /verify: this share of the durable ceiling's paid/s, the median of the first
 * five short runs' ratios (0.59) rounded down to a tenth (bench/PROFILE.md, "The durable ceiling").
 */
const DURABLE_GOAL = 0.5;
const INPROC_CHANNELS = 128;
const INPROC_PER_CHANNEL = 200;
const BENCH_ENV = {
  LOG_LEVEL: 'warn',
  CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '10000000',
  IP_RATE_LIMIT_PER_MINUTE: '0',
};
const HERE = path.dirname(fileURLToPath(import.meta.url));
/** BENCH_PROFILE=<dir>: every server process writes a CPU profile there (bench/PROFILE.md). */
const PROFILE_DIR = process.env['BENCH_PROFILE'] ? path.resolve(process.env['BENCH_PROFILE']) : null;
const PROFILE_FLAGS = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, '--cpu-prof-interval=250'] : [];
/** BENCH_PAID_ONLY=1: the paid request's three paths only (about a minute), for trying a change. */
const PAID_ONLY = process.env['BENCH_PAID_ONLY'] === '1';
const SVC = path.resolve(HERE, '../packages/facilitator/bin/svc.cjs');
/** The measured windows (CLOCK_MONOTONIC µs, as the profiles' timestamps) and their requests. */
const windows: { path: string; pid: number; start: number; end: number; requests: number }[] = [];
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

const fmt = (n: number) => n.toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(1)} ms`;
const ratio = (n: number, of: number) => (n / of).toFixed(2);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);

function rate(n: number, elapsedMs: number): number {
  return Math.round((n / elapsedMs) * 1000);
}

// ---- the signature alone ------------------------------------------------------------------------

function signatureCeiling(): { sync: number; pool: Promise<number> } {
  const sync = Math.round(1e6 / verifyMicros(CEILING_N));
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const msg = crypto.randomBytes(32);
  const sig = crypto.sign(null, msg, privateKey);
  const pool = (async () => {
    const t = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next++ < CEILING_N) await new Promise((r) => crypto.verify(null, msg, publicKey, sig, r));
      }),
    );
    return rate(CEILING_N, performance.now() - t);
  })();
  return { sync, pool };
}

// ---- channels -----------------------------------------------------------------------------------

interface Channel {
  id: bigint;
  key: Keypair;
  vouchers: string[];
  /** The next voucher to send. */
  next: number;
}

type LedgerInfo = Awaited<ReturnType<LocalLedgerClient['info']>>;

/** Channels opened at once: the local ledger refuses more than 128 connections from one address. */
const OPEN_AT_ONCE = 32;

async function openChannels(
  ledger: LedgerInfo & { client: LocalLedgerClient },
  payee: string,
  count: number,
  price: bigint,
): Promise<Channel[]> {
  const ctx = voucherContext(ledger.passphrase, ledger.contracts.channel);
  const open = async (): Promise<Channel> => {
    const payer = randomKeypair();
    const key = randomKeypair();
    await ledger.client.faucet(payer.address);
    const { channelId } = await ledger.client.openChannel({
      payer,
      payee,
      deposit: price * BigInt(PER_CHANNEL),
      voucherKey: key,
    });
    const vouchers = Array.from({ length: PER_CHANNEL }, (_, k) =>
      toHex(ctx.sign(key, channelId, price * BigInt(k + 1))),
    );
    return { id: channelId, key, vouchers, next: 0 };
  };
  return mapLimit(Array.from({ length: count }), OPEN_AT_ONCE, open);
}

function requirementsFor(info: LedgerInfo, payTo: string, url: string): PaymentRequirements {
  return {
    scheme: 'channel',
    network: info.network,
    asset: info.contracts.asset,
    payTo,
    amount: '1000',
    unit: 'request',
    maxTimeoutSeconds: 60,
    extra: { channelContract: info.contracts.channel, minDeposit: '1000000', facilitator: url, areFeesSponsored: true },
  };
}

/** The POST /verify body of a channel's next voucher, as a seller's meter sends it; `repeat`: start over at the end. */
function verifyCalls(channels: Channel[], requirements: PaymentRequirements, resource: string, repeat = false) {
  const price = BigInt(requirements.amount);
  return (worker: number): Call | null => {
    const ch = channels[worker]!;
    const k = repeat ? ch.next++ % ch.vouchers.length : ch.next++;
    if (k >= ch.vouchers.length) return null;
    return {
      method: 'POST',
      path: '/verify',
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: requirements,
          payload: {
            channelId: ch.id.toString(),
            cumulative: (price * BigInt(k + 1)).toString(),
            signature: ch.vouchers[k],
          },
          resource: { url: resource },
        },
        paymentRequirements: requirements,
        method: 'GET',
      }),
    };
  };
}

/** GET <path> with the channel's next voucher in PAYMENT-SIGNATURE, as a buyer pays. */
function paidGets(channels: Channel[], accepted: PaymentRequirements, pathname: string) {
  const price = BigInt(accepted.amount);
  return (worker: number): Call | null => {
    const ch = channels[worker]!;
    const k = ch.next++;
    if (k >= ch.vouchers.length) return null;
    const payload = {
      channelId: ch.id.toString(),
      cumulative: (price * BigInt(k + 1)).toString(),
      signature: ch.vouchers[k]!,
    };
    return {
      method: 'GET',
      path: pathname,
      headers: { 'payment-signature': encodeJsonHeader({ x402Version: 2, accepted, payload }) },
    };
  };
}

/** CPU µs per paid request: the server's main thread, its other threads, the client. */
interface Measured extends Run {
  mainUs: number;
  otherUs: number;
  clientUs: number;
}

/** A path of the side-by-side measurement: a server (its process) and the calls of its workers. */
interface Side {
  name: string;
  pid: number;
  base: URL;
  next: (worker: number) => Call | null;
}

/**
 * The paths measured side by side, in turns: after each path's warm-up, SLICES rounds in which
 * every path in turn runs SECONDS / SLICES measured seconds, each after LEAD_IN_SECONDS of load not
 * counted. A change in the machine's speed during the run (this VM's throughput moves by ±15 %
 * from one minute to the next) then falls on every path alike, and no window opens with all
 * workers' requests arriving at once. Each path's figures are the sum of its slices.
 */
async function measureSideBySide(sides: Side[]): Promise<Measured[]> {
  for (const side of sides) {
    progress(`${side.name}: warming up, ${WORKERS} in flight, ${WARMUP_SECONDS} s`);
    const warm = await drive(side.base, WORKERS, WARMUP_SECONDS, side.next);
    if (warm.errors > 0) throw new Error(`warm-up of ${side.base.href} failed: ${warm.firstError}`);
  }
  const tallies = sides.map(() => ({
    latencies: [] as number[],
    elapsedMs: 0,
    errors: 0,
    firstError: null as string | null,
    threads: new Map<string, number>(),
    clientUs: 0,
    written: { bytes: 0, calls: 0 },
    timeline: { at: [] as number[], ms: [] as number[] },
    /** CPU µs the other servers (not measured now, idle but for their timers) used meanwhile. */
    othersUs: 0,
  }));
  const processCpu = (pid: number) => [...threadCpu(pid).values()].reduce((a, b) => a + b, 0);
  for (let slice = 1; slice <= SLICES; slice++) {
    progress(
      `slice ${slice} of ${SLICES}: ${sides.map((s) => s.name).join(', ')} in turn, ${SECONDS / SLICES} s each after ${LEAD_IN_SECONDS} s not counted`,
    );
    for (const [i, side] of sides.entries()) {
      const tally = tallies[i]!;
      let start = 0;
      let threads = new Map<string, number>();
      let client = process.cpuUsage();
      let wrote = { bytes: 0, calls: 0 };
      const otherPids = [...new Set(sides.map((x) => x.pid))].filter((p) => p !== side.pid);
      let others = 0;
      const run = await drive(side.base, WORKERS, SECONDS / SLICES, side.next, {
        leadIn: LEAD_IN_SECONDS,
        onMeasureStart: () => {
          start = nowUs();
          threads = threadCpu(side.pid);
          client = process.cpuUsage();
          wrote = processWrites(side.pid);
          others = otherPids.reduce((a, p) => a + processCpu(p), 0);
        },
      });
      tally.othersUs += otherPids.reduce((a, p) => a + processCpu(p), 0) - others;
      for (const [k, t] of cpuSince(threads, threadCpu(side.pid)))
        tally.threads.set(k, (tally.threads.get(k) ?? 0) + t);
      const clientUsed = process.cpuUsage(client);
      tally.clientUs += clientUsed.user + clientUsed.system;
      const written = processWrites(side.pid);
      tally.written.bytes += written.bytes - wrote.bytes;
      tally.written.calls += written.calls - wrote.calls;
      windows.push({ path: side.name, pid: side.pid, start, end: nowUs(), requests: run.requests });
      for (const [k, at] of (run.timeline?.at ?? []).entries()) {
        tally.timeline.at.push(tally.elapsedMs + at);
        tally.timeline.ms.push(run.timeline!.ms[k]!);
      }
      for (const ms of run.latencies) tally.latencies.push(ms);
      tally.elapsedMs += run.elapsedMs;
      tally.errors += run.errors;
      tally.firstError ??= run.firstError;
    }
  }
  return sides.map((side, i) => {
    const tally = tallies[i]!;
    const run: Run = {
      ...summary(tally.latencies, tally.elapsedMs),
      errors: tally.errors,
      firstError: tally.firstError,
    };
    const per = (us: number) => us / Math.max(1, run.requests);
    const busiest = [...tally.threads].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]);
    if (process.env['BENCH_THREADS']) {
      progress(
        `${side.name} threads, µs per request: ${busiest.map(([k, t]) => `${k} ${per(t).toFixed(0)}`).join(', ')}`,
      );
      // The store's WAL and checkpoints: what each request costs the disk (and the kernel's CPU).
      progress(
        `${side.name} writes per request: ${(per(tally.written.bytes) / 1024).toFixed(1)} KiB to storage in ${per(tally.written.calls).toFixed(1)} write calls`,
      );
    }
    if (process.env['BENCH_TRACE']) traceTail(side.name, tally.timeline);
    progress(
      `${side.name}: the other servers used ${(tally.othersUs / tally.elapsedMs / 10).toFixed(1)} % of a core meanwhile (its timers)`,
    );
    const others = busiest.filter(([k]) => k !== 'main').reduce((a, [, t]) => a + t, 0);
    return {
      ...run,
      mainUs: per(tally.threads.get('main') ?? 0),
      otherUs: per(others),
      clientUs: per(tally.clientUs),
    };
  });
}

/**
 * BENCH_TRACE=<dir>: writes each path's requests (start ms, latency ms) to <dir>/<path>.tsv and
 * says whether its slowest 1 % came in episodes: how many of the run's 100 ms windows (by start)
 * hold 80 % of them, and the busiest three.
 */
function traceTail(name: string, timeline: { at: number[]; ms: number[] }): void {
  const dir = path.resolve(process.env['BENCH_TRACE']!);
  fs.mkdirSync(dir, { recursive: true });
  const rows = timeline.at.map((at, i) => `${at.toFixed(2)}\t${timeline.ms[i]!.toFixed(2)}`);
  fs.writeFileSync(path.join(dir, `${name}.tsv`), `start_ms\tlatency_ms\n${rows.join('\n')}\n`);
  const sorted = [...timeline.ms].sort((a, b) => a - b);
  const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0;
  const byWindow = new Map<number, number>();
  timeline.at.forEach((at, i) => {
    if (timeline.ms[i]! >= p99) byWindow.set(Math.floor(at / 100), (byWindow.get(Math.floor(at / 100)) ?? 0) + 1);
  });
  const slow = [...byWindow.values()].reduce((a, b) => a + b, 0);
  const busiest = [...byWindow].sort((a, b) => b[1] - a[1]);
  let held = 0;
  let windowsFor80 = 0;
  for (const [, n] of busiest) {
    if (held >= slow * 0.8) break;
    held += n;
    windowsFor80++;
  }
  const windows = Math.ceil((timeline.at.at(-1) ?? 0) / 100);
  const top = busiest.slice(0, 3).map(([w, n]) => `${(w / 10).toFixed(1)} s (${n})`);
  progress(
    `${name} tail: p99 ${ms(p99)}; 80 % of the ${slow} requests at or above it started in ${windowsFor80} of ${windows} windows of 100 ms; busiest ${top.join(', ')}; ${path.join(dir, `${name}.tsv`)}`,
  );
}

// ---- the raw ceiling's server -------------------------------------------------------------------

interface Ceiling {
  url: URL;
  pid: number;
  stop(): Promise<void>;
}

/** `receiptsDir`: the durable ceiling, appending its signed receipts there. */
async function startCeiling(info: LedgerInfo, receiptsDir?: string): Promise<Ceiling> {
  const args = [path.join(HERE, 'ceiling-server.mjs'), info.passphrase, info.contracts.channel];
  return startServer(receiptsDir ? [...args, receiptsDir] : args, {});
}

/** A server in its own process (with PROFILE_FLAGS), resolved once it prints its URL. */
async function startServer(args: string[], env: Record<string, string>): Promise<Ceiling> {
  const proc = spawn(process.execPath, [...PROFILE_FLAGS, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  const url = await new Promise<URL>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(new URL(m[1]!));
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}:\n${out}`)));
  });
  return {
    url,
    pid: proc.pid!,
    stop: () =>
      new Promise<void>((done) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return done();
        proc.once('exit', () => done());
        proc.kill('SIGTERM');
      }),
  };
}

// ---- the paid request, side by side -------------------------------------------------------------

interface PaidFigures {
  ceiling: Measured;
  durable: Measured;
  /** The durable ceiling's receipts per fdatasync, over the whole run (warm-up and lead-ins too). */
  perSync: number;
  verify: Measured;
  book: Measured;
}

async function paidRequests(): Promise<PaidFigures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  // On the same file system as the facilitator's DATA_DIR, so both pay the same fdatasync.
  const receiptsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-durable-'));
  let child: Ceiling | null = null;
  let ceiling: Ceiling | null = null;
  let durable: Ceiling | null = null;
  try {
    child = await startServer([SVC, 'start'], { ...BENCH_ENV, PORT: '0', DATA_DIR: dataDir });
    const pid = child.pid;
    const childUrl = child.url.href.replace(/\/$/, '');
    const base = child.url;
    const client = new LocalLedgerClient(`${childUrl}/ledger`);
    const info = await client.info();
    const ledger = { ...info, client };

    // The demo book's terms, from its 402.
    const agent = new http.Agent({ keepAlive: false });
    const unpaid = await send(agent, base, { method: 'GET', path: '/demo/book' });
    const required = unpaid.headers['payment-required'];
    const decoded = typeof required === 'string' ? decodeJsonHeader(required) : null;
    if (unpaid.status !== 402 || !decoded?.ok)
      throw new Error(`GET /demo/book answered ${unpaid.status} without terms`);
    const bookTerms = (decoded.value as PaymentRequired).accepts.filter(isChannelTerms)[0]!;

    progress(`opening ${WORKERS * 2} channels and signing ${fmt(WORKERS * 2 * PER_CHANNEL)} vouchers`);
    const payee = randomKeypair().address;
    const verifyChannels = await openChannels(ledger, payee, WORKERS, 1000n);
    const bookChannels = await openChannels(ledger, bookTerms.payTo, WORKERS, BigInt(bookTerms.amount));
    const requirements = requirementsFor(info, payee, childUrl);

    ceiling = await startCeiling(info);
    durable = await startCeiling(info, receiptsDir);
    const keys = Object.fromEntries(verifyChannels.map((c) => [c.id.toString(), toHex(c.key.publicKey)]));
    for (const server of [ceiling, durable])
      await send(agent, server.url, { method: 'POST', path: '/keys', body: JSON.stringify(keys) });

    // The ceilings and /verify get the very same bodies: each starts from the channels' first
    // voucher (the ceilings keep no state, so they start over when a channel's vouchers run out).
    const snapshot = () => verifyChannels.map((c) => ({ ...c }));
    const resource = `${childUrl}/bench`;
    const [ceilingRun, durableRun, verifyRun, bookRun] = await measureSideBySide([
      {
        name: 'ceiling',
        pid: ceiling.pid,
        base: ceiling.url,
        next: verifyCalls(snapshot(), requirements, resource, true),
      },
      {
        name: 'durable',
        pid: durable.pid,
        base: durable.url,
        next: verifyCalls(snapshot(), requirements, resource, true),
      },
      { name: 'verify', pid, base, next: verifyCalls(verifyChannels, requirements, resource) },
      { name: 'book', pid, base, next: paidGets(bookChannels, bookTerms, '/demo/book') },
    ]);
    const stats = JSON.parse((await send(agent, durable.url, { method: 'GET', path: '/stats' })).body) as {
      receipts: number;
      syncs: number;
    };
    return {
      ceiling: ceilingRun!,
      durable: durableRun!,
      perSync: stats.receipts / Math.max(1, stats.syncs),
      verify: verifyRun!,
      book: bookRun!,
    };
  } finally {
    await ceiling?.stop();
    await durable?.stop();
    await child?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(receiptsDir, { recursive: true, force: true });
    if (PROFILE_DIR) fs.writeFileSync(path.join(PROFILE_DIR, 'windows.json'), JSON.stringify(windows, null, 2));
  }
}

// ---- in-process accepts -------------------------------------------------------------------------

async function inProcess(): Promise<{ rate: number; p50: number; p99: number; cores: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-inproc-'));
  const f = await createFacilitator({
    config: loadConfig({ ...BENCH_ENV, DEMO: 'off', PORT: '0', DATA_DIR: dataDir }),
  });
  const url = await f.listen();
  try {
    const client = new LocalLedgerClient(`${url}/ledger`);
    const info = await client.info();
    const payee = randomKeypair().address;
    const ctx = voucherContext(info.passphrase, info.contracts.channel);
    const channels: { id: bigint; vouchers: string[] }[] = [];
    for (let i = 0; i < INPROC_CHANNELS; i++) {
      const payer = randomKeypair();
      const key = randomKeypair();
      await client.faucet(payer.address);
      const { channelId } = await client.openChannel({
        payer,
        payee,
        deposit: 1000n * BigInt(INPROC_PER_CHANNEL),
        voucherKey: key,
      });
      channels.push({
        id: channelId,
        vouchers: Array.from({ length: INPROC_PER_CHANNEL }, (_, k) =>
          toHex(ctx.sign(key, channelId, 1000n * BigInt(k + 1))),
        ),
      });
    }
    await f.watcher.tick();
    const requirements = requirementsFor(info, payee, url);
    const latencies: number[] = [];
    const cpu = process.cpuUsage();
    const t = performance.now();
    await Promise.all(
      channels.map(async (ch) => {
        for (let k = 0; k < ch.vouchers.length; k++) {
          const payment: Payment = {
            x402Version: 2,
            network: info.network,
            channelId: ch.id,
            cumulative: 1000n * BigInt(k + 1),
            signature: ch.vouchers[k]!,
          };
          const s = performance.now();
          const out = await f.services.verifier.verify({
            payment,
            requirements,
            resource: `${url}/bench`,
            method: 'GET',
            requestHash: null,
            idempotencyKey: null,
          });
          latencies.push(performance.now() - s);
          if (!out.ok) throw new Error(`rejected: ${out.code} ${out.message}`);
        }
      }),
    );
    const elapsed = performance.now() - t;
    const used = process.cpuUsage(cpu);
    const run = summary(latencies, elapsed);
    return { rate: run.rate, p50: run.p50, p99: run.p99, cores: (used.user + used.system) / 1000 / elapsed };
  } finally {
    await f.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- the report ---------------------------------------------------------------------------------

const load = os
  .loadavg()
  .map((n) => n.toFixed(2))
  .join(' ');
console.log(`svc bench — ${os.availableParallelism()} cores, Node ${process.version}, load average before: ${load}\n`);

const paid = await paidRequests();
const c = paid.ceiling;
const d = paid.durable;
const line = (what: string, r: Run) =>
  `${what.padEnd(58)} ${fmt(r.rate).padStart(6)}/s  ${ratio(r.rate, d.rate)}    ${ratio(r.rate, c.rate)}  p50 ${ms(r.p50).padStart(8)}  p99 ${ms(r.p99).padStart(8)} (${ratio(r.p99, d.p99)}× / ${ratio(r.p99, c.p99)}×)${r.errors ? `  errors ${r.errors}: ${r.firstError}` : ''}`;
console.log(
  `The paid request — one client, keep-alive node:http, ${WORKERS} in flight, each worker paying its own channel, ${SECONDS} s each in ${SLICES} turns:`,
);
console.log(
  `${'what'.padEnd(58)} ${'paid/s'.padStart(8)} durable raw   p50 / p99 (p99 vs the durable / raw ceiling's)`,
);
console.log(line('raw ceiling: node:http, parse + one strict ed25519 verify', c));
console.log(line('durable ceiling: + signed receipt, appended, fdatasync', d));
console.log(line('svc POST /verify (verify, CAS, durable commit, receipt)', paid.verify));
console.log(line('svc GET /demo/book through @svc/meter (one process)', paid.book));
console.log(
  `  (the durable ceiling: ${paid.perSync.toFixed(1)} receipts per fdatasync over the run, group commit of the appends that arrived during the one before)`,
);
console.log(
  `goal: /verify ≥ ${DURABLE_GOAL.toFixed(1)} of the durable ceiling — this run ${ratio(paid.verify.rate, d.rate)}, p99 ${ratio(paid.verify.p99, d.p99)}× the durable ceiling's (the goal line: the durable ceiling does the work svc may not skip)`,
);
console.log(
  `reference, against the raw parse-and-verify ceiling: /verify ${ratio(paid.verify.rate, c.rate)} (the former goal ≥ 0.50 with p99 ≤ 2.00×: ${ratio(paid.verify.p99, c.p99)}×); /demo/book ${ratio(paid.book.rate, c.rate)} (goal ≥ 0.30)\n`,
);
const us = (n: number) => `${n.toFixed(0)} µs`.padStart(8);
/** The cores a path kept busy, its server's threads and the client together. */
const cores = (r: Measured) => (((r.mainUs + r.otherUs + r.clientUs) * r.rate) / 1e6).toFixed(2);
console.log(
  "CPU per paid request (from /proc): the server's main thread, its other threads (threadpool, SQLite writer, V8), the client; and the cores they kept busy between them:",
);
for (const [what, r] of [
  ['raw ceiling', c],
  ['durable ceiling', d],
  ['svc POST /verify', paid.verify],
  ['svc GET /demo/book', paid.book],
] as const)
  console.log(
    `  ${what.padEnd(20)} main ${us(r.mainUs)}  other ${us(r.otherUs)}  server ${us(r.mainUs + r.otherUs)} (${ratio(r.mainUs + r.otherUs, c.mainUs + c.otherUs)}×)  client ${us(r.clientUs)}  cores busy ${cores(r)} of ${os.availableParallelism()}`,
  );
console.log('');

if (PROFILE_DIR) {
  console.log(`profiles and windows.json in ${PROFILE_DIR}: node scripts/launch.cjs bench/profile.ts ${PROFILE_DIR}`);
  process.exit(0);
}
if (PAID_ONLY) process.exit(0);
const sig = signatureCeiling();
const pool = await sig.pool;
const inproc = await inProcess();
console.log('The signature alone, and the verifier without HTTP:');
console.log(`ed25519 verify, one core (node:crypto, cached key) ......... ${fmt(sig.sync)}/s   (1.00)`);
console.log(
  `ed25519 verify, threadpool (all cores) ...................... ${fmt(pool)}/s   (${ratio(pool, sig.sync)})`,
);
console.log(
  `in-process accepts (verify + CAS + durable commit + receipt) . ${fmt(inproc.rate)}/s   (${ratio(inproc.rate, sig.sync)}; ${INPROC_CHANNELS} in flight, p50 ${ms(inproc.p50)}, p99 ${ms(inproc.p99)}, ${inproc.cores.toFixed(2)} cores busy)`,
);
progress('external seller: Express with @svc/meter in its own process, paid and unpaid rounds');
const seller = await externalSellerCpu();
console.log('\nThe meter in an external seller (its own process, Express, calling the facilitator over HTTP):');
console.log(describeSeller(seller));
progress('memory: 1,000 stream sessions and 200 event streams against a facilitator of its own');
const memory = await memoryAtCaps();
console.log("\nMemory at the specification's caps (goal ≤ 256 MB RSS):");
for (const text of memoryLines(memory)) console.log(text);
// The performance table of docs/performance.md, from this run (its "figure" and "ratio" columns).
const n = (x: number) => fmt(Math.round(x));
console.log('\nFor docs/performance.md (this run):');
console.log('| what | figure | ratio to its ceiling (goal) |\n|---|---|---|');
console.log(
  `| raw ceiling: node:http, parse + one strict ed25519 verify (reference) | ${n(c.rate)}/s, p99 ${ms(c.p99)} | 1.00 |`,
);
console.log(
  `| durable ceiling: + receipt signed and appended, one fdatasync per batch | ${n(d.rate)}/s, p99 ${ms(d.p99)} | ${ratio(d.rate, c.rate)} of the raw ceiling |`,
);
console.log(
  `| svc \`POST /verify\` | ${n(paid.verify.rate)}/s, p99 ${ms(paid.verify.p99)} | **${ratio(paid.verify.rate, d.rate)} of the durable ceiling (≥ ${DURABLE_GOAL.toFixed(1)})**; raw: ${ratio(paid.verify.rate, c.rate)}, p99 ${ratio(paid.verify.p99, c.p99)}× |`,
);
console.log(
  `| svc paid \`GET /demo/book\` through \`@svc/meter\` | ${n(paid.book.rate)}/s, p99 ${ms(paid.book.p99)} | ${ratio(paid.book.rate, c.rate)} (≥ 0.30) |`,
);
console.log(
  `| server CPU per paid request: raw ceiling / durable ceiling / \`/verify\` / paid book | ${n(c.mainUs + c.otherUs)} / ${n(d.mainUs + d.otherUs)} / ${n(paid.verify.mainUs + paid.verify.otherUs)} / ${n(paid.book.mainUs + paid.book.otherUs)} µs | 1.00 / ${ratio(d.mainUs + d.otherUs, c.mainUs + c.otherUs)}× / ${ratio(paid.verify.mainUs + paid.verify.otherUs, c.mainUs + c.otherUs)}× / ${ratio(paid.book.mainUs + paid.book.otherUs, c.mainUs + c.otherUs)}× |`,
);
console.log(
  `| cores busy, server and client together: raw ceiling / durable ceiling / \`/verify\` / paid book | ${cores(c)} / ${cores(d)} / ${cores(paid.verify)} / ${cores(paid.book)} of ${os.availableParallelism()} | — |`,
);
console.log(
  `| an external Express seller: the meter's own CPU per paid request | ${n(seller.meterCpuUs)} µs | ${(seller.meterCpuUs / seller.verifyUs).toFixed(1)} ed25519 verifies (${n(seller.verifyUs)} µs each) |`,
);
console.log(
  `| memory: 1,000 stream sessions + 200 event streams held | ${n(memory.rssHeldMb)} MB, idle ${n(memory.rssIdleMb)} MB | ${(memory.rssHeldMb / memory.limitMb).toFixed(2)} of 256 MB (≤ 1) |`,
);
console.log(
  `| in-process accepts, ${INPROC_CHANNELS} in flight | ${n(inproc.rate)}/s | ${ratio(inproc.rate, sig.sync)} of one core's ed25519 verifies (${n(sig.sync)}/s) |`,
);
console.log(
  `\nload average after: ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
