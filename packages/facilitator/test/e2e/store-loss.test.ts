// The ledger is the floor of what was paid. A facilitator whose store was lost (an
// empty file in its place) or put back to an older copy rebuilt a channel from the ledger with
// `claimed` at the ledger's figure but `lastAccepted` behind it, and took a replay of a voucher the
// ledger had already paid out — a fresh signed receipt the seller served and could never be paid
// for. Now nothing at or below what the ledger shows claimed is accepted again, at start and on a
// channel's lazy load, and the books still add up: earned = settled + receivable + lost.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import type { ChannelPayload } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { LocalLedgerClient } from '@svc/sdk';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';
import type { Facilitator } from '../../src/facilitator.js';
import { SQLITE_FILE_NAME } from '../../src/store/open-store.js';
import { openChannel } from '../helpers/open-channel.js';
import type { OpenedChannel } from '../helpers/open-channel.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import { startChild } from '../helpers/process.js';
import type { Child } from '../helpers/process.js';

const PRICE = 5000n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Running {
  f: Facilitator;
  url: string;
}

async function start(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LEDGER_SECONDS: '1',
    DEMO: 'off',
    LOG_LEVEL: 'fatal',
    CLAIM_INTERVAL_SECONDS: '3600',
    MANUAL_CLAIM_COOLDOWN_SECONDS: '0',
    ...env,
  });
  const f = await createFacilitator({ config, watchPollMs: 50 });
  return { f, url: await f.listen() };
}

async function verify(r: Running, payTo: string, payload: ChannelPayload) {
  const info = r.f.ledgerInfo;
  const reqs = {
    scheme: 'channel',
    network: info.network,
    asset: info.contracts.asset,
    payTo,
    amount: PRICE.toString(),
    unit: 'request',
    maxTimeoutSeconds: 60,
    extra: { channelContract: info.contracts.channel, minDeposit: '0', facilitator: r.url, areFeesSponsored: true },
  };
  const res = await fetch(`${r.url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: reqs, payload, resource: { url: `${r.url}/paid` } },
      paymentRequirements: reqs,
      method: 'GET',
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Pays `from`+PRICE … `to` in steps of PRICE, each accepted. */
async function payUpTo(r: Running, payTo: string, ch: OpenedChannel, from: bigint, to: bigint): Promise<void> {
  for (let c = from + PRICE; c <= to; c += PRICE)
    expect((await verify(r, payTo, ch.signer.sign(c))).body['isValid'], `voucher ${c}`).toBe(true);
}

async function claim(r: Running, ch: OpenedChannel, cumulative: bigint): Promise<void> {
  const res = await fetch(`${r.url}/channels/${ch.channelId}/claim`, { method: 'POST' });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ cumulative: cumulative.toString() });
}

async function revenue(r: Running, payTo: string) {
  const res = await fetch(`${r.url}/sellers/${payTo}/revenue`);
  expect(res.status).toBe(200);
  const { totals } = (await res.json()) as { totals: Record<string, string> };
  return {
    earned: BigInt(totals['earned']!),
    settled: BigInt(totals['settled']!),
    receivable: BigInt(totals['receivable']!),
    lost: BigInt(totals['lost']!),
  };
}

function removeStore(dataDir: string): void {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(dataDir, SQLITE_FILE_NAME + suffix), { force: true });
}

function copyStore(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const suffix of ['', '-wal', '-shm']) {
    const file = path.join(from, SQLITE_FILE_NAME + suffix);
    if (fs.existsSync(file)) fs.copyFileSync(file, path.join(to, SQLITE_FILE_NAME + suffix));
  }
}

function restoreStore(copy: string, dataDir: string): void {
  removeStore(dataDir);
  copyStore(copy, dataDir);
}

describe('a lost or restored SQLite store (embedded ledger)', () => {
  const dirs: string[] = [];
  const tmp = (name: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-store-loss-${name}-`));
    dirs.push(dir);
    return dir;
  };
  let running: Running | null = null;
  afterAll(async () => {
    await running?.f.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an empty store in place of the old one: no voucher at or below the ledger’s claimed amount is accepted', async () => {
    const dataDir = tmp('empty');
    const payTo = randomKeypair().address;
    running = await start(dataDir);
    const ledger = new LocalLedgerClient(`${running.url}/ledger`);
    const ch = await openChannel(ledger, { payee: payTo, deposit: 1_000_000n });
    await payUpTo(running, payTo, ch, 0n, 50_000n);
    await claim(running, ch, 50_000n);
    await running.f.close();
    running = null;

    removeStore(dataDir);
    running = await start(dataDir);
    for (const replay of [5_000n, 30_000n, 50_000n]) {
      const answer = await verify(running, payTo, ch.signer.sign(replay));
      expect(answer.body, `replay of ${replay}`).toMatchObject({
        isValid: false,
        invalidReason: 'VOUCHER_NOT_INCREASING',
      });
    }
    const view = (await (await fetch(`${running.url}/channels/${ch.channelId}`)).json()) as Record<string, string>;
    expect(view).toMatchObject({ claimed: '50000', lastAccepted: '50000', unclaimed: '0' });
    // The next payment pays on top of what the ledger shows.
    const next = await verify(running, payTo, ch.signer.sign(55_000n));
    expect(next.body).toMatchObject({ isValid: true, extra: { receipt: { delta: '5000', cumulative: '55000' } } });
    const books = await revenue(running, payTo);
    expect(books.earned).toBe(books.settled + books.receivable + books.lost);
    expect(books).toMatchObject({ earned: 55_000n, settled: 50_000n, receivable: 5_000n });
    await running.f.close();
    running = null;
  });

  it('an older copy of the store put back: the vouchers between the copy and the ledger’s claim are refused', async () => {
    const dataDir = tmp('older');
    const copy = tmp('older-copy');
    const payTo = randomKeypair().address;
    running = await start(dataDir);
    const ledger = new LocalLedgerClient(`${running.url}/ledger`);
    const ch = await openChannel(ledger, { payee: payTo, deposit: 1_000_000n });
    // A second channel the copy never saw opened.
    await payUpTo(running, payTo, ch, 0n, 20_000n);
    await running.f.close();
    copyStore(dataDir, copy);

    running = await start(dataDir);
    const later = await openChannel(new LocalLedgerClient(`${running.url}/ledger`), {
      payee: payTo,
      deposit: 1_000_000n,
    });
    await payUpTo(running, payTo, ch, 20_000n, 50_000n);
    await payUpTo(running, payTo, later, 0n, 10_000n);
    await claim(running, ch, 50_000n);
    await claim(running, later, 10_000n);
    await running.f.close();
    running = null;

    restoreStore(copy, dataDir);
    running = await start(dataDir);
    for (const replay of [25_000n, 30_000n, 50_000n])
      expect((await verify(running, payTo, ch.signer.sign(replay))).body, `replay of ${replay}`).toMatchObject({
        isValid: false,
        invalidReason: 'VOUCHER_NOT_INCREASING',
      });
    expect((await verify(running, payTo, later.signer.sign(10_000n))).body).toMatchObject({
      isValid: false,
      invalidReason: 'VOUCHER_NOT_INCREASING',
    });
    expect((await verify(running, payTo, ch.signer.sign(55_000n))).body).toMatchObject({ isValid: true });
    expect((await verify(running, payTo, later.signer.sign(15_000n))).body).toMatchObject({ isValid: true });
    const books = await revenue(running, payTo);
    expect(books.earned).toBe(books.settled + books.receivable + books.lost);
    expect(books).toMatchObject({ earned: 70_000n, settled: 60_000n, receivable: 10_000n });
    await running.f.close();
    running = null;
  });
});

