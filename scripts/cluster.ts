// npm run cluster — a facilitator cluster on loopback, to watch it work: one standalone ledger
// (`svc ledger`), two facilitator instances on one PostgreSQL database, and a small round-robin
// proxy in front. Ctrl-C stops everything.
//
//   npm run cluster                                  # proxy :4020, instances :4031 :4032, ledger :4021
//   DATABASE_URL=postgres://… npm run cluster        # another database (default: svc_cluster, created)
//   IP_RATE_LIMIT_PER_MINUTE=0 npm run cluster       # any facilitator setting passes through to both
//   CLUSTER_DATA_DIR=/tmp/c npm run cluster          # where the ledger and the shared keys live
//
// Every instance gets the same FACILITATOR_SECRET (receipts have one signer; attest tokens work on
// either instance), the same LEDGER_URL and DATABASE_URL, RATE_LIMIT_STORE=postgres (limits count
// across instances) and TRUST_PROXY=127.0.0.1 (the proxy forwards the client's address).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import replyFrom from '@fastify/reply-from';
import postgres from 'postgres';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SVC = path.join(ROOT, 'packages/facilitator/bin/svc.cjs');
const HOST = '127.0.0.1';
const PORTS = {
  proxy: num('CLUSTER_PORT', 4020),
  ledger: num('CLUSTER_LEDGER_PORT', 4021),
  instances: [num('CLUSTER_PORT_A', 4031), num('CLUSTER_PORT_B', 4032)],
};
const DATA_DIR = path.resolve(process.env['CLUSTER_DATA_DIR'] ?? path.join(ROOT, 'data/cluster'));
const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/svc_cluster';
const HEALTH_EVERY_MS = 1_000;
const START_TIMEOUT_MS = 60_000;

interface Proc {
  name: string;
  url: string;
  child: ChildProcess;
}

const procs: Proc[] = [];
let stopping = false;

function num(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1 || v > 65_535) {
    console.error(`${name} must be a port number`);
    process.exit(2);
  }
  return v;
}

function log(line: string): void {
  console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
}

/**
 * Creates the database when it does not exist (the URL's own database name). A database that
 * already holds a facilitator's tables while the ledger starts empty belongs to another ledger:
 * its channels would not match, so it is refused rather than mixed.
 */
async function ensureDatabase(url: string, freshLedger: boolean): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name))
    throw new Error(`DATABASE_URL: the database name ${JSON.stringify(name)} is not a plain identifier`);
  u.pathname = '/postgres';
  const admin = postgres(u.toString(), { max: 1, connect_timeout: 3, onnotice: () => undefined });
  try {
    const [row] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name}`;
    if (row?.n === 0) {
      await admin.unsafe(`CREATE DATABASE ${name}`);
      log(`created database ${name}`);
      return;
    }
  } finally {
    await admin.end({ timeout: 1 });
  }
  if (!freshLedger) return;
  const db = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => undefined });
  try {
    const [used] = await db<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'channels'`;
    if ((used?.n ?? 0) > 0)
      throw new StaleDatabase(
        `database ${name} holds another cluster's data, but the ledger in ${path.join(DATA_DIR, 'ledger')} is new. Drop it (dropdb -h 127.0.0.1 -U postgres ${name}), or set DATABASE_URL or CLUSTER_DATA_DIR to the pair that belongs together.`,
      );
  } finally {
    await db.end({ timeout: 1 });
  }
}

class StaleDatabase extends Error {}

/** Starts `svc <command>` and resolves once it prints that it listens. */
function start(name: string, args: string[], env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [SVC, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${START_TIMEOUT_MS / 1000} s:\n${out}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      out += text;
      for (const line of text.split('\n').filter((l) => l.trim() !== '')) console.log(`  [${name}] ${line}`);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ name, url: m[1]!.replace(/\/ledger$/, ''), child });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!stopping) log(`${name} exited (code ${code ?? '-'}, signal ${signal ?? '-'})`);
      reject(new Error(`${name} exited before it listened:\n${out}`));
    });
  });
}

/** One shared key for every instance, kept in the cluster's data directory (mode 0600). */
function sharedSecret(): string {
  const file = path.join(DATA_DIR, 'facilitator.secret');
  if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return fs.readFileSync(file, 'utf8').trim();
}

async function health(url: string): Promise<{ up: boolean; leader: boolean }> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(800) });
    const body = (await res.json()) as { leader?: unknown };
    return { up: res.ok, leader: body.leader === true };
  } catch {
    return { up: false, leader: false };
  }
}

