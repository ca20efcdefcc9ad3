// A payee closes its channel: no voucher is accepted once the close has been answered
// by the facilitator's own ledger, and whatever was accepted but never claimed is counted as lost,
// not receivable: earned = settled + receivable + lost, for every seller.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import type { Keypair, RevenueReport } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

async function pay(h: Harness, b: Buyer, cumulative: bigint) {
  const res = await h.verify(b.signer.sign(cumulative), h.requirements({ payTo: b.payee, amount: '1000' }));
  return res.body;
}

async function revenue(h: Harness, payTo: string): Promise<RevenueReport> {
  const res = await fetch(`${h.url}/sellers/${payTo}/revenue`);
  expect(res.status).toBe(200);
  return (await res.json()) as RevenueReport;
}

function expectIdentity(r: RevenueReport): void {
  const { earned, settled, receivable, lost } = r.totals;
  expect(BigInt(earned)).toBe(BigInt(settled) + BigInt(receivable) + BigInt(lost));
}

describe('a payee closes on the facilitator’s own ledger', () => {
  let h: Harness;

  beforeAll(async () => {
    // The watcher does not poll by itself here: only what the facilitator does on the close counts.
    h = await startHarness(
      { DEMO: 'off', CLAIM_INTERVAL_SECONDS: '3600', MANUAL_CLAIM_COOLDOWN_SECONDS: '0' },
      { watchPollMs: 3_600_000 },
    );
  });
  afterAll(() => h.close());

  it('refuses the next voucher at once, and counts what was not claimed as lost', async () => {
    const seller = randomKeypair();
    const b = await h.buyer({ payee: seller.address });
    const claimedFirst = await h.buyer({ payee: seller.address });
    expect(await pay(h, b, 5000n)).toMatchObject({ isValid: true });
    expect(await pay(h, b, 10_000n)).toMatchObject({ isValid: true });
    expect(await pay(h, claimedFirst, 5000n)).toMatchObject({ isValid: true });
    expect((await fetch(`${h.url}/channels/${claimedFirst.channelId}/claim`, { method: 'POST' })).status).toBe(200);

    // The payee closes both without claiming the first: 10000 accepted there can never be paid.
    await h.ledger.closeChannel({ signer: seller, channelId: b.channelId });
    await h.ledger.closeChannel({ signer: seller, channelId: claimedFirst.channelId });
    expect(await pay(h, b, 15_000n)).toMatchObject({ isValid: false, invalidReason: 'CHANNEL_CLOSED' });
    expect(await pay(h, claimedFirst, 10_000n)).toMatchObject({ isValid: false, invalidReason: 'CHANNEL_CLOSED' });

    const r = await revenue(h, seller.address);
    expect(r.totals).toMatchObject({ earned: '15000', settled: '5000', receivable: '0', lost: '10000' });
    expectIdentity(r);
    expect(r.losses.channels).toEqual([
      { channelId: b.channelId.toString(), payer: b.keys.address, amount: '10000', closedAt: expect.any(String) },
    ]);
    expect(r.receivables).toMatchObject({ total: '0', channels: [] });
    // The close says what it cost the seller.
    const events = await h.f.store.events({ channelId: b.channelId, types: ['channel.closed'], limit: 10 });
    expect(events.map((e) => e.data['lost'])).toEqual(['10000']);
  });
});

describe('a payee closes on a standalone ledger while its buyer keeps paying (LEDGER_URL)', () => {
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-payee-close-'));
  let server: LedgerServer;
  let h: Harness;

  beforeAll(async () => {
    server = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    h = await startHarness(
      { LEDGER_URL: server.url, DEMO: 'off', CLAIM_INTERVAL_SECONDS: '3600' },
      { watchPollMs: 200 },
    );
  });
  afterAll(async () => {
    await h?.close();
    await server?.close();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('refuses vouchers from the watcher’s next poll on; every accepted voucher is settled, receivable or lost', async () => {
    const seller: Keypair = randomKeypair();
    const b = await h.buyer({ payee: seller.address });
    let cumulative = 0n;
    const closing = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await h.ledger.closeChannel({ signer: seller, channelId: b.channelId });
      return Date.now();
    })();
    let closedAt: number | null = null;
    void closing.then((t) => (closedAt = t));
    let lastAcceptedAt = 0;
    for (;;) {
      const answer = await pay(h, b, cumulative + 1000n);
      if (answer['isValid'] !== true) {
        expect(answer['invalidReason']).toBe('CHANNEL_CLOSED');
        break;
      }
      cumulative += 1000n;
      lastAcceptedAt = Date.now();
    }
    await closing;
    // Within about one watcher poll (200 ms) of the close, never later.
    expect(lastAcceptedAt - closedAt!).toBeLessThan(1000);
    const r = await revenue(h, seller.address);
    expect(r.totals).toMatchObject({
      earned: cumulative.toString(),
      settled: '0',
      receivable: '0',
      lost: cumulative.toString(),
    });
    expectIdentity(r);
  });
});
