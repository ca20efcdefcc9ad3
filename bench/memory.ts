// Memory at the specification's caps: the facilitator in its own process, with
// the caps as the spec sets them, is to hold 1,000 open stream sessions and 200 event streams at
// once in at most 256 MB of resident memory (VmRSS, read from /proc; exit code 1 above it).
// `npm run bench:memory` (or `node scripts/launch.cjs bench/memory.ts`) prints:
//
//   memory at the caps: 1,000 stream sessions + 200 event streams held: RSS 123 MB (idle 98 MB) — limit 256 MB (0.48 of it)
//
// Every session is really open, and really held: each was opened as a seller's meter opens one
// (POST /verify of the first slice, then POST /streams with the payee's seller token), and while
// RSS is read each has a seller's long poll in progress (POST /streams/:id/wait, as a seller loop
// waiting for its buyer's next voucher: the heaviest state a session can be in). Nothing is
// raised: the per-party caps are met by spreading the sessions over 250 channels (4 each, the
// per-channel cap), 250 payers (4 each, of 16) and 5 payees (200 each, of 250); the per-address
// caps (8 event streams, 128 connections) by connecting from different loopback addresses, as
// that many clients would. The facilitator itself confirms the caps are full: one more session
// and one more event stream are both refused, by the total caps. "Idle" is read after a warm-up
// (channels open; a few sessions, long polls and event streams opened and closed), nothing held.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomKeypair } from '@svc/core';
import type { ChannelPayload, Keypair, PaymentRequirements } from '@svc/core';
import { requestSellerToken } from '@svc/meter';
import { ChannelSigner, LocalLedgerClient } from '@svc/sdk';
import { startChild } from '../packages/facilitator/test/helpers/process.js';

export interface MemoryFigures {
  sessions: number;
  eventStreams: number;
  rssIdleMb: number;
  rssHeldMb: number;
  limitMb: number;
  /** Sessions open, nothing else held yet (no long poll, no event stream). */
  rssSessionsMb: number;
  /** Sessions open, each with its long poll in progress (no event stream yet). */
  rssWaitingMb: number;
  /** The child's peak RSS over the whole run (VmHWM), opening included. */
  rssPeakMb: number;
  /** Long polls (POST /streams/:id/wait) in progress while held. */
  longPolls: number;
  /** Whole run, start to clean-up, in seconds. */
  seconds: number;
}

/** The spec's caps (Limits): set explicitly, so nothing in the environment changes them. */
const CAPS = {
  STREAM_MAX_TOTAL: '1000',
  STREAM_MAX_PER_CHANNEL: '4',
  STREAM_MAX_PER_PAYER: '16',
  STREAM_MAX_PER_PAYEE: '250',
  SSE_MAX_TOTAL: '200',
  SSE_MAX_PER_IP: '8',
};
const SESSIONS = 1000;
const EVENT_STREAMS = 200;
const LIMIT_MB = 256;
const PER_CHANNEL = 4;
const CHANNELS = SESSIONS / PER_CHANNEL;
const PAYEES = 5;
/** The spare payee's channels: the warm-up's sessions, then the probe of the total cap. */
const WARMUP_CHANNELS = 8;
const SLICE = 2000n;
const DEPOSIT = 1_000_000n;
/** Long polls from one address: under CONN_MAX_PER_IP (128). */
const POLLS_PER_ADDRESS = 100;
const SSE_PER_ADDRESS = 8;
/** The longest wait there is (spec: 30 s); a wait that runs out ends its session, so all is read well within it. */
const WAIT_MS = 30_000;
const HELD_WITHIN_MS = 24_000;
/** A session idle this long (no wait, no voucher) is ended (STREAM_IDLE_SECONDS, 90 s). */
const IDLE_WITHIN_MS = 80_000;
const OPEN_CONCURRENCY = 16;
const SAMPLE_MS = 2_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const progress = (line: string) => process.stderr.write(`  memory bench: ${line}\n`);

/** A field of /proc/<pid>/status in MB (VmRSS, VmHWM). */
function procMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
  if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

