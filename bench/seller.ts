// The meter's own CPU per paid request in an external seller: a seller in its own
// process (bench/seller-app.mjs: Express and @svc/meter as the README has them) calls the
// facilitator, in a process of its own too, over HTTP. The bench drives the same number of paid
// requests (GET /paid, behind the meter) and unpaid ones (GET /free, the same handler) and reads
// the seller's own CPU time (user + system, process.cpuUsage()) around each phase: the difference
// per request is what the meter costs the seller. One ed25519 verify, measured in the same run, is
// the yardstick.
//
//   node scripts/launch.cjs bench/seller.ts             # the figures
//   node scripts/launch.cjs bench/seller.ts --profile   # and a CPU profile of the seller's paid phase
//   node scripts/launch.cjs bench/seller.ts --token     # a seller with its token: it attests every response
//
// The buyer (this process) pays from WORKERS channels, one each, every voucher signed and encoded
// before the clock starts; its own CPU is not counted. `--profile` runs the seller under
// `node --cpu-prof`, sorts the samples into the paid and the unpaid rounds and prints where the
// time went, by package and file, paid against unpaid (bench/PROFILE-seller.md).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  PaymentRequiredSchema,
  decodeJsonHeader,
  encodeJsonHeader,
  randomKeypair,
  toHex,
  voucherContext,
} from '@svc/core';
import type { PaymentRequired } from '@svc/core';
import { requestSellerToken } from '@svc/meter';
import { LocalLedgerClient } from '@svc/sdk';
import { startChild } from '../packages/facilitator/test/helpers/process.js';
import type { Child } from '../packages/facilitator/test/helpers/process.js';
import { openChannels } from '../scripts/load/channels.js';

/** Requests in flight: one per worker, each worker paying from its own channel, in order. */
const WORKERS = 32;
/** Requests per worker per phase; a round is a paid phase then an unpaid one. */
const PER_WORKER = 100;
const WARMUP_PER_WORKER = 50;
const ROUNDS = 3;
/** The demo book's price (PRICE_BOOK_PER_REQUEST's default): what one paid request pays. */
const PRICE = 5000n;
const VERIFY_N = 20_000;
const APP = fileURLToPath(new URL('./seller-app.mjs', import.meta.url));
const FACILITATOR_ENV = {
  LOG_LEVEL: 'warn',
  DEMO: 'off',
  IP_RATE_LIMIT_PER_MINUTE: '0',
  CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '10000000',
};

export interface SellerFigures {
  /** Requests per phase (paid and unpaid alike), per round. */
  requests: number;
  /** The seller's CPU per paid request (GET /paid), µs: the median round. */
  paidCpuUs: number;
  /** The seller's CPU per unpaid request of the same handler (GET /free), µs: the median round. */
  unpaidCpuUs: number;
  /** paid − unpaid: what the meter costs the seller per paid request, µs. */
  meterCpuUs: number;
  /** Requests per second of the paid and the unpaid phase (the machine's cores are shared by all three processes). */
  paidRate: number;
  unpaidRate: number;
  /** One ed25519 verify on this machine in the same run (node:crypto, cached key), µs. */
  verifyUs: number;
}

export interface SellerBenchOptions {
  /** Run the seller under `node --cpu-prof` and summarise its paid rounds (prints the summary). */
  profile?: boolean;
  /**
   * Give the seller its token, so that the meter attests every response it served (one more call
   * to the facilitator per paid request). Attestations count against the facilitator's per-address
   * costly limit (30 a minute), which is turned off for this.
   */
  sellerToken?: boolean;
  log?: (line: string) => void;
}

/** One ed25519 verify, µs: node:crypto with the key object cached, as the facilitator verifies. */
export function verifyMicros(n = VERIFY_N): number {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const msg = crypto.randomBytes(32);
  const sig = crypto.sign(null, msg, privateKey);
  for (let i = 0; i < 2000; i++) crypto.verify(null, msg, publicKey, sig);
  const t = performance.now();
  for (let i = 0; i < n; i++) crypto.verify(null, msg, publicKey, sig);
  return ((performance.now() - t) * 1000) / n;
}

