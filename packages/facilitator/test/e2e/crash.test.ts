// kill -9 of the facilitator during a paying loop, then a restart on the same data: every voucher
// whose receipt a buyer got is still accepted, and the next payment succeeds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { LocalLedgerClient, payFetch } from '@svc/sdk';
import type { ChannelSigner } from '@svc/sdk';
import { openChannel } from '../helpers/open-channel.js';
import { requestSellerToken } from '@svc/meter';
import { SqliteStore } from '../../src/store/index.js';
import { startChild } from '../helpers/process.js';
import type { Child } from '../helpers/process.js';

const BUYERS = 4;

describe('kill -9 during a paying loop', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-crash-'));
  let child: Child | null = null;
  afterAll(async () => {
    await child?.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged voucher and takes the next payment', async () => {
    child = await startChild({ DATA_DIR: dataDir, LEDGER_SECONDS: '1' });
    const ledger = new LocalLedgerClient(`${child.url}/ledger`);
    const terms = (await (await fetch(`${child.url}/demo/book`)).json()) as { accepts: Array<{ payTo: string }> };
    const payee = terms.accepts[0]!.payTo;
    const signers: ChannelSigner[] = [];
    for (let i = 0; i < BUYERS; i++) {
      signers.push((await openChannel(ledger, { payee, deposit: 50_000_000n })).signer);
    }

    // Pay in parallel loops; record the highest cumulative each buyer holds a receipt for.
    const acknowledged = new Map<bigint, bigint>();
    let total = 0;
    const url = child.url;
    const loops = signers.map(async (signer) => {
      for (;;) {
        try {
          const res = await payFetch(`${url}/demo/book`, {}, { signer });
          if (res.status !== 200 || !res.payment) return;
          acknowledged.set(signer.channelId, BigInt(res.payment.cumulative));
          total++;
        } catch {
          return; // the facilitator is gone
        }
      }
    });
    while (total < 150) await new Promise((r) => setTimeout(r, 5));
    await child.kill('SIGKILL');
    await Promise.all(loops);
    expect(total).toBeGreaterThanOrEqual(150);

    child = await startChild({ DATA_DIR: dataDir, LEDGER_SECONDS: '1' });
    for (const signer of signers) {
      const view = (await (await fetch(`${child.url}/channels/${signer.channelId}`)).json()) as {
        lastAccepted: string;
      };
      const acked = acknowledged.get(signer.channelId) ?? 0n;
      // Durable: the store has at least every acknowledged voucher (a voucher committed whose
      // answer was lost in the kill may be one step beyond).
      expect(BigInt(view.lastAccepted)).toBeGreaterThanOrEqual(acked);
      expect(BigInt(view.lastAccepted) - acked).toBeLessThanOrEqual(5000n);
      const next = await payFetch(`${child.url}/demo/book`, {}, { signer });
      expect(next.status).toBe(200);
      expect(BigInt(next.payment!.cumulative)).toBe(BigInt(view.lastAccepted) + 5000n);
    }
  });
});

describe('a restart ends stream sessions left open, cleanly', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-crash-streams-'));
  let child: Child | null = null;
  afterAll(async () => {
    await child?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a session open at kill -9 is ABORTED on restart, with what it was charged, and stream.ended once', async () => {
    child = await startChild({ DATA_DIR: dir, LEDGER_SECONDS: '1', DEMO: 'off' });
    const ledger = new LocalLedgerClient(`${child.url}/ledger`);
    const info = await ledger.info();
    const payee = randomKeypair();
    const { channelId, signer } = await openChannel(ledger, {
      payee: payee.address,
      deposit: 100_000n,
    });
    const terms = {
      scheme: 'channel',
      network: info.network,
      asset: info.contracts.asset,
      payTo: payee.address,
      amount: '1000',
      unit: 'second',
      maxTimeoutSeconds: 60,
      extra: {
        channelContract: info.contracts.channel,
        minDeposit: '1',
        facilitator: child.url,
        areFeesSponsored: true,
        sliceSeconds: 2,
        sliceAmount: '2000',
      },
    };
    const verify = await fetch(`${child.url}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: terms,
          payload: signer.next(2000n),
          resource: { url: `${child.url}/r` },
        },
        paymentRequirements: terms,
      }),
    });
    const receiptId = ((await verify.json()) as { extra: { receipt: { receipt: { id: string } } } }).extra.receipt
      .receipt.id;
    // The seller's token, from the real endpoint: signed with the seller's key, valid after the restart too.
    const { token } = await requestSellerToken({ facilitator: child.url, secret: payee.secret() });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const opened = await fetch(`${child.url}/streams`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        channelId: channelId.toString(),
        payTo: payee.address,
        resource: `${child.url}/r`,
        unit: 'second',
        sliceCost: '2000',
        initialCharge: '2000',
        receiptId,
      }),
    });
    const { streamId } = (await opened.json()) as { streamId: string };
    await child.kill('SIGKILL');

    child = await startChild({ DATA_DIR: dir, LEDGER_SECONDS: '1', DEMO: 'off' });
    const wait = await fetch(`${child.url}/streams/${streamId}/wait`, { method: 'POST', headers, body: '{}' });
    expect(await wait.json()).toEqual({ kind: 'aborted' });
    const end = await fetch(`${child.url}/streams/${streamId}`, {
      method: 'DELETE',
      headers,
      body: JSON.stringify({ reason: 'done', units: 0 }),
    });
    expect(await end.json()).toMatchObject({ reason: 'ABORTED', charged: '2000', vouchers: 1 });
    await child.kill('SIGTERM');
    const store = await SqliteStore.open({ file: path.join(dir, 'facilitator.sqlite'), writer: 'inline' });
    try {
      const ended = await store.events({ types: ['stream.ended'], limit: 10 });
      expect(ended).toHaveLength(1);
      expect(ended[0]!.data).toMatchObject({ streamId, reason: 'ABORTED', charged: '2000', vouchers: 1 });
    } finally {
      await store.close();
    }
  });
});
