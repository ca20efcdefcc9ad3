// Faults, each made for real against the running service, over HTTP:
// - the standalone ledger goes down and comes back on the same port and data: what needs the
//   ledger answers 503 LEDGER_UNAVAILABLE with Retry-After, /health says so, vouchers on known
//   channels are still taken, the claim scheduler reports, backs off and settles once it is back;
// - the SQLite store cannot commit (another connection holds the write lock): a valid voucher is
//   answered 503 and not counted, then accepted exactly once when the lock is gone;
// - the channel contract refuses a claim (the payee closed the channel first): chain.rejected
//   with the ledger's code, nothing settled, the amount still receivable, and no 5xx anywhere.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair, signLedgerTx, signReport } from '@svc/core';
import type { RevenueReport } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { SQLITE_FILE_NAME } from '../../src/store/index.js';
import postgres from 'postgres';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import type { PgDatabase } from '../helpers/pg.js';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** Every answer seen, for "never a 500" over the whole file. */
const pgOn = await pgEnabled();
const statuses: { what: string; status: number }[] = [];

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const body = (await res.json()) as Record<string, unknown>;
  statuses.push({ what: `${init.method ?? 'GET'} ${new URL(url).pathname}`, status: res.status });
  return { status: res.status, headers: res.headers, body };
}

const post = (url: string) => call(url, { method: 'POST' });

