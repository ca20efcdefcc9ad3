// npm run bench — prints, from one run on this machine:
//   1. ed25519 verifications per second on one core (node:crypto, cached key): the ceiling;
//      and on the threadpool (all cores), the headroom the async verify path uses;
//   2. in-process voucher accepts per second (strict verify + compare-and-set + durable SQLite
//      commit + signed receipt), and its ratio to the ceiling;
//   3. HTTP POST /verify requests per second with p50/p99 at a fixed concurrency, against the
//      facilitator in its own process, and its ratio to the ceiling.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomKeypair, voucherContext, toHex } from '@svc/core';
import type { Keypair, Payment, PaymentRequirements } from '@svc/core';
import { LocalLedgerClient } from '@svc/sdk';
import { loadConfig } from '../packages/facilitator/src/config.js';
import { createFacilitator } from '../packages/facilitator/src/facilitator.js';
import { startChild } from '../packages/facilitator/test/helpers/process.js';

const CEILING_N = 20_000;
const INPROC_CHANNELS = 128;
const INPROC_PER_CHANNEL = 200;
const INPROC_ROUNDS = 3;
const HTTP_CONCURRENCY = 64;
const HTTP_SECONDS = 6;
const HTTP_PER_CHANNEL = 1_500;
const BENCH_ENV = {
  LOG_LEVEL: 'warn',
  CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '10000000',
  IP_RATE_LIMIT_PER_MINUTE: '0',
  DEMO: 'off',
};

function rate(n: number, ms: number): number {
  return Math.round((n / ms) * 1000);
}

