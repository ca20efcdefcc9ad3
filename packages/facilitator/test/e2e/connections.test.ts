// Idle connections must not exhaust the server. Connections are capped per client
// address and in total (a trusted proxy is capped only in total); the connection over a cap gets a
// 429 with the error body and Retry-After, then is closed; a connection that sends no request,
// or idles after one, is closed after CONN_IDLE_SECONDS. Other addresses come from 127.0.0.2…,
// while the harness's own requests use 127.0.0.1.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

interface Conn {
  socket: net.Socket;
  /** What the server sent, so far. */
  received(): string;
  closed(): boolean;
}

const open: net.Socket[] = [];

/** A raw connection from `from` that sends nothing (unless told to). */
function connect(url: string, from: string, send?: string): Promise<Conn> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress: from });
    open.push(socket);
    let out = '';
    let closed = false;
    socket.on('data', (c: Buffer) => (out += c.toString()));
    socket.on('close', () => (closed = true));
    socket.on('error', () => {});
    socket.once('connect', () => {
      if (send) socket.write(send);
      resolve({ socket, received: () => out, closed: () => closed });
    });
    socket.once('error', reject);
  });
}

/** Opens `n` idle connections from `from`; resolves once the server had time to refuse any. */
async function idle(url: string, from: string, n: number): Promise<Conn[]> {
  const conns: Conn[] = [];
  for (let i = 0; i < n; i++) conns.push(await connect(url, from));
  await settle();
  return conns;
}

const settle = () => new Promise((r) => setTimeout(r, 300));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25)))
    if (check()) return true;
  return check();
}

/** GET with node:http from a given local address, on a fresh connection. */
function get(url: string, from: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { localAddress: from, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

/** `svc start` as a child whose open-file limit is `openFiles` (a usual default); resolves its URL and a stop(). */
async function startLimited(
  openFiles: number,
  env: Record<string, string>,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const svc = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/svc.cjs');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conn-'));
  const proc = spawn('bash', ['-c', `ulimit -n ${openFiles} && exec "$0" "$@"`, process.execPath, svc, 'start'], {
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', DEMO: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc did not start:\n${out}`)), 30_000);
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`svc exited with ${code}:\n${out}`)));
  });
  return {
    url,
    stop: async () => {
      if (proc.exitCode === null) await new Promise((r) => (proc.once('exit', r), proc.kill('SIGKILL')));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function expectRefusal(raw: string, why: RegExp): void {
  expect(raw).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
  const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)];
  expect(head).toMatch(/\r\nretry-after: [1-9][0-9]*\r\n/i);
  expect(head).toMatch(/\r\ncontent-type: application\/json/i);
  expect(JSON.parse(body)).toMatchObject({
    error: 'RATE_LIMITED',
    source: 'facilitator',
    message: expect.stringMatching(why),
  });
}

afterEach(() => {
  for (const s of open.splice(0)) s.destroy();
});

describe('connections per address', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CONN_MAX_PER_IP: '20', CONN_MAX_TOTAL: '500', CONN_IDLE_SECONDS: '30' });
  });
  afterAll(() => h.close());

  it('refuses the connection past the cap with 429, the error body and Retry-After, then closes it; other addresses are served', async () => {
    const held = await idle(h.url, '127.0.0.2', 20);
    expect(held.every((c) => !c.closed() && c.received() === '')).toBe(true);
    const over = await connect(h.url, '127.0.0.2', 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await until(() => over.closed(), 3000)).toBe(true);
    expectRefusal(over.received(), /127\.0\.0\.2.*at most 20 open connections per address/);
    // An HTTP client reads that answer like any other (no reset).
    const refused = await get(`${h.url}/health`, '127.0.0.2');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'RATE_LIMITED' });
    // Another address is served; so is this one once one of its connections goes.
    expect((await get(`${h.url}/health`, '127.0.0.3')).status).toBe(200);
    held[0]!.socket.destroy();
    await settle();
    expect((await get(`${h.url}/health`, '127.0.0.2')).status).toBe(200);
  });

  it('counts the connections of a trusted proxy only in total', async () => {
    const proxied = await startHarness({
      CONN_MAX_PER_IP: '5',
      CONN_MAX_TOTAL: '500',
      CONN_IDLE_SECONDS: '30',
      TRUST_PROXY: '127.0.0.2',
    });
    try {
      const fromProxy = await idle(proxied.url, '127.0.0.2', 12);
      expect(fromProxy.every((c) => !c.closed())).toBe(true);
      expect((await get(`${proxied.url}/health`, '127.0.0.2')).status).toBe(200);
      await idle(proxied.url, '127.0.0.3', 5);
      expect((await get(`${proxied.url}/health`, '127.0.0.3')).status).toBe(429);
    } finally {
      for (const s of open.splice(0)) s.destroy();
      await proxied.close();
    }
  });
});