/** The error body of docs/protocol.md#errors with a 503 and a Retry-After in whole seconds. */
function expectUnavailable(a: Answer, error: string, source: string): void {
  expect(a.status).toBe(503);
  expect(a.body).toEqual({ error, source, message: expect.any(String) });
  expect(a.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
}

async function verify(
  h: Harness,
  payload: ReturnType<Buyer['signer']['sign']>,
  payTo: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const reqs = h.requirements({ payTo });
  return call(`${h.url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: reqs, payload, resource: { url: `${h.url}/test/resource` } },
      paymentRequirements: reqs,
      method: 'GET',
    }),
  });
}

async function channel(h: Harness, id: bigint): Promise<Record<string, unknown>> {
  const a = await call(`${h.url}/channels/${id}`);
  expect(a.status).toBe(200);
  return a.body;
}

async function totals(h: Harness, payTo: string): Promise<RevenueReport['totals']> {
  const a = await call(`${h.url}/sellers/${payTo}/revenue`);
  expect(a.status).toBe(200);
  return (a.body as unknown as RevenueReport).totals;
}

/** The account's events of one type (GET /accounts/:address/ledger: the store only). */
async function eventsOf(
  h: Harness,
  account: string,
  type: string,
  channelId?: bigint,
): Promise<{ channelId?: string; data: Record<string, unknown> }[]> {
  const a = await call(`${h.url}/accounts/${account}/ledger?limit=200`);
  expect(a.status).toBe(200);
  const events = a.body['events'] as { type: string; channelId?: string; data: Record<string, unknown> }[];
  return events.filter((e) => e.type === type && (channelId === undefined || e.channelId === channelId.toString()));
}

async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(() => {
  expect(statuses.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
});

describe('the standalone ledger goes down and comes back (LEDGER_URL)', () => {
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-faults-ledger-'));
  let server: LedgerServer;
  let h: Harness;

  beforeAll(async () => {
    server = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    h = await startHarness({
      LEDGER_URL: server.url,
      DEMO: 'off',
      // The watcher retries every 50 ms while the ledger is down: keep its warnings out of the output.
      LOG_LEVEL: 'error',
      CLAIM_INTERVAL_SECONDS: '0.2',
      CLAIM_THRESHOLD: '10000',
      MANUAL_CLAIM_COOLDOWN_SECONDS: '0',
    });
  });

  afterAll(async () => {
    await h?.close();
    await server?.close();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('answers 503 where it needs the ledger, keeps taking vouchers, and settles exactly what it took once the ledger is back', async () => {
    const seller = randomKeypair();
    const a = await h.buyer({ payee: seller.address });
    const c = await h.buyer({ payee: seller.address });
    // Both channels become known to the facilitator; 5000 each stays under the claim threshold.
    expect((await verify(h, a.signer.sign(5000n), seller.address)).body['isValid']).toBe(true);
    expect((await verify(h, c.signer.sign(5000n), seller.address)).body['isValid']).toBe(true);
    expect((await call(`${h.url}/health`)).body).toMatchObject({
      status: 'ok',
      ledger: { reachable: true, mode: 'remote' },
    });

    const port = Number(new URL(server.url).port);
    await server.close();

    // (b) /health still answers, and says the ledger cannot be reached.
    const health = await call(`${h.url}/health`);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', ledger: { reachable: false, mode: 'remote' } });

    // (c) vouchers on channels the facilitator knows are still accepted: 15000 unclaimed on `a`.
    expect((await verify(h, a.signer.sign(10_000n), seller.address)).body).toMatchObject({ isValid: true });
    expect((await verify(h, a.signer.sign(15_000n), seller.address)).body).toMatchObject({ isValid: true });

    // (a) what needs the ledger: 503 LEDGER_UNAVAILABLE from the ledger, with Retry-After; never a 500.
    const unknown = 987_654_321n;
    const stranger = { ...a.signer.sign(5000n), channelId: unknown.toString() };
    expectUnavailable(await verify(h, stranger, seller.address), 'LEDGER_UNAVAILABLE', 'ledger');
    expectUnavailable(await call(`${h.url}/channels/${unknown}`), 'LEDGER_UNAVAILABLE', 'ledger');
    expectUnavailable(await call(`${h.url}/accounts/${a.keys.address}`), 'LEDGER_UNAVAILABLE', 'ledger');
    expectUnavailable(await call(`${h.url}/float`), 'LEDGER_UNAVAILABLE', 'ledger');
    expectUnavailable(await post(`${h.url}/channels/${c.channelId}/claim`), 'LEDGER_UNAVAILABLE', 'ledger');
    const report = signReport(a.keys, h.f.ledgerInfo.passphrase, {
      account: a.keys.address,
      tx: 'ab'.repeat(32),
    });
    expectUnavailable(
      await call(`${h.url}/v1/report`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(report),
      }),
      'LEDGER_UNAVAILABLE',
      'ledger',
    );
    // What the facilitator keeps itself still answers.
    expect((await call(`${h.url}/accounts/${a.keys.address}/ledger`)).status).toBe(200);
    expect(await channel(h, a.channelId)).toMatchObject({
      lastAccepted: '15000',
      claimed: '0',
      unclaimed: '15000',
      status: 'open',
    });

    // (d) the scheduler's claim of `a` fails: reported as chain.rejected, then it backs off (5 s)
    // instead of trying again on every 0.2 s tick, and nothing is marked settled.
    const [rejected] = await until('the claim to be reported', async () => {
      const found = await eventsOf(h, seller.address, 'chain.rejected', a.channelId);
      return found.length > 0 ? found : null;
    });
    expect(rejected!.data).toMatchObject({
      code: 0,
      codeName: 'LEDGER_UNAVAILABLE',
      op: 'channel.claim',
      channelId: a.channelId.toString(),
      tx: '',
    });
    await sleep(1500);
    expect(await eventsOf(h, seller.address, 'chain.rejected', a.channelId)).toHaveLength(1);
    expect(await eventsOf(h, seller.address, 'channel.claimed')).toEqual([]);
    expect(await totals(h, seller.address)).toMatchObject({
      earned: '20000',
      settled: '0',
      receivable: '20000',
      settlements: 0,
    });

    // Manual claims during the outage: each answers 503, and the outage is reported once per
    // channel, not once per attempt (before, 93 attempts wrote 93 chain.rejected).
    for (let i = 0; i < 5; i++)
      expectUnavailable(await post(`${h.url}/channels/${a.channelId}/claim`), 'LEDGER_UNAVAILABLE', 'ledger');
    expect(await eventsOf(h, seller.address, 'chain.rejected', a.channelId)).toHaveLength(1);

    // The ledger comes back on the same port and data directory.
    server = await startLedgerServer({ port, dataDir: ledgerDir, ledgerSeconds: 1 });
    await until('the retried claim of a', async () => (await channel(h, a.channelId))['claimed'] === '15000');
    expect((await call(`${h.url}/health`)).body).toMatchObject({ status: 'ok', ledger: { reachable: true } });
    const manual = await post(`${h.url}/channels/${c.channelId}/claim`);
    expect({ status: manual.status, body: manual.body }).toMatchObject({
      status: 200,
      body: { amount: '5000', cumulative: '5000' },
    });

    // Settled is exactly what was accepted, on the facilitator and on the ledger.
    expect(await totals(h, seller.address)).toMatchObject({
      earned: '20000',
      settled: '20000',
      receivable: '0',
      settlements: 2,
    });
    expect(await channel(h, a.channelId)).toMatchObject({ lastAccepted: '15000', claimed: '15000', unclaimed: '0' });
    expect((await server.ledger.getChannel(a.channelId))?.claimed).toBe(15_000n);
    expect((await server.ledger.getChannel(c.channelId))?.claimed).toBe(5000n);
    expect(await h.ledger.balance(seller.address)).toBe(20_000n);

    // A second outage is a new one: reported once more.
    expect((await verify(h, a.signer.sign(25_000n), seller.address)).body['isValid']).toBe(true);
    await server.close();
    for (let i = 0; i < 3; i++)
      expectUnavailable(await post(`${h.url}/channels/${a.channelId}/claim`), 'LEDGER_UNAVAILABLE', 'ledger');
    expect(await eventsOf(h, seller.address, 'chain.rejected', a.channelId)).toHaveLength(2);
    server = await startLedgerServer({ port, dataDir: ledgerDir, ledgerSeconds: 1 });
  });
});

describe('the SQLite store cannot commit', () => {
  let h: Harness;

  beforeAll(async () => {
    // The facilitator logs the failed commits as errors: expected here.
    h = await startHarness({ DEMO: 'off', LOG_LEVEL: 'fatal' });
  });

  afterAll(() => h?.close());

  it('answers a valid voucher 503 without counting it while another connection holds the write lock, then accepts it exactly once', async () => {
    const seller = randomKeypair();
    const b = await h.buyer({ payee: seller.address });
    expect((await verify(h, b.signer.sign(5000n), seller.address)).body['isValid']).toBe(true);

    // Another connection takes the write lock and keeps it past the facilitator's busy timeout (5 s).
    const lock = new Database(path.join(h.dataDir, SQLITE_FILE_NAME));
    lock.pragma('busy_timeout = 5000');
    lock.exec('BEGIN EXCLUSIVE');
    const voucher = b.signer.sign(10_000n);
    let refused: Answer;
    try {
      refused = await verify(h, voucher, seller.address, { 'idempotency-key': 'fault-1' });
      // Reads still work (WAL): nothing of the refused voucher is there.
      expect(await channel(h, b.channelId)).toMatchObject({ lastAccepted: '5000', vouchers: 1 });
      // /health tells the truth: this instance cannot write (before, it said ok).
      expect((await call(`${h.url}/health`)).body).toMatchObject({
        status: 'degraded',
        store: 'sqlite',
        storeWritable: false,
      });
    } finally {
      lock.exec('ROLLBACK');
      lock.close();
    }
    expectUnavailable(refused, 'FACILITATOR_UNAVAILABLE', 'facilitator');
    expect(await totals(h, seller.address)).toMatchObject({ earned: '5000', payments: 1 });
    // The lock is gone: /health finds the store writable again by itself.
    await until('the store to be writable again', async () =>
      (await call(`${h.url}/health`)).body['storeWritable'] === true ? true : null,
    );

    // The fault is gone: the same voucher (the same Idempotency-Key, as a retrying client sends it) is accepted…
    const accepted = await verify(h, voucher, seller.address, { 'idempotency-key': 'fault-1' });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ isValid: true, extra: { receipt: { cumulative: '10000', delta: '5000' } } });
    // …exactly once: a copy is not increasing, a repeat under the key gets the first answer back.
    expect((await verify(h, voucher, seller.address)).body).toMatchObject({
      isValid: false,
      invalidReason: 'VOUCHER_NOT_INCREASING',
    });
    const replay = await verify(h, voucher, seller.address, { 'idempotency-key': 'fault-1' });
    expect(replay.body).toMatchObject({ isValid: true });
    expect(
      ((replay.body['extra'] as Record<string, unknown>)['receipt'] as { receipt: { id: string } }).receipt.id,
    ).toBe(((accepted.body['extra'] as Record<string, unknown>)['receipt'] as { receipt: { id: string } }).receipt.id);

    expect(await channel(h, b.channelId)).toMatchObject({ lastAccepted: '10000', vouchers: 2 });
    expect(await totals(h, seller.address)).toMatchObject({ earned: '10000', payments: 2 });
    expect(await eventsOf(h, seller.address, 'voucher.accepted', b.channelId)).toHaveLength(2);
  });
});

describe.runIf(pgOn)('the PostgreSQL store cannot commit', () => {
  let db: PgDatabase;
  let h: Harness;

  beforeAll(async () => {
    db = await createPgDatabase();
    h = await startHarness({ DEMO: 'off', LOG_LEVEL: 'fatal', DATABASE_URL: db.url });
  });

  afterAll(async () => {
    await h?.close();
    await db?.drop();
  });

  it('answers 503 within the lock timeout while another connection locks the channels table, then accepts the voucher exactly once', async () => {
    const seller = randomKeypair();
    const b = await h.buyer({ payee: seller.address });
    expect((await verify(h, b.signer.sign(5000n), seller.address)).body['isValid']).toBe(true);

    // Another session holds an exclusive lock on the channels table past the store's lock_timeout (5 s).
    const other = postgres(db.url, { max: 1, onnotice: () => undefined });
    const voucher = b.signer.sign(10_000n);
    let refused: Answer;
    let tookMs: number;
    try {
      const reserved = await other.reserve();
      try {
        await reserved`BEGIN`;
        await reserved`LOCK TABLE channels IN ACCESS EXCLUSIVE MODE`;
        const started = Date.now();
        refused = await verify(h, voucher, seller.address, { 'idempotency-key': 'pg-fault-1' });
        tookMs = Date.now() - started;
        await reserved`ROLLBACK`;
      } finally {
        reserved.release();
      }
    } finally {
      await other.end({ timeout: 5 });
    }
    expectUnavailable(refused, 'FACILITATOR_UNAVAILABLE', 'facilitator');
    expect(tookMs).toBeLessThan(15_000); // the lock timeout, not forever
    expect(await channel(h, b.channelId)).toMatchObject({ lastAccepted: '5000', vouchers: 1 });

    const accepted = await verify(h, voucher, seller.address, { 'idempotency-key': 'pg-fault-1' });
    expect(accepted.body).toMatchObject({ isValid: true, extra: { receipt: { cumulative: '10000', delta: '5000' } } });
    expect((await verify(h, voucher, seller.address)).body).toMatchObject({
      isValid: false,
      invalidReason: 'VOUCHER_NOT_INCREASING',
    });
    expect(await channel(h, b.channelId)).toMatchObject({ lastAccepted: '10000', vouchers: 2 });
    expect(await totals(h, seller.address)).toMatchObject({ earned: '10000', payments: 2 });
  });
});

describe('the ledger refuses a claim', () => {
  let h: Harness;

  beforeAll(async () => {
    // The watcher polls rarely here, as on a ledger whose events lag (Soroban RPC): the payee's
    // close is not seen before the scheduler claims. The scheduler runs when the test ticks it;
    // its warning about the refused claim is expected.
    h = await startHarness(
      { DEMO: 'off', LOG_LEVEL: 'error', CLAIM_INTERVAL_SECONDS: '3600', CLAIM_THRESHOLD: '1000' },
      { watchPollMs: 3_600_000 },
    );
  });

  afterAll(() => h?.close());

  it('reports chain.rejected with the ledger’s code, settles nothing, counts it lost once the close is seen, and answers no 5xx', async () => {
    const seller = randomKeypair();
    const b = await h.buyer({ payee: seller.address, deposit: 1_000_000n });
    expect((await verify(h, b.signer.sign(5000n), seller.address)).body['isValid']).toBe(true);
    expect((await verify(h, b.signer.sign(10_000n), seller.address)).body['isValid']).toBe(true);
    const before = statuses.length;

    // The payee closes the channel on the ledger before the facilitator claims: the payer gets it all
    // back. Sent to the ledger itself, not through the facilitator's /ledger route (which would apply
    // the close at once), as a close on a ledger the facilitator only polls.
    const local = h.f.localLedger!;
    const seq = (await local.getAccount(seller.address)).seq + 1;
    const close = await local.submit(
      signLedgerTx(seller, (await local.info()).passphrase, {
        source: seller.address,
        seq,
        op: 'channel.close',
        args: { channelId: b.channelId.toString() },
      }),
    );
    expect(close).toMatchObject({ status: 'SUCCESS', result: { refunded: '1000000' } });
    expect(await channel(h, b.channelId)).toMatchObject({ status: 'open', unclaimed: '10000' });
    await h.f.scheduler.tick();

    const rejected = await eventsOf(h, seller.address, 'chain.rejected', b.channelId);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.data).toMatchObject({
      code: 21,
      codeName: 'CHANNEL_CLOSED',
      op: 'channel.claim',
      channelId: b.channelId.toString(),
    });
    const tx = rejected[0]!.data['tx'] as string;
    expect(tx).toMatch(/^[0-9a-f]{64}$/);
    expect((await call(`${h.url}/ledger/tx/${tx}`)).body).toMatchObject({ status: 'FAILED', code: 21 });

    // Nothing settled: the ledger paid the seller nothing, and the facilitator counts nothing.
    expect(await h.ledger.balance(seller.address)).toBe(0n);
    expect(await eventsOf(h, seller.address, 'channel.claimed')).toEqual([]);
    expect(await channel(h, b.channelId)).toMatchObject({
      status: 'closed',
      claimed: '0',
      lastAccepted: '10000',
      unclaimed: '10000',
      refunded: '1000000',
    });
    // The claim's refusal resynced the channel (closed); the audit ledger learns of the close from the watcher.
    expect(await totals(h, seller.address)).toMatchObject({
      earned: '10000',
      settled: '0',
      receivable: '10000',
      lost: '0',
      settlements: 0,
    });

    // A closed channel is not claimed again, by the scheduler or by hand, and takes no voucher.
    await h.f.scheduler.tick();
    expect(await eventsOf(h, seller.address, 'chain.rejected', b.channelId)).toHaveLength(1);
    const manual = await post(`${h.url}/channels/${b.channelId}/claim`);
    expect(manual.status).toBe(409);
    expect(manual.body).toMatchObject({ error: 'CONFLICT' });
    expect((await verify(h, b.signer.sign(15_000n), seller.address)).body).toMatchObject({
      isValid: false,
      invalidReason: 'CHANNEL_CLOSED',
    });

    // Once the watcher reads the close, the books still agree.
    await h.f.watcher.tick();
    expect(await eventsOf(h, seller.address, 'channel.closed', b.channelId)).toHaveLength(1);
    expect(await totals(h, seller.address)).toMatchObject({
      earned: '10000',
      settled: '0',
      receivable: '0',
      lost: '10000',
    });
    expect(await eventsOf(h, seller.address, 'chain.rejected', b.channelId)).toHaveLength(1);
    expect(statuses.slice(before).filter((s) => s.status >= 500)).toEqual([]);
  });
});
