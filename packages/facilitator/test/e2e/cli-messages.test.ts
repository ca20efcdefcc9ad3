// What `svc pay` and `svc stream` say when something is not as expected, run as a
// user runs them: the real `svc` command against real servers. Each message names what went wrong
// and what to do — never `fetch failed`, a raw parser error, or a bare status.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeJsonHeader } from '@svc/core';
import { spawnSvc, startChild } from '../helpers/process.js';
import type { Child } from '../helpers/process.js';

interface Ran {
  code: number | null;
  out: string;
}

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  dirs.push(d);
  return d;
};

/** Runs svc to its end; with `killAfterMs`, one still running then (it started a server) is killed: code null. */
function svc(args: string[], env: Record<string, string> = {}, killAfterMs = 0): Promise<Ran> {
  const proc = spawnSvc(args, { SVC_WALLET: path.join(tmp(), 'wallet.json'), ...env });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const timer = killAfterMs > 0 ? setTimeout(() => proc.kill('SIGKILL'), killAfterMs) : undefined;
  return new Promise((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

/** Runs @svc/meter's own `svc-seller` command (its bin) to its end. */
function svcSeller(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const bin = fileURLToPath(new URL('../../../meter/bin/svc-seller.js', import.meta.url));
  const proc = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, out })));
}

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