describe('with the defaults and an open-file limit of 1,024', () => {
  it('1,100 idle sockets from one address leave everyone else served', async () => {
    const svc = await startLimited(1024, {});
    try {
      const attempts = Array.from({ length: 1100 }, () =>
        Promise.race([
          connect(svc.url, '127.0.0.2').then(
            (c) => c,
            () => null,
          ),
          new Promise<null>((r) => setTimeout(() => r(null), 5000)),
        ]),
      );
      const conns = (await Promise.all(attempts)).filter((c): c is Conn => c !== null);
      await settle();
      const held = conns.filter((c) => !c.closed());
      console.log(`1,100 idle sockets from one address: ${conns.length} connected, ${held.length} still open`);
      const health = await Promise.race([
        get(`${svc.url}/health`, '127.0.0.3').catch((err: Error) => ({ status: 0, body: err.message })),
        new Promise<{ status: number; body: string }>((r) =>
          setTimeout(() => r({ status: 0, body: 'no answer in 5 s' }), 5000),
        ),
      ]);
      expect(health).toMatchObject({ status: 200 });
      expect(held.length).toBeLessThanOrEqual(128);
    } finally {
      for (const s of open.splice(0)) s.destroy();
      await svc.stop();
    }
  });
});

describe('connections in total', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CONN_MAX_PER_IP: '10', CONN_MAX_TOTAL: '25', CONN_IDLE_SECONDS: '30' });
  });
  afterAll(() => h.close());

  it('refuses any address once the total is reached, and serves again when connections go', async () => {
    const a = await idle(h.url, '127.0.0.2', 10);
    const b = await idle(h.url, '127.0.0.3', 10);
    expect([...a, ...b].every((c) => !c.closed())).toBe(true);
    // 127.0.0.4 is far from its own cap: what refuses it is the total (the harness may hold a connection or two).
    const c: Conn[] = [];
    let refused: Conn | undefined;
    for (let i = 0; i < 6 && !refused; i++) {
      const conn = await connect(h.url, '127.0.0.4', 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      if (await until(() => conn.received().includes('\r\n\r\n{'), 500))
        refused = conn.received().startsWith('HTTP/1.1 429') ? conn : undefined;
      c.push(conn);
    }
    expect(refused).toBeDefined();
    expect(c.length).toBeLessThanOrEqual(6);
    expectRefusal(refused!.received(), /at most 25 open connections in all/);
    for (const conn of a.slice(0, 5)) conn.socket.destroy();
    await settle();
    expect((await get(`${h.url}/health`, '127.0.0.5')).status).toBe(200);
  });
});

describe('idle connections', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CONN_IDLE_SECONDS: '1' });
  });
  afterAll(() => h.close());

  it('closes a connection that sends no request, and one that idles after its answer; an event stream stays open', async () => {
    const silent = await connect(h.url, '127.0.0.2');
    const answered = await connect(h.url, '127.0.0.2', 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const stream = await connect(h.url, '127.0.0.3', 'GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
    const t0 = Date.now();
    expect(await until(() => silent.closed() && answered.closed(), 5000)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(answered.received()).toMatch(/^HTTP\/1\.1 200 /);
    // The stream outlives the idle timeout and still carries what happens next.
    await new Promise((r) => setTimeout(r, 2500));
    expect(stream.closed()).toBe(false);
    await h.f.services.events.commit([
      {
        op: 'event',
        event: { type: 'test.after-idle', source: 'facilitator', ts: new Date().toISOString(), data: {} },
      },
    ]);
    expect(await until(() => stream.received().includes('event: test.after-idle'), 3000)).toBe(true);
  });
});