export async function externalSellerCpu(o: SellerBenchOptions = {}): Promise<SellerFigures> {
  const log = o.log ?? (() => undefined);
  const verifyUs = verifyMicros();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-seller-'));
  const profDir = o.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'svc-seller-prof-')) : null;
  let facilitator: Child | null = null;
  let seller: Seller | null = null;
  try {
    facilitator = await startChild({
      ...FACILITATOR_ENV,
      ...(o.sellerToken ? { IP_COSTLY_LIMIT_PER_MINUTE: '0' } : {}),
      DATA_DIR: dataDir,
    });
    const ledger = new LocalLedgerClient(`${facilitator.url}/ledger`);
    const payeeKey = randomKeypair();
    const payee = payeeKey.address;
    const token = o.sellerToken
      ? (await requestSellerToken({ facilitator: facilitator.url, secret: payeeKey.secret() })).token
      : null;
    seller = await startSeller(facilitator.url, payee, token, profDir);
    const base = `http://127.0.0.1:${seller.port}`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS });
    const terms = await readTerms(agent, `${base}/paid`);
    const vouchers = WARMUP_PER_WORKER + ROUNDS * PER_WORKER;
    log(`  opening ${WORKERS} channels of ${vouchers} vouchers of ${PRICE} …`);
    const channels = await openChannels(ledger, {
      payees: Array.from({ length: WORKERS }, () => payee),
      deposit: PRICE * BigInt(vouchers),
    });
    const info = await ledger.info();
    const ctx = voucherContext(info.passphrase, info.contracts.channel);
    const accept = terms.accepts[0]!;
    // Every PAYMENT-SIGNATURE header, in order per channel, before any clock starts.
    const headers = channels.map((ch) =>
      Array.from({ length: vouchers }, (_, k) => {
        const cumulative = PRICE * BigInt(k + 1);
        const payload = {
          channelId: ch.id.toString(),
          cumulative: cumulative.toString(),
          signature: toHex(ctx.sign(ch.voucherKey, ch.id, cumulative)),
        };
        return encodeJsonHeader({ x402Version: 2, accepted: accept, payload, resource: terms.resource });
      }),
    );
    const next = headers.map(() => 0);
    const paid = (n: number) =>
      phase(agent, `${base}/paid`, n, (w) => ({ 'payment-signature': headers[w]![next[w]!++]! }));
    const free = (n: number) => phase(agent, `${base}/free`, n, () => ({}));

    await paid(WARMUP_PER_WORKER);
    await free(WARMUP_PER_WORKER);
    const rounds: { paid: Measured; free: Measured }[] = [];
    const marks = { paid: [] as [bigint, bigint][], unpaid: [] as [bigint, bigint][] };
    for (let r = 0; r < ROUNDS; r++) {
      const p = await measure(seller, () => paid(PER_WORKER));
      const f = await measure(seller, () => free(PER_WORKER));
      marks.paid.push(p.window);
      marks.unpaid.push(f.window);
      rounds.push({ paid: p, free: f });
      log(
        `  round ${r + 1}: paid ${p.cpuUs.toFixed(0)} µs at ${p.rate}/s, unpaid ${f.cpuUs.toFixed(0)} µs at ${f.rate}/s`,
      );
    }
    agent.destroy();
    const median = (pick: (x: { paid: Measured; free: Measured }) => number) =>
      rounds.map(pick).sort((a, b) => a - b)[Math.floor(rounds.length / 2)]!;
    const paidCpuUs = median((x) => x.paid.cpuUs);
    const unpaidCpuUs = median((x) => x.free.cpuUs);
    const figures: SellerFigures = {
      requests: WORKERS * PER_WORKER,
      paidCpuUs,
      unpaidCpuUs,
      meterCpuUs: paidCpuUs - unpaidCpuUs,
      paidRate: median((x) => x.paid.rate),
      unpaidRate: median((x) => x.free.rate),
      verifyUs,
    };
    if (profDir) {
      const file = await seller.stop();
      log('');
      for (const line of summariseProfile(readProfile(profDir, file), marks, WORKERS * PER_WORKER * ROUNDS)) log(line);
    }
    return figures;
  } finally {
    await seller?.stop();
    await facilitator?.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (profDir && !o.profile) fs.rmSync(profDir, { recursive: true, force: true });
  }
}