describe('svc pay and svc stream tell the user what happened', () => {
  let facilitator: Child;
  let plain: http.Server;
  let plainUrl: string;

  beforeAll(async () => {
    facilitator = await startChild({
      DATA_DIR: tmp(),
      FACILITATOR_SECRET: randomBytes(32).toString('hex'),
      DEMO_SEED: '0',
    });
    // A server that needs no payment, and an x402 v2 seller that takes only the `exact` scheme.
    plain = http.createServer((req, res) => {
      if (req.url === '/exact') {
        const required = {
          x402Version: 2,
          error: 'PAYMENT-SIGNATURE header is required',
          resource: { url: 'http://x/exact' },
          accepts: [
            {
              scheme: 'exact',
              network: 'eip155:84532',
              asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
              amount: '1000',
              payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
              maxTimeoutSeconds: 60,
              extra: { name: 'USDC', version: '2' },
            },
          ],
        };
        res.writeHead(402, { 'content-type': 'application/json', 'payment-required': encodeJsonHeader(required) });
        res.end(JSON.stringify(required));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('free content');
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    plainUrl = `http://127.0.0.1:${(plain.address() as net.AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await facilitator?.kill('SIGKILL');
    await new Promise((r) => plain?.close(r));
  });

  it('a closed port: names the host and port that refused', async () => {
    const port = await closedPort();
    const ran = await svc(['pay', `http://127.0.0.1:${port}/book`]);
    expect(ran.code).toBe(1);
    expect(ran.out).toContain(`could not connect to 127.0.0.1:${port}`);
    expect(ran.out).toMatch(/refused/);
    expect(ran.out).not.toContain('fetch failed');
  });

  it('a URL that needs no payment: says so, and that nothing was paid', async () => {
    const ran = await svc(['pay', `${plainUrl}/free`]);
    expect(ran.out).toContain('free content');
    expect(ran.out).toMatch(/answered 200 without asking for payment: nothing paid/);
    expect(ran.code).toBe(1);
  });

  it('a seller offering only another scheme: names the schemes it offers, and the schemes svc pays', async () => {
    const ran = await svc(['pay', `${plainUrl}/exact`]);
    expect(ran.code).toBe(1);
    expect(ran.out).toMatch(
      /offers the x402 scheme exact \(on eip155:84532\); svc pays the `channel` and `batch-settlement` schemes/,
    );
  });

  it('svc stream of a POST-only stream without --post: hints at --post', async () => {
    const ran = await svc(['stream', `${facilitator.url}/demo/chat`]);
    expect(ran.code).toBe(1);
    expect(ran.out).toMatch(/405/); // the route takes POST only
    expect(ran.out).toMatch(/--post/);
  });

  it('svc stream --post with a body that is not JSON: says --post takes JSON, before paying anything', async () => {
    const ran = await svc(['stream', `${facilitator.url}/demo/chat`, '--post', 'notjson']);
    expect(ran.code).toBe(1);
    expect(ran.out).toMatch(/--post takes a JSON body/);
    expect(ran.out).not.toMatch(/Unexpected token|SyntaxError/);
  });

  it('svc help names SVC_WALLET', async () => {
    const ran = await svc(['help']);
    expect(ran.code).toBe(0);
    expect(ran.out).toMatch(/SVC_WALLET/);
  });

  it('svc help gives every flag svc stream takes: --post and --events', async () => {
    const ran = await svc(['help']);
    expect(ran.code).toBe(0);
    const stream = ran.out.slice(ran.out.indexOf('stream <url>'), ran.out.indexOf('seller init'));
    expect(stream).toMatch(/\[--post JSON\]/);
    expect(stream).toMatch(/\[--events\]/);
  });

  it('svc stream of the chat shows the answer as it grows, and explains a charge per started slice', async () => {
    const ran = await svc(['stream', `${facilitator.url}/demo/chat`, '--post', '{"prompt":"hello"}']);
    expect(ran.code, ran.out).toBe(0);
    // The text itself, not one JSON line per token.
    expect(ran.out).not.toMatch(/token\s+\{"index"/);
    const text = ran.out
      .split('\n')
      .filter((l) => !/^\s*(ended|charged| {2})/.test(l))
      .join('\n');
    expect(text.split(/\s+/).filter(Boolean).length).toBeGreaterThan(20);
    const charge =
      /charged (\d+) for (\d+) tokens: the price is per started slice of (\d+) tokens \((\d+) slices × (\d+)\)/.exec(
        ran.out,
      );
    expect(charge, ran.out).not.toBeNull();
    const [, charged, tokens, sliceTokens, slices, sliceAmount] = charge!.map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    expect(slices).toBe(Math.ceil(tokens / sliceTokens));
    expect(charged).toBe(slices * sliceAmount);
  }, 60_000);
});

// `svc start` and `svc ledger` are configured by environment variables. An argument used to be
// ignored: `svc start --help` started a facilitator, and `svc start --port 4099` one on port 4020.
describe('svc start and svc ledger take no arguments', () => {
  const ran = (args: string[]) => svc(args, { PORT: '0', DATA_DIR: tmp() }, 20_000);

  it.each([['start'], ['ledger']])(
    'svc %s --help prints its usage and the variables it reads, and starts nothing',
    async (command) => {
      const out = await ran([command, '--help']);
      expect(out.code, out.out).toBe(0);
      expect(out.out).toContain(`svc ${command}`);
      expect(out.out).toMatch(/PORT/);
      expect(out.out).toMatch(/DATA_DIR/);
      expect(out.out).not.toMatch(/listening on/);
    },
    30_000,
  );

  it("svc ledger --help gives the ledger's own defaults (PORT 4021, not the facilitator's 4020)", async () => {
    const out = await ran(['ledger', '--help']);
    expect(out.code, out.out).toBe(0);
    expect(out.out).toMatch(/^ {2}PORT +4021$/m);
    expect(out.out).toMatch(/^ {2}HOST +127\.0\.0\.1$/m);
    expect(out.out).toMatch(/^ {2}DATA_DIR +\.\/data$/m);
    expect(out.out).toMatch(/^ {2}LEDGER_SECONDS +5$/m);
    // The configuration table of docs/operating.md is the facilitator's (PORT 4020): not the ledger's defaults.
    expect(out.out).not.toMatch(/configuration table/);
  }, 30_000);

  it('svc start --help: the package README it points at (which ships in the tarball) and docs/operating.md each have a row for every variable it lists', async () => {
    const out = await ran(['start', '--help']);
    expect(out.code, out.out).toBe(0);
    expect(out.out).toContain('node_modules/@svc/facilitator/README.md');
    const listed = out.out
      .slice(out.out.indexOf('\n\n', out.out.indexOf('environment variables')))
      .match(/\b[A-Z][A-Z0-9_]+\b/g)!;
    expect(listed).toContain('MCP_ALLOWED_ORIGINS');
    for (const [file, end] of [
      ['../../README.md', undefined],
      ['../../../../docs/operating.md', '## Endpoints'],
    ] as const) {
      const page = fs.readFileSync(fileURLToPath(new URL(file, import.meta.url)), 'utf8');
      expect(page, file).toContain('## Configuration');
      const from = page.indexOf('## Configuration');
      const section = page.slice(from, end === undefined ? undefined : page.indexOf(end, from));
      const rows = section
        .split('\n')
        .filter((l) => l.startsWith('| `'))
        .map((l) => l.split('|')[1]!);
      const inRows = new Set(rows.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)));
      expect(
        listed.filter((name) => !inRows.has(name)),
        file,
      ).toEqual([]);
    }
  }, 30_000);

  it('svc start --port 4099: refused, with the variable to set instead', async () => {
    const out = await ran(['start', '--port', '4099']);
    expect(out.code, out.out).toBe(2);
    expect(out.out).toContain('PORT=4099 svc start');
    expect(out.out).not.toMatch(/listening on/);
    expect(out.out).not.toMatch(/\n\s+at /); // no stack trace
  }, 30_000);

  it('svc start --data-dir=/x: the same, for a flag written with =', async () => {
    const out = await ran(['start', '--data-dir=/srv/svc']);
    expect(out.code, out.out).toBe(2);
    expect(out.out).toContain('DATA_DIR=/srv/svc svc start');
  }, 30_000);

  it('svc ledger --seconds 2: refused, and an unknown flag names no variable it does not read', async () => {
    const out = await ran(['ledger', '--seconds', '2']);
    expect(out.code, out.out).toBe(2);
    expect(out.out).toMatch(/svc: ledger takes no arguments/);
    expect(out.out).not.toMatch(/SECONDS=2/);
    expect(out.out).toMatch(/LEDGER_SECONDS/);
    expect(out.out).not.toMatch(/listening on/);
  }, 30_000);
});

// The buyer's and the seller's commands refused an unknown flag only by accident, if at all:
// `svc pay <url> 1 --bogus` paid, `svc seller init --bogus` wrote a key.
describe('svc pay, svc stream and svc seller refuse what they do not take, before doing anything', () => {
  it.each([
    [['pay', 'http://127.0.0.1:9/book', '1', '--bogus'], '--bogus'],
    [['pay', 'http://127.0.0.1:9/book', '1', '2'], '"2"'],
    [['stream', 'http://127.0.0.1:9/chat', '--bogus'], '--bogus'],
    [['stream', 'http://127.0.0.1:9/chat', 'extra'], '"extra"'],
  ])('svc %j: exit 2, names %s, opens no wallet', async (args, named) => {
    const wallet = path.join(tmp(), 'wallet.json');
    const out = await svc(args, { SVC_WALLET: wallet });
    expect(out.code, out.out).toBe(2);
    expect(out.out).toContain(named);
    expect(out.out).toMatch(/usage: svc (pay|stream)/);
    expect(fs.existsSync(wallet)).toBe(false);
    expect(out.out).not.toMatch(/\n\s+at /);
  });

  it.each([[['seller', 'init', '--bogus']], [['seller', 'token', '--dayz', '3']], [['seller', 'init', 'now']]])(
    'svc %j: exit 2, and no key is written',
    async (args) => {
      const key = path.join(tmp(), 'seller.json');
      const out = await svc(args, { SVC_SELLER: key, SVC_FACILITATOR: 'http://127.0.0.1:9' });
      expect(out.code, out.out).toBe(2);
      expect(out.out).toMatch(/usage: svc-seller/);
      expect(fs.existsSync(key)).toBe(false);
    },
  );

  it.each([['--help'], ['-h'], ['help']])(
    'svc-seller %s prints its usage and exits 0, writing no key',
    async (flag) => {
      const key = path.join(tmp(), 'seller.json');
      for (const out of [
        await svcSeller([flag], { SVC_SELLER: key }),
        await svc(['seller', flag], { SVC_SELLER: key }),
      ]) {
        expect(out.code, out.out).toBe(0);
        expect(out.out).toMatch(/usage: svc-seller/);
        expect(out.out).toMatch(/token \[--days N\]/);
        expect(out.out).not.toMatch(/unknown command/);
      }
      expect(fs.existsSync(key)).toBe(false);
    },
  );

  it('svc-seller --bogus: still exit 2, naming it', async () => {
    const out = await svcSeller(['--bogus'], { SVC_SELLER: path.join(tmp(), 'seller.json') });
    expect(out.code, out.out).toBe(2);
    expect(out.out).toContain('unknown command "--bogus"');
    expect(out.out).toMatch(/usage: svc-seller/);
  });

  it('svc seller token --days=400 takes its flag written with =, and checks it', async () => {
    const key = path.join(tmp(), 'seller.json');
    const init = await svc(['seller', 'init'], { SVC_SELLER: key });
    expect(init.code, init.out).toBe(0);
    const out = await svc(['seller', 'token', '--days=400'], {
      SVC_SELLER: key,
      SVC_FACILITATOR: 'http://127.0.0.1:9',
    });
    expect(out.code, out.out).toBe(1);
    expect(out.out).toMatch(/--days must be a whole number from 1 to 366/);
  });
});