describe('an older copy of the store put back while the ledger does not answer (LEDGER_URL)', () => {
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-loss-ledger-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-loss-down-'));
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-loss-down-copy-'));
  let server: LedgerServer | null = null;
  let running: Running | null = null;
  afterAll(async () => {
    await running?.f.close();
    await server?.close();
    for (const dir of [ledgerDir, dataDir, copy]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('takes no voucher on the restored channels until it has reconciled with the ledger, and says so', async () => {
    server = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    const env = { LEDGER_URL: server.url };
    const payTo = randomKeypair().address;
    running = await start(dataDir, env);
    const ledger = new LocalLedgerClient(server.url);
    const ch = await openChannel(ledger, { payee: payTo, deposit: 1_000_000n });
    await payUpTo(running, payTo, ch, 0n, 20_000n);
    await running.f.close();
    copyStore(dataDir, copy);
    running = await start(dataDir, env);
    await payUpTo(running, payTo, ch, 20_000n, 50_000n);
    await claim(running, ch, 50_000n);
    await sleep(300); // the ledger's time is saved for the restart
    await running.f.close();
    running = null;

    restoreStore(copy, dataDir);
    const port = Number(new URL(server.url).port);
    await server.close();
    server = null;
    running = await start(dataDir, env);
    const health = (await (await fetch(`${running.url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'degraded', reconciliation: { state: 'waiting-for-ledger' } });
    const refused = await verify(running, payTo, ch.signer.sign(30_000n));
    expect({ status: refused.status, error: refused.body['error'] }).toEqual({
      status: 503,
      error: 'LEDGER_UNAVAILABLE',
    });

    server = await startLedgerServer({ port, dataDir: ledgerDir, ledgerSeconds: 1 });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const h = (await (await fetch(`${running.url}/health`)).json()) as { reconciliation: { state: string } };
      if (h.reconciliation.state === 'done') break;
      if (Date.now() > deadline) throw new Error('the facilitator did not reconcile');
      await sleep(100);
    }
    expect((await verify(running, payTo, ch.signer.sign(30_000n))).body).toMatchObject({
      isValid: false,
      invalidReason: 'VOUCHER_NOT_INCREASING',
    });
    expect((await verify(running, payTo, ch.signer.sign(55_000n))).body).toMatchObject({ isValid: true });
  });
});

describe('PostgreSQL restored from a backup', async () => {
  const enabled = await pgEnabled();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-loss-pg-'));
  let running: Running | null = null;
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await running?.f.close();
    for (const drop of drops) await drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.runIf(enabled)('refuses the vouchers the ledger has paid out since the backup', async () => {
    const db = await createPgDatabase();
    drops.push(() => db.drop());
    const payTo = randomKeypair().address;
    running = await start(dataDir, { DATABASE_URL: db.url });
    const ledger = new LocalLedgerClient(`${running.url}/ledger`);
    const ch = await openChannel(ledger, { payee: payTo, deposit: 1_000_000n });
    await payUpTo(running, payTo, ch, 0n, 20_000n);
    await running.f.close();
    const backup = await db.copy(); // the backup, taken while no instance runs
    drops.push(() => backup.drop());

    running = await start(dataDir, { DATABASE_URL: db.url });
    await payUpTo(running, payTo, ch, 20_000n, 50_000n);
    await claim(running, ch, 50_000n);
    await running.f.close();

    running = await start(dataDir, { DATABASE_URL: backup.url });
    expect((await verify(running, payTo, ch.signer.sign(30_000n))).body).toMatchObject({
      isValid: false,
      invalidReason: 'VOUCHER_NOT_INCREASING',
    });
    expect((await verify(running, payTo, ch.signer.sign(55_000n))).body).toMatchObject({ isValid: true });
  });
});

describe('the real `svc start` on a store put back to an older copy', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-loss-svc-'));
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-store-loss-svc-copy-'));
  let child: Child | null = null;
  afterAll(async () => {
    await child?.kill();
    for (const dir of [dataDir, copy]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says once, at warning level, what it found and what it did', async () => {
    const env = { DATA_DIR: dataDir, LEDGER_SECONDS: '1', DEMO: 'off', MANUAL_CLAIM_COOLDOWN_SECONDS: '0' };
    const payTo = randomKeypair().address;
    child = await startChild(env);
    const asRunning = (c: Child) => ({ url: c.url }) as Running;
    let ledger = new LocalLedgerClient(`${child.url}/ledger`);
    const info = await ledger.info();
    const pay = async (c: Child, cumulative: bigint) => {
      const reqs = {
        scheme: 'channel',
        network: info.network,
        asset: info.contracts.asset,
        payTo,
        amount: PRICE.toString(),
        unit: 'request',
        maxTimeoutSeconds: 60,
        extra: { channelContract: info.contracts.channel, minDeposit: '0', facilitator: c.url, areFeesSponsored: true },
      };
      const res = await fetch(`${c.url}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: { x402Version: 2, accepted: reqs, payload: ch.signer.sign(cumulative) },
          paymentRequirements: reqs,
        }),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    const ch = await openChannel(ledger, { payee: payTo, deposit: 1_000_000n });
    for (let c = PRICE; c <= 20_000n; c += PRICE) expect((await pay(child, c))['isValid']).toBe(true);
    await sleep(2_500); // the data directory's mark follows the store every 2 s
    await child.kill('SIGTERM');
    copyStore(dataDir, copy);

    child = await startChild(env);
    ledger = new LocalLedgerClient(`${child.url}/ledger`);
    for (let c = 25_000n; c <= 50_000n; c += PRICE) expect((await pay(child, c))['isValid']).toBe(true);
    await claim(asRunning(child), ch, 50_000n);
    await child.kill('SIGTERM');

    restoreStore(copy, dataDir);
    child = await startChild(env);
    expect(await pay(child, 30_000n)).toMatchObject({ isValid: false, invalidReason: 'VOUCHER_NOT_INCREASING' });
    const deadline = Date.now() + 10_000;
    while (!child.output().includes('The store was behind the ledger')) {
      if (Date.now() > deadline) throw new Error(`no warning:\n${child.output()}`);
      await sleep(50);
    }
    await sleep(500);
    const warnings = child
      .output()
      .split('\n')
      .filter((line) => line.includes('The store was behind the ledger'));
    expect(warnings).toHaveLength(1);
    const line = JSON.parse(warnings[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, channelsRaised: 1, restored: '30000' });
    expect(line['storeBehind']).toMatchObject({
      storeLastEvent: expect.any(Number),
      seenLastEvent: expect.any(Number),
    });
    expect(line['msg']).toMatch(/1 channel had accepted 30000 base units less than the ledger shows claimed/);
    const health = (await (await fetch(`${child.url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ reconciliation: { state: 'done', storeWasBehind: true } });
  });
});