/** The round-robin proxy: every request to the next live instance, the client's address forwarded. */
async function startProxy(instances: Proc[]): Promise<() => Promise<void>> {
  const live = new Set(instances.map((p) => p.url));
  let next = 0;
  let leader: string | null = null;
  const timer = setInterval(() => {
    void Promise.all(instances.map(async (p) => ({ p, h: await health(p.url) }))).then((all) => {
      for (const { p, h } of all) {
        if (h.up && !live.has(p.url)) log(`${p.name} is back`);
        if (!h.up && live.has(p.url)) log(`${p.name} does not answer: the proxy skips it`);
        if (h.up) live.add(p.url);
        else live.delete(p.url);
      }
      const now = all.find(({ h }) => h.leader)?.p.name ?? null;
      if (now !== leader)
        log(now ? `${now} runs the claim scheduler and the ledger watcher` : 'no instance leads right now');
      leader = now;
    });
  }, HEALTH_EVERY_MS);
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  await app.register(replyFrom, { undici: { connections: 128, pipelining: 1 } });
  // Bodies pass through untouched, whatever their type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.all('/*', (request, reply) => {
    const up = instances.filter((p) => live.has(p.url));
    if (up.length === 0)
      return reply
        .code(503)
        .send({ error: 'FACILITATOR_UNAVAILABLE', source: 'gateway', message: 'No facilitator instance answers.' });
    const target = up[next++ % up.length]!;
    return reply.from(`${target.url}${request.url}`, {
      rewriteRequestHeaders: (_req, headers) => ({ ...headers, 'x-forwarded-for': request.ip }),
      onError: (r) =>
        void r
          .code(502)
          .send({ error: 'FACILITATOR_UNAVAILABLE', source: 'gateway', message: `${target.name} did not answer.` }),
    });
  });
  await app.listen({ port: PORTS.proxy, host: HOST });
  return async () => {
    clearInterval(timer);
    await app.close();
  };
}

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    log('stopping the cluster');
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((done) => {
            if (p.child.exitCode !== null || p.child.signalCode !== null) return done();
            p.child.once('exit', () => done());
            p.child.kill('SIGTERM');
            setTimeout(() => p.child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
  }
  process.exit(code);
}

async function main(): Promise<void> {
  const ledgerDir = path.join(DATA_DIR, 'ledger');
  const freshLedger = !fs.existsSync(ledgerDir) || fs.readdirSync(ledgerDir).length === 0;
  fs.mkdirSync(ledgerDir, { recursive: true });
  try {
    await ensureDatabase(DATABASE_URL, freshLedger);
  } catch (err) {
    if (err instanceof StaleDatabase) {
      console.error(`cluster: ${err.message}`);
      process.exit(1);
    }
    console.error(
      `cluster: PostgreSQL at ${DATABASE_URL.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')} does not answer (${(err as Error).message}).\nStart it, or set DATABASE_URL.`,
    );
    process.exit(1);
  }
  log(`data in ${DATA_DIR}; database ${new URL(DATABASE_URL).pathname.slice(1)}`);
  const ledger = await start('ledger', ['ledger'], { PORT: String(PORTS.ledger), HOST, DATA_DIR: ledgerDir });
  procs.push(ledger);
  const shared: Record<string, string> = {
    HOST,
    DATA_DIR, // the demo seller's and demo world's keys are shared too
    DATABASE_URL,
    LEDGER_URL: `${ledger.url}/ledger`,
    FACILITATOR_SECRET: sharedSecret(),
    RATE_LIMIT_STORE: 'postgres',
    TRUST_PROXY: '127.0.0.1',
    PUBLIC_URL: `http://${HOST}:${PORTS.proxy}`,
    LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
  };
  // The first instance creates the shared keys and seeds the demo world; the second only joins.
  procs.push(await start('A', ['start'], { ...shared, PORT: String(PORTS.instances[0]) }));
  procs.push(await start('B', ['start'], { ...shared, PORT: String(PORTS.instances[1]), DEMO_SEED: '0' }));
  const instances = procs.slice(1);
  await startProxy(instances);
  for (const p of procs) {
    p.child.once('exit', () => {
      if (!stopping) log(`${p.name} stopped; the others go on (restart the cluster to bring it back)`);
    });
  }
  console.log(`
cluster up:
  proxy       http://${HOST}:${PORTS.proxy}   round-robin over A and B — point sellers and buyers here
  instance A  ${instances[0]!.url}
  instance B  ${instances[1]!.url}
  ledger      ${ledger.url}/ledger
  database    ${DATABASE_URL.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}

try:
  curl -s http://${HOST}:${PORTS.proxy}/health                 # answered by A, then B, …
  curl -sN http://${HOST}:${PORTS.proxy}/events                # every event, whichever instance took it
  curl -s -XPOST http://${HOST}:${PORTS.proxy}/demo/agent/run  # the demo buyer pays through the proxy
  kill -9 ${instances[0]!.child.pid ?? '<pid of A>'}                                   # A dies: B takes over the claims within a second
  LOAD_COMPARE=1 LOAD_URL=${instances.map((p) => p.url).join(',')} LOAD_LEDGER_URL=${ledger.url}/ledger npm run load
        # one instance, then both; start the cluster with IP_RATE_LIMIT_PER_MINUTE=0 IP_COSTLY_LIMIT_PER_MINUTE=0
        # MANUAL_CLAIM_COOLDOWN_SECONDS=0 for that: the load comes from one address and claims every channel at the end
Ctrl-C stops everything.
`);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));
main().catch((err: unknown) => {
  console.error(`cluster: ${(err as Error).message}`);
  void stopAll(1);
});