/** The largest RSS seen over `ms`, sampled every 100 ms. */
async function sampleRss(pid: number, ms = SAMPLE_MS): Promise<number> {
  let max = procMb(pid, 'VmRSS');
  for (const end = performance.now() + ms; performance.now() < end;) {
    await sleep(100);
    max = Math.max(max, procMb(pid, 'VmRSS'));
  }
  return max;
}

/** Connections the facilitator has accepted and holds (ESTABLISHED, its side: local port = its port). */
function serverConnections(pid: number, port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let n = 0;
  for (const file of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '01') n++;
    }
  }
  return n;
}

function openFilesLimit(): number | null {
  const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'))?.[1];
  return soft === undefined ? null : soft === 'unlimited' ? Infinity : Number(soft);
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json().catch(() => ({}))) as Record<string, unknown>;
}

interface Payee {
  keys: Keypair;
  token: string;
}

interface Channel {
  payee: Payee;
  signer: ChannelSigner;
}

interface Session {
  id: string;
  payee: Payee;
}

/** A request held open on its own connection, from `localAddress`. */
interface Held {
  req: http.ClientRequest;
  /** Set once it answers: a held request must not have. */
  answered: number | null;
  closed: boolean;
}

export async function memoryAtCaps(): Promise<MemoryFigures> {
  const started = performance.now();
  const files = openFilesLimit();
  // ~1,200 connections held on each side, plus the store's and the ledger's files.
  if (files !== null && files < 2048)
    throw new Error(
      `the open-file limit is ${files}: this bench holds ~1,250 sockets a side; run it under ulimit -n 4096`,
    );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-memory-'));
  const child = await startChild({
    LOG_LEVEL: 'warn',
    DEMO: 'off',
    IP_RATE_LIMIT_PER_MINUTE: '0',
    DATA_DIR: dataDir,
    ...CAPS,
  });
  const held: Held[] = [];
  try {
    const pid = child.proc.pid;
    if (pid === undefined) throw new Error('the facilitator has no pid');
    const base = new URL(child.url);
    const port = Number(base.port);
    const ledger = new LocalLedgerClient(`${child.url}/ledger`);
    const info = await ledger.info();

    // Payees, each with its seller token (as `svc-seller token` gets one), and one more for the
    // warm-up and the probe of the total cap: its own payee, so no per-party cap can refuse that.
    const payees: Payee[] = [];
    for (let i = 0; i <= PAYEES; i++) {
      const keys = randomKeypair();
      const { token } = await requestSellerToken({ facilitator: child.url, secret: keys.secret(), days: 1 });
      payees.push({ keys, token });
    }
    const spare = payees.pop()!;

    progress(`opening ${CHANNELS + WARMUP_CHANNELS} channels on the embedded ledger…`);
    const owners: Payee[] = [
      ...Array.from({ length: CHANNELS }, (_, i) => payees[i % PAYEES]!),
      ...Array.from({ length: WARMUP_CHANNELS }, () => spare),
    ];
    const channels: Channel[] = [];
    await pool(owners, 8, async (payee) => {
      const payer = randomKeypair();
      const voucherKey = randomKeypair();
      await ledger.faucet(payer.address);
      const { channelId } = await ledger.openChannel({
        payer,
        payee: payee.keys.address,
        deposit: DEPOSIT,
        voucherKey,
      });
      channels.push({
        payee,
        signer: new ChannelSigner({
          channelId,
          deposit: DEPOSIT,
          voucherKey,
          networkPassphrase: info.passphrase,
          channelContract: info.contracts.channel,
          network: info.network,
          payee: payee.keys.address,
          asset: info.contracts.asset,
        }),
      });
      if (channels.length % 50 === 0) progress(`  ${channels.length} channels open`);
    });
    const warmupChannels = channels.filter((c) => c.payee === spare);
    const sessionChannels = channels.filter((c) => c.payee !== spare);

    const terms = (payTo: string): PaymentRequirements => ({
      scheme: 'channel',
      network: info.network,
      asset: info.contracts.asset,
      payTo,
      amount: (SLICE / 2n).toString(),
      unit: 'second',
      maxTimeoutSeconds: 60,
      extra: {
        channelContract: info.contracts.channel,
        minDeposit: '0',
        facilitator: child.url,
        areFeesSponsored: true,
        sliceAmount: SLICE.toString(),
        sliceSeconds: 2,
      },
    });
    const resource = `${child.url}/bench/stream`;
    const post = (p: string, token: string, body: unknown, method = 'POST') =>
      fetch(`${child.url}${p}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });

    /**
     * As a seller's meter: verifies the first slice (a stream's: refused uncharged, 429, when no
     * session could open for it), then opens the session bound to its receipt. `k`: the channel's
     * k-th slice.
     */
    async function openSession(ch: Channel, k: number): Promise<Response> {
      const payTo = ch.payee.keys.address;
      const payload: ChannelPayload = ch.signer.sign(SLICE * BigInt(k));
      const reqs = terms(payTo);
      const answer = await post('/verify', ch.payee.token, {
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: reqs, payload, resource: { url: resource } },
        paymentRequirements: reqs,
        method: 'GET',
      });
      if (answer.status === 429) return answer;
      const verified = await json(answer);
      const receipt = (verified['extra'] as { receipt?: { receipt?: { id?: string } } } | undefined)?.receipt?.receipt
        ?.id;
      if (verified['isValid'] !== true || typeof receipt !== 'string')
        throw new Error(`the first slice was not accepted: ${JSON.stringify(verified)}`);
      return post('/streams', ch.payee.token, {
        channelId: ch.signer.channelId.toString(),
        payTo,
        resource,
        unit: 'second',
        sliceCost: SLICE.toString(),
        initialCharge: SLICE.toString(),
        receiptId: receipt,
      });
    }

    /** PER_CHANNEL sessions on each channel, each really open (200 and its streamId). */
    async function openSessions(on: Channel[], what: string): Promise<Session[]> {
      const out: Session[] = [];
      await pool(on, OPEN_CONCURRENCY, async (ch) => {
        for (let k = 1; k <= PER_CHANNEL; k++) {
          const res = await openSession(ch, k);
          const body = await json(res);
          if (res.status !== 200 || typeof body['streamId'] !== 'string')
            throw new Error(`${what}: session ${out.length + 1} did not open: ${res.status} ${JSON.stringify(body)}`);
          out.push({ id: body['streamId'], payee: ch.payee });
          if (on.length * PER_CHANNEL >= 200 && out.length % 200 === 0) progress(`  ${out.length} sessions open`);
        }
      });
      return out;
    }

    /** A request held open on a connection of its own, from `localAddress`. */
    const hold = (
      o: { method: string; path: string; localAddress: string; headers?: Record<string, string>; body?: string },
      onResponse: (res: http.IncomingMessage, h: Held) => void,
    ): Held => {
      const req = http.request({
        host: base.hostname,
        port,
        method: o.method,
        path: o.path,
        localAddress: o.localAddress,
        agent: false,
        headers: {
          ...o.headers,
          ...(o.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(o.body)) }),
        },
      });
      const h: Held = { req, answered: null, closed: false };
      req.on('response', (res) => {
        h.answered = res.statusCode ?? 0;
        onResponse(res, h);
      });
      req.on('close', () => (h.closed = true));
      req.on('error', () => (h.closed = true));
      req.end(o.body);
      held.push(h);
      return h;
    };

    /** Each session's seller waits for its next voucher (POST /streams/:id/wait), `perAddress` from each address. */
    async function startWaits(of: Session[], subnet: string, perAddress: number): Promise<Held[]> {
      const polls = of.map((s, i) =>
        hold(
          {
            method: 'POST',
            path: `/streams/${s.id}/wait`,
            localAddress: `${subnet}.${1 + Math.floor(i / perAddress)}`,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${s.payee.token}` },
            body: JSON.stringify({ timeoutMs: WAIT_MS }),
          },
          (res) => res.resume(),
        ),
      );
      await Promise.all(
        polls.map(
          (h) =>
            new Promise<void>((resolve, reject) => {
              h.req.once('finish', resolve);
              h.req.once('error', reject);
            }),
        ),
      );
      return polls;
    }

    /** `n` event streams (GET /events), SSE_PER_ADDRESS from each address, each read as it comes. */
    let eventBytes = 0;
    const openStreams = (n: number, subnet: string): Promise<Held[]> =>
      Promise.all(
        Array.from(
          { length: n },
          (_, j) =>
            new Promise<Held>((resolve, reject) => {
              hold(
                { method: 'GET', path: '/events', localAddress: `${subnet}.${1 + Math.floor(j / SSE_PER_ADDRESS)}` },
                (res, h) => {
                  if (res.statusCode !== 200) return reject(new Error(`event stream ${j + 1}: ${res.statusCode}`));
                  // Read everything, as a live client does: a stalled reader is dropped (SSE_STALL_SECONDS).
                  res.on('data', (chunk: Buffer) => (eventBytes += chunk.length));
                  res.once('data', () => resolve(h));
                },
              ).req.once('error', reject);
            }),
        ),
      );

    /** Ends every session as its seller does; returns how many were no longer open (an open one answers 'done'). */
    async function endSessions(of: Session[]): Promise<number> {
      let notOpen = 0;
      await pool(of, OPEN_CONCURRENCY, async (s) => {
        const res = await post(`/streams/${s.id}`, s.payee.token, { reason: 'done', units: 0 }, 'DELETE');
        const body = await json(res);
        if (res.status !== 200 || body['reason'] !== 'done') notOpen++;
      });
      return notOpen;
    }

    const connectionsAtLeast = async (n: number, what: string) => {
      for (const end = performance.now() + 5000; serverConnections(pid, port) < n;) {
        if (performance.now() > end)
          throw new Error(`the facilitator holds ${serverConnections(pid, port)} connections, not ${n}: ${what}`);
        await sleep(50);
      }
    };
    const connectionsAtMost = async (n: number) => {
      for (const end = performance.now() + 5000; serverConnections(pid, port) > n && performance.now() < end;)
        await sleep(50);
    };

    // Warm-up: every path the measurement takes, once over (its code compiled, its caches filled),
    // on the spare payee's channels; then all of it is ended and closed.
    progress('warm-up: sessions, long polls and event streams opened and closed…');
    const warm = await openSessions(warmupChannels, 'warm-up');
    const warmPolls = await startWaits(warm, '127.0.4', POLLS_PER_ADDRESS);
    const warmStreams = await openStreams(SSE_PER_ADDRESS, '127.0.5');
    await sleep(500);
    for (const h of warmPolls) h.req.destroy();
    if ((await endSessions(warm)) > 0) throw new Error('warm-up sessions were no longer open when ended');
    for (const h of warmStreams) h.req.destroy();
    held.length = 0;
    await connectionsAtMost(0);
    await sleep(1000);
    const rssIdleMb = await sampleRss(pid);
    progress(`idle (channels open, warmed up, nothing held): RSS ${rssIdleMb.toFixed(1)} MB`);

    progress(`opening ${SESSIONS} stream sessions (${PER_CHANNEL} per channel, ${PAYEES} payees)…`);
    const firstOpened = performance.now();
    const sessions = await openSessions(sessionChannels, 'at the caps');
    if (sessions.length !== SESSIONS) throw new Error(`${sessions.length} sessions open, not ${SESSIONS}`);
    const rssSessionsMb = await sampleRss(pid);
    progress(`${SESSIONS} sessions open: RSS ${rssSessionsMb.toFixed(1)} MB`);

    // Every session's seller waits for its next voucher: never idle, and the heaviest state a session can be in.
    if (performance.now() - firstOpened > IDLE_WITHIN_MS)
      throw new Error('opening took so long the first sessions may have idled out: nothing is measured');
    progress(`${SESSIONS} long polls (POST /streams/:id/wait, ${WAIT_MS / 1000} s)…`);
    const waitsFrom = performance.now();
    const polls = await startWaits(sessions, '127.0.1', POLLS_PER_ADDRESS);
    await connectionsAtLeast(SESSIONS, 'the long polls');
    await sleep(500); // each wait's first read and touch
    const rssWaitingMb = await sampleRss(pid);
    progress(`${SESSIONS} long polls in progress: RSS ${rssWaitingMb.toFixed(1)} MB`);

    progress(`${EVENT_STREAMS} event streams (GET /events)…`);
    const streams = await openStreams(EVENT_STREAMS, '127.0.2');
    await connectionsAtLeast(SESSIONS + EVENT_STREAMS, 'the long polls and the event streams');
    await sleep(500);
    const rssHeldMb = await sampleRss(pid);

    // The facilitator confirms both caps are full: one more of each is refused by the total cap.
    const more = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.get({ host: base.hostname, port, path: '/events', localAddress: '127.0.3.1', agent: false });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    if (more.status !== 429 || !more.body.includes(`at most ${EVENT_STREAMS} open event streams`))
      throw new Error(
        `the ${EVENT_STREAMS + 1}st event stream was not refused by the total cap: ${more.status} ${more.body}`,
      );
    // A warm-up channel: its sessions ended, its payee has none open, so only the total cap can refuse.
    const extra = await openSession(warmupChannels[0]!, PER_CHANNEL + 1);
    const extraBody = await json(extra);
    if (extra.status !== 429 || !String(extraBody['message']).includes(`${SESSIONS} sessions are open`))
      throw new Error(
        `the ${SESSIONS + 1}st session was not refused by the total cap: ${extra.status} ${JSON.stringify(extraBody)}`,
      );
    const early = polls.filter((h) => h.answered !== null || h.closed).length;
    const dropped = streams.filter((h) => h.closed).length;
    if (early > 0) throw new Error(`${early} long polls were answered or closed while held`);
    if (dropped > 0) throw new Error(`${dropped} event streams were closed while held`);
    if (performance.now() - waitsFrom > HELD_WITHIN_MS)
      throw new Error('holding took so long the waits may have run out: the figures are not of held sessions');
    progress(
      `held, and both caps confirmed full by the facilitator (${(eventBytes / 1024).toFixed(0)} KiB of events read)`,
    );

    // Clean up: the sellers hang up their waits (the sessions stay open), then end every session;
    // each must still have been open ('done', not TIMEOUT or ABORTED).
    for (const h of polls) h.req.destroy();
    const notOpen = await endSessions(sessions);
    if (notOpen > 0) throw new Error(`${notOpen} sessions were no longer open when ended`);
    for (const h of streams) h.req.destroy();
    const rssPeakMb = procMb(pid, 'VmHWM');
    return {
      sessions: sessions.length,
      eventStreams: streams.length,
      rssIdleMb,
      rssHeldMb,
      limitMb: LIMIT_MB,
      rssSessionsMb,
      rssWaitingMb,
      rssPeakMb,
      longPolls: polls.length,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    for (const h of held) h.req.destroy();
    await child.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');
const mb = (n: number) => `${Math.round(n)} MB`;

/** The lines the bench prints. */
export function memoryLines(m: MemoryFigures): string[] {
  const step = (from: number, to: number) => `${to >= from ? '+' : '−'}${Math.abs(Math.round(to - from))} MB`;
  return [
    `memory at the caps: ${fmt(m.sessions)} stream sessions + ${fmt(m.eventStreams)} event streams held: RSS ${mb(m.rssHeldMb)} (idle ${mb(m.rssIdleMb)}) — limit ${mb(m.limitMb)} (${(m.rssHeldMb / m.limitMb).toFixed(2)} of it)`,
    `    each session with its seller's long poll in progress; caps as the spec sets them, none raised; peak over the run ${mb(m.rssPeakMb)}; ${m.seconds.toFixed(0)} s`,
    `    RSS steps: ${step(m.rssIdleMb, m.rssSessionsMb)} opening ${fmt(m.sessions)} sessions, ${step(m.rssSessionsMb, m.rssWaitingMb)} with ${fmt(m.longPolls)} long polls, ${step(m.rssWaitingMb, m.rssHeldMb)} with ${fmt(m.eventStreams)} event streams (garbage V8 has not collected yet included)`,
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const m = await memoryAtCaps();
  for (const line of memoryLines(m)) console.log(line);
  if (m.rssHeldMb > m.limitMb) process.exitCode = 1;
}