/** The figures in one line, with the verify as the yardstick. */
export function describeSeller(f: SellerFigures, sellerToken = false): string {
  const us = (n: number) => `${Math.round(n)} µs`;
  return (
    `external Express seller${sellerToken ? ' with its token (attesting)' : ''}: meter CPU per paid request ${us(f.meterCpuUs)} ` +
    `(paid ${us(f.paidCpuUs)}, same handler unpaid ${us(f.unpaidCpuUs)}; ${(f.paidCpuUs / f.unpaidCpuUs).toFixed(1)}×); ` +
    `one ed25519 verify ≈ ${us(f.verifyUs)}, so the meter costs ${(f.meterCpuUs / f.verifyUs).toFixed(1)} verifies; ` +
    `${f.paidRate.toLocaleString('en-US')} paid/s, ${f.unpaidRate.toLocaleString('en-US')} unpaid/s`
  );
}

interface CpuMark {
  us: number;
  /** process.hrtime of the seller when it read its CPU time, µs (the clock of its CPU profile). */
  hr: bigint;
}

interface Seller {
  port: number;
  cpu(): Promise<CpuMark>;
  /** Asks the seller to exit (writing its profile under --cpu-prof); resolves with the profile's name if any. */
  stop(): Promise<string | null>;
}

/** Starts bench/seller-app.mjs with plain node (under --cpu-prof into `profDir` when given). */
async function startSeller(
  facilitatorUrl: string,
  payTo: string,
  sellerToken: string | null,
  profDir: string | null,
): Promise<Seller> {
  const flags = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '100'] : [];
  const proc: ChildProcess = spawn(process.execPath, [...flags, APP], {
    env: {
      ...process.env,
      SVC_FACILITATOR: facilitatorUrl,
      SVC_PAY_TO: payTo,
      SVC_PRICE: PRICE.toString(),
      SVC_SELLER_TOKEN: sellerToken ?? '',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the seller did not start in 30 s')), 30_000);
    proc.once('exit', (code) => reject(new Error(`the seller exited with ${code}`)));
    proc.once('message', (m: { listening?: number }) => {
      clearTimeout(timer);
      if (typeof m.listening === 'number') resolve(m.listening);
      else reject(new Error('the seller said something else than where it listens'));
    });
  });
  let stopped: Promise<string | null> | null = null;
  return {
    port,
    cpu: () =>
      new Promise((resolve) => {
        proc.once('message', (m: { cpu: NodeJS.CpuUsage; hr: string }) =>
          resolve({ us: m.cpu.user + m.cpu.system, hr: BigInt(m.hr) / 1000n }),
        );
        proc.send({ cpu: true });
      }),
    stop: () =>
      (stopped ??= new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve(null);
        proc.once('exit', () => {
          const names = profDir ? fs.readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')) : [];
          resolve(names[0] ?? null);
        });
        proc.send({ exit: true });
      })),
  };
}

/** The 402's terms: what the buyer pays against. */
async function readTerms(agent: http.Agent, url: string): Promise<PaymentRequired> {
  const res = await get(agent, url, {});
  const header = res.headers['payment-required'];
  if (res.status !== 402 || typeof header !== 'string') throw new Error(`GET ${url} answered ${res.status}, not 402`);
  const json = decodeJsonHeader(header, 64 * 1024);
  if (!json.ok) throw new Error(`unreadable PAYMENT-REQUIRED: ${json.message}`);
  return PaymentRequiredSchema.parse(json.value);
}

function get(
  agent: http.Agent,
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** WORKERS workers, `perWorker` requests each, one at a time; every answer must be 200. */
async function phase(
  agent: http.Agent,
  url: string,
  perWorker: number,
  headersOf: (worker: number) => Record<string, string>,
): Promise<number> {
  const t = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) {
        const res = await get(agent, url, headersOf(w));
        if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
      }
    }),
  );
  return performance.now() - t;
}

interface Measured {
  /** The seller's CPU per request, µs. */
  cpuUs: number;
  rate: number;
  /** The seller's clock at the start and the end, µs. */
  window: [bigint, bigint];
}

async function measure(seller: Seller, run: () => Promise<number>): Promise<Measured> {
  const before = await seller.cpu();
  const ms = await run();
  const after = await seller.cpu();
  const n = WORKERS * PER_WORKER;
  return { cpuUs: (after.us - before.us) / n, rate: Math.round((n / ms) * 1000), window: [before.hr, after.hr] };
}

// ---- the profile ----

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