function ceiling(): { sync: number; pool: Promise<number> } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const msg = crypto.randomBytes(32);
  const sig = crypto.sign(null, msg, privateKey);
  for (let i = 0; i < 2000; i++) crypto.verify(null, msg, publicKey, sig);
  let t = performance.now();
  for (let i = 0; i < CEILING_N; i++) crypto.verify(null, msg, publicKey, sig);
  const sync = rate(CEILING_N, performance.now() - t);
  const pool = (async () => {
    t = performance.now();
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

interface Channel {
  id: bigint;
  vouchers: string[];
}

async function openChannels(
  ledger: LocalLedgerClient,
  payee: string,
  count: number,
  perChannel: number,
  price: bigint,
): Promise<Channel[]> {
  const info = await ledger.info();
  const ctx = voucherContext(info.passphrase, info.contracts.channel);
  const out: Channel[] = [];
  for (let i = 0; i < count; i++) {
    const payer = randomKeypair();
    const vk: Keypair = randomKeypair();
    await ledger.faucet(payer.address);
    const { channelId } = await ledger.openChannel({
      payer,
      payee,
      deposit: price * BigInt(perChannel),
      voucherKey: vk,
    });
    out.push({
      id: channelId,
      vouchers: Array.from({ length: perChannel }, (_, k) => toHex(ctx.sign(vk, channelId, price * BigInt(k + 1)))),
    });
  }
  return out;
}

function requirementsFor(
  info: Awaited<ReturnType<LocalLedgerClient['info']>>,
  payTo: string,
  url: string,
): PaymentRequirements {
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

interface Figures {
  rate: number;
  p50: number;
  p99: number;
  cores: number;
}

async function inProcess(): Promise<Figures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const f = await createFacilitator({ config: loadConfig({ ...BENCH_ENV, PORT: '0', DATA_DIR: dataDir }) });
  const url = await f.listen();
  try {
    const ledger = new LocalLedgerClient(`${url}/ledger`);
    const info = await ledger.info();
    const payee = randomKeypair().address;
    const channels = await openChannels(ledger, payee, INPROC_CHANNELS, INPROC_PER_CHANNEL, 1000n);
    await f.watcher.tick();
    const requirements = requirementsFor(info, payee, url);
    const verifier = f.services.verifier;
    const latencies: number[] = [];
    const cpu = process.cpuUsage();
    const t = performance.now();
    let accepted = 0;
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
          const out = await verifier.verify({
            payment,
            requirements,
            resource: `${url}/bench`,
            method: 'GET',
            requestHash: null,
            idempotencyKey: null,
          });
          latencies.push(performance.now() - s);
          if (!out.ok) throw new Error(`rejected: ${out.code} ${out.message}`);
          accepted++;
        }
      }),
    );
    const elapsed = performance.now() - t;
    const used = process.cpuUsage(cpu);
    latencies.sort((a, b) => a - b);
    return {
      rate: rate(accepted, elapsed),
      p50: latencies[Math.floor(latencies.length * 0.5)]!,
      p99: latencies[Math.floor(latencies.length * 0.99)]!,
      cores: (used.user + used.system) / 1000 / elapsed,
    };
  } finally {
    await f.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function overHttp(): Promise<Figures & { errors: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-http-'));
  const child = await startChild({ ...BENCH_ENV, DATA_DIR: dataDir });
  try {
    const ledger = new LocalLedgerClient(`${child.url}/ledger`);
    const info = await ledger.info();
    const payee = randomKeypair().address;
    const channels = await openChannels(ledger, payee, HTTP_CONCURRENCY, HTTP_PER_CHANNEL, 1000n);
    const requirements = requirementsFor(info, payee, child.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: HTTP_CONCURRENCY });
    const target = new URL(`${child.url}/verify`);
    const post = (body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const bodyFor = (ch: Channel, k: number) =>
      JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: requirements,
          payload: {
            channelId: ch.id.toString(),
            cumulative: (1000n * BigInt(k + 1)).toString(),
            signature: ch.vouchers[k],
          },
          resource: { url: `${child.url}/bench` },
        },
        paymentRequirements: requirements,
        method: 'GET',
      });
    // Warm up, then measure for a fixed time.
    for (const ch of channels.slice(0, 4)) for (let k = 0; k < 20; k++) await post(bodyFor(ch, k));
    const latencies: number[] = [];
    let errors = 0;
    const deadline = performance.now() + HTTP_SECONDS * 1000;
    const t = performance.now();
    await Promise.all(
      channels.map(async (ch, i) => {
        for (let k = i < 4 ? 20 : 0; k < ch.vouchers.length && performance.now() < deadline; k++) {
          const s = performance.now();
          const status = await post(bodyFor(ch, k));
          latencies.push(performance.now() - s);
          if (status !== 200) errors++;
        }
      }),
    );
    const elapsed = performance.now() - t;
    agent.destroy();
    latencies.sort((a, b) => a - b);
    return {
      rate: rate(latencies.length, elapsed),
      p50: latencies[Math.floor(latencies.length * 0.5)]!,
      p99: latencies[Math.floor(latencies.length * 0.99)]!,
      cores: 0,
      errors,
    };
  } finally {
    await child.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(2)} ms`;

console.log(`svc bench — ${os.cpus().length} cores, Node ${process.version}\n`);
const c = ceiling();
const pool = await c.pool;
console.log(`ed25519 verify, one core (node:crypto, cached key) ......... ${fmt(c.sync)}/s   ← the ceiling (1.00)`);
console.log(
  `ed25519 verify, threadpool (all cores) ...................... ${fmt(pool)}/s   (${(pool / c.sync).toFixed(2)})`,
);
const rounds: Figures[] = [];
for (let r = 0; r < INPROC_ROUNDS; r++) rounds.push(await inProcess());
rounds.sort((a, b) => a.rate - b.rate);
const inproc = rounds[Math.floor(rounds.length / 2)]!;
console.log(
  `in-process accepts (verify + CAS + durable commit + receipt) . ${fmt(inproc.rate)}/s   (${(inproc.rate / c.sync).toFixed(2)} of the ceiling; median of ${INPROC_ROUNDS} rounds: ${rounds.map((x) => fmt(x.rate)).join(' / ')})`,
);
console.log(
  `    ${INPROC_CHANNELS} channels in flight, p50 ${ms(inproc.p50)}, p99 ${ms(inproc.p99)}, ${inproc.cores.toFixed(2)} cores busy`,
);
const web = await overHttp();
console.log(
  `HTTP POST /verify, ${HTTP_CONCURRENCY} connections, ${HTTP_SECONDS} s, separate process ... ${fmt(web.rate)}/s   (${(web.rate / c.sync).toFixed(2)} of the ceiling; p50 ${ms(web.p50)}, p99 ${ms(web.p99)}; non-200: ${web.errors})`,
);
console.log('\nThe client shares the machine’s cores with the server; the HTTP figure is a floor.');
