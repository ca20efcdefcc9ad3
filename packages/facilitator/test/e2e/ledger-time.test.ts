// The ledger's time does not stand still for the facilitator, against a real
// standalone ledger that is stopped and restarted:
// - while the ledger does not answer, the facilitator estimates the current ledger from the wall
//   clock and the ledger's pace: no voucher is accepted within the safety margin of the ledger's
//   real time (before the fix, vouchers were accepted past expiry, and the payer took the refund);
// - a facilitator restarted while the ledger is down starts degraded and catches up when it answers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { LocalLedgerClient } from '@svc/sdk';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';
import type { Facilitator } from '../../src/facilitator.js';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const LEDGER_MS = 50;
const SAFETY = 60;
/** Ledgers a request may take on a busy machine, between its acceptance and our reading of the time. */
const TOLERANCE = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function verify(h: Harness, b: Buyer, cumulative: bigint, payTo: string) {
  const reqs = h.requirements({ payTo, amount: '1000' });
  const res = await fetch(`${h.url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: reqs, payload: b.signer.sign(cumulative) },
      paymentRequirements: reqs,
      method: 'GET',
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the ledger stops answering before a channel expires (LEDGER_URL, 0.05 s ledgers)', () => {
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ledger-time-'));
  let server: LedgerServer;
  let h: Harness;

  beforeAll(async () => {
    server = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: LEDGER_MS / 1000 });
    h = await startHarness({
      LEDGER_URL: server.url,
      DEMO: 'off',
      LOG_LEVEL: 'fatal',
      CLAIM_INTERVAL_SECONDS: '3600',
      VOUCHER_EXPIRY_SAFETY_LEDGERS: String(SAFETY),
    });
  });

  afterAll(async () => {
    await h?.close();
    await server?.close();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('accepts no voucher within the safety margin of the ledger’s real time, and keeps taking vouchers until then', async () => {
    const seller = randomKeypair();
    const expiry = (await server.ledger.latestLedger()) + 200;
    const b = await h.buyer({ payee: seller.address, expiryLedger: expiry, deposit: 1_000_000_000n });
    let cumulative = 1000n;
    expect((await verify(h, b, cumulative, seller.address)).body['isValid']).toBe(true);
    await sleep(500);

    // The ledger's real time from here on: it keeps closing ledgers while its server is down.
    const l0 = await server.ledger.latestLedger();
    const t0 = Date.now();
    const realLedger = (t: number) => l0 + Math.floor((t - t0) / LEDGER_MS);
    const port = Number(new URL(server.url).port);
    await server.close();

    const accepted: number[] = [];
    const refusals = new Map<string, number>();
    while (realLedger(Date.now()) <= expiry + 5) {
      const answer = await verify(h, b, cumulative + 1000n, seller.address);
      const at = realLedger(Date.now());
      if (answer.body['isValid'] === true) {
        cumulative += 1000n;
        accepted.push(at);
      } else {
        const reason = String(answer.body['invalidReason'] ?? answer.body['error']);
        refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
      }
      await sleep(10);
    }
    // While the ledger was down vouchers were taken (the channel was far from expiry)…
    expect(accepted.length).toBeGreaterThan(10);
    // …but none within the safety margin of the ledger's real time, let alone past expiry.
    const latestAccepted = Math.max(...accepted);
    console.log(
      `ledger-time: ${accepted.length} vouchers accepted while the ledger was down; the last ${expiry - latestAccepted} ledgers before expiry (safety margin ${SAFETY})`,
    );
    expect(expiry - latestAccepted).toBeGreaterThanOrEqual(SAFETY - TOLERANCE);
    expect([...refusals.keys()]).toEqual(['CHANNEL_EXPIRING']);

    // The ledger comes back: the facilitator reads its time again and still refuses.
    server = await startLedgerServer({ port, dataDir: ledgerDir, ledgerSeconds: LEDGER_MS / 1000 });
    await h.f.services.latestLedger.refresh();
    expect((await verify(h, b, cumulative + 1000n, seller.address)).body).toMatchObject({
      isValid: false,
      invalidReason: 'CHANNEL_EXPIRING',
    });
    const view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as { lastAccepted: string };
    expect(BigInt(view.lastAccepted)).toBe(cumulative);
  });
});

describe('a facilitator restarted while its ledger is down (LEDGER_URL)', () => {
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ledger-down-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-restart-down-'));
  let server: LedgerServer;
  let f: Facilitator | null = null;

  beforeAll(async () => {
    server = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
  });

  afterAll(async () => {
    await f?.close();
    await server?.close();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts degraded from what it saw last, takes vouchers on known channels, and catches up when the ledger answers', async () => {
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      LEDGER_URL: server.url,
      DEMO: 'off',
      LOG_LEVEL: 'fatal',
      MANUAL_CLAIM_COOLDOWN_SECONDS: '0',
    });
    const seller = randomKeypair();
    // A first run sees the ledger and a channel, and takes a voucher on it.
    f = await createFacilitator({ config, watchPollMs: 50 });
    let url = await f.listen();
    const h = await startHarness({ LEDGER_URL: server.url, DEMO: 'off', LOG_LEVEL: 'fatal' });
    const b = await h.buyer({ payee: seller.address });
    await h.close();
    const pay = async (cumulative: bigint, channelId = b.channelId) => {
      const reqs = {
        scheme: 'channel',
        network: 'stellar:local',
        asset: f!.ledgerInfo.contracts.asset,
        payTo: seller.address,
        amount: '5000',
        unit: 'request',
        maxTimeoutSeconds: 60,
        extra: {
          channelContract: f!.ledgerInfo.contracts.channel,
          minDeposit: '0',
          facilitator: url,
          areFeesSponsored: true,
        },
      };
      const payload = { ...b.signer.sign(cumulative), channelId: channelId.toString() };
      const res = await fetch(`${url}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: { x402Version: 2, accepted: reqs, payload },
          paymentRequirements: reqs,
        }),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
    };
    expect((await pay(5000n)).body['isValid']).toBe(true);
    await sleep(300); // the ledger's time is saved after the first background reading
    await f.close();
    f = null;

    const port = Number(new URL(server.url).port);
    await server.close();

    // The restart: the ledger does not answer, the facilitator starts anyway.
    f = await createFacilitator({ config, watchPollMs: 50 });
    url = await f.listen();
    const health = (await (await fetch(`${url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'degraded', ledger: { reachable: false } });
    expect((await pay(10_000n)).body).toMatchObject({ isValid: true, extra: { receipt: { cumulative: '10000' } } });
    const unknown = await pay(5000n, 999_999n);
    expect({ status: unknown.status, error: unknown.body['error'] }).toEqual({
      status: 503,
      error: 'LEDGER_UNAVAILABLE',
    });
    expect(unknown.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);

    // The ledger comes back: the facilitator catches up and settles what it took.
    server = await startLedgerServer({ port, dataDir: ledgerDir, ledgerSeconds: 1 });
    const deadline = Date.now() + 10_000;
    while (((await (await fetch(`${url}/health`)).json()) as { status: string }).status !== 'ok') {
      if (Date.now() > deadline) throw new Error('the facilitator did not reconnect');
      await sleep(100);
    }
    const claim = await fetch(`${url}/channels/${b.channelId}/claim`, { method: 'POST' });
    expect(claim.status).toBe(200);
    expect(await claim.json()).toMatchObject({ amount: '10000', cumulative: '10000' });
    expect(await new LocalLedgerClient(server.url).balance(seller.address)).toBe(10_000n);
  });
});