function readProfile(dir: string, file: string | null): Profile & { path: string } {
  if (!file) throw new Error(`no CPU profile was written into ${dir}`);
  const p = path.join(dir, file);
  return { ...(JSON.parse(fs.readFileSync(p, 'utf8')) as Profile), path: p };
}

/** Where a function's self time goes: a package, a file of ours, a part of Node, or the VM. */
export function groupOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : `native ${functionName || '(anonymous)'}`;
  if (url.includes('internal/deps/undici')) return 'undici (fetch)';
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  const ours = /\/packages\/([^/]+)\/dist\/([^/]+)\.js$/.exec(url);
  if (ours) return `@svc/${ours[1]!} ${ours[2]!}`;
  if (url.startsWith('node:')) {
    const name = url.slice('node:'.length).replace(/^internal\//, '');
    return `node ${name.split('/').slice(0, 2).join('/')}`;
  }
  return path.basename(url);
}

interface Tally {
  groups: Map<string, number>;
  functions: Map<string, number>;
  /** Self time of all samples but idle, µs. */
  total: number;
}

/** Self time of the samples taken within `windows` (the seller's clock, µs), by group and by function. */
function tally(profile: Profile, windows: [bigint, bigint][]): Tally {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out: Tally = { groups: new Map(), functions: new Map(), total: 0 };
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (!windows.some(([a, b]) => at >= Number(a) && at < Number(b))) continue;
    const frame = byId.get(profile.samples[i]!)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    out.total += dt;
    add(out.groups, groupOf(frame), dt);
    const where = frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    add(out.functions, `${frame.functionName || '(anonymous)'}${where}`, dt);
  }
  return out;
}

/**
 * Where the seller's CPU goes in the paid rounds against the unpaid ones (`requests` each), per
 * request: by package or file, paid, unpaid and the difference — the meter's share — largest
 * difference first; then the paid rounds' top functions.
 */
export function summariseProfile(
  profile: Profile & { path?: string },
  windows: { paid: [bigint, bigint][]; unpaid: [bigint, bigint][] },
  requests: number,
): string[] {
  const paid = tally(profile, windows.paid);
  const unpaid = tally(profile, windows.unpaid);
  const us = (v: number) => (v / requests).toFixed(1).padStart(7);
  const groups = [...new Set([...paid.groups.keys(), ...unpaid.groups.keys()])]
    .map((g) => ({ g, p: paid.groups.get(g) ?? 0, u: unpaid.groups.get(g) ?? 0 }))
    .sort((a, b) => b.p - b.u - (a.p - a.u));
  const shown = groups.slice(0, 24);
  const rest = groups.slice(24).reduce((sum, x) => ({ p: sum.p + x.p, u: sum.u + x.u }), { p: 0, u: 0 });
  return [
    `seller CPU profile${profile.path ? ` (${profile.path})` : ''}: ${requests} paid and ${requests} unpaid requests; ` +
      `samples per request: paid ${(paid.total / requests).toFixed(0)} µs, unpaid ${(unpaid.total / requests).toFixed(0)} µs (the profiler's own cost included)`,
    'self time per request by package or file, µs:   paid   unpaid  paid − unpaid',
    ...shown.map((x) => `  ${x.g.padEnd(44)} ${us(x.p)}  ${us(x.u)}  ${us(x.p - x.u)}`),
    `  ${'everything else'.padEnd(44)} ${us(rest.p)}  ${us(rest.u)}  ${us(rest.p - rest.u)}`,
    `  ${'all'.padEnd(44)} ${us(paid.total)}  ${us(unpaid.total)}  ${us(paid.total - unpaid.total)}`,
    'the paid rounds’ top functions by self time per request, µs:',
    ...[...paid.functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30)
      .map(([f, v]) => `  ${us(v)}  ${f}`),
  ];
}

function shortUrl(url: string): string {
  return url.replace(/^file:\/\/.*\/node_modules\//, '').replace(/^file:\/\/.*\/packages\//, 'packages/');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const profile = process.argv.includes('--profile');
  const sellerToken = process.argv.includes('--token');
  console.log(`svc bench: external seller — ${os.availableParallelism()} cores, Node ${process.version}`);
  const figures = await externalSellerCpu({ profile, sellerToken, log: (line) => console.log(line) });
  console.log(describeSeller(figures, sellerToken));
}
