// Settlement: manual claims, the scheduler's expiry rule, and the ledger watcher (top-ups,
// closes, claims by others, and catching up after the facilitator was down).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair, signLedgerTx, voucherContext, toHex } from '@svc/core';
import type { Keypair } from '@svc/core';
import { LocalLedger } from '@svc/ledger';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const post = (url: string) => fetch(url, { method: 'POST' });

describe('manual claims (POST /channels/:id/claim)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ MANUAL_CLAIM_COOLDOWN_SECONDS: '30' });
  });
  afterAll(() => h.close());

  it('refuses an unknown channel (404) and less than the minimum (409)', async () => {
    expect((await post(`${h.url}/channels/999999/claim`)).status).toBe(404);
    expect((await post(`${h.url}/channels/abc/claim`)).status).toBe(400);
    const b = await h.buyer();
    const res = await post(`${h.url}/channels/${b.channelId}/claim`);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'CONFLICT' });
  });

  it('claims for anyone, pays only the payee, then answers 429 with Retry-After during the cooldown', async () => {
    const b = await h.buyer();
    for (let i = 0; i < 3; i++)
      expect((await h.verify(b.signer.sign(5000n * BigInt(i + 1)))).body['isValid']).toBe(true);
    const payerBefore = await h.ledger.balance(b.keys.address);
    const payeeBefore = await h.ledger.balance(b.payee);
    const res = await post(`${h.url}/channels/${b.channelId}/claim`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { amount: string; cumulative: string; vouchersCovered: number; tx: string };
    expect(body).toMatchObject({
      channelId: b.channelId.toString(),
      amount: '15000',
      cumulative: '15000',
      vouchersCovered: 3,
    });
    expect(body.tx).toMatch(/^[0-9a-f]{64}$/);
    expect(await h.ledger.balance(b.payee)).toBe(payeeBefore + 15_000n);
    expect(await h.ledger.balance(b.keys.address)).toBe(payerBefore);
    expect((await h.verify(b.signer.sign(20_000n))).body['isValid']).toBe(true);
    const again = await post(`${h.url}/channels/${b.channelId}/claim`);
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(20);
  });
});

describe('the claim scheduler and the ledger watcher', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CLAIM_THRESHOLD: '1000000' });
  });
  afterAll(() => h.close());

  it('leaves a small unclaimed amount alone, but claims it from CLAIM_EXPIRY_MARGIN_LEDGERS before expiry', async () => {
    const latest = (await h.ledger.info()).latestLedger;
    const far = await h.buyer();
    const near = await h.buyer({ expiryLedger: latest + 100 });
    // `near` expires within the 120-ledger margin: vouchers are still taken (more than 60 left).
    expect((await h.verify(far.signer.next(5000n))).body['isValid']).toBe(true);
    expect((await h.verify(near.signer.next(5000n))).body['isValid']).toBe(true);
    await h.f.scheduler.tick();
    expect((await h.ledger.channel(far.channelId))?.claimed).toBe('0');
    expect((await h.ledger.channel(near.channelId))?.claimed).toBe('5000');
  });

  it('applies top-ups and closes from the ledger, with their events', async () => {
    const payee = randomKeypair();
    const b = await h.buyer({ payee: payee.address, deposit: 10_000n });
    await h.ledger.topUp({ payer: b.keys, channelId: b.channelId, amount: 90_000n });
    await h.f.watcher.tick();
    let view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ deposit: '100000', remaining: '100000' });
    await h.ledger.closeChannel({ signer: payee, channelId: b.channelId });
    await h.f.watcher.tick();
    view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ status: 'closed', refunded: '100000' });
    const events = await h.f.store.events({ channelId: b.channelId, limit: 10 });
    expect(events.map((e) => e.type)).toEqual(['channel.opened', 'channel.topped_up', 'channel.closed']);
    expect(events.every((e) => e.accounts.includes(b.keys.address))).toBe(true);
  });

  it('records a claim that someone else made with the buyer’s voucher', async () => {
    const b = await h.buyer();
    const v = b.signer.sign(7000n);
    expect((await h.verify(v)).body['isValid']).toBe(true);
    const stranger = randomKeypair();
    await h.ledger.submit(stranger, 'channel.claim', {
      channelId: b.channelId.toString(),
      cumulative: v.cumulative,
      signature: v.signature,
    });
    await h.f.watcher.tick();
    const view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ claimed: '7000', unclaimed: '0' });
    const claims = await h.f.store.events({ channelId: b.channelId, types: ['channel.claimed'], limit: 5 });
    expect(claims).toHaveLength(1);
    expect(claims[0]!.source).toBe('ledger');
  });
});

describe('catching up after downtime', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-catchup-'));
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-catchup-ledger-'));
  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  it('applies what happened on the ledger while the facilitator was stopped', async () => {
    const ledger = await LocalLedger.open({ dataDir: ledgerDir, ledgerSeconds: 1 });
    const info = await ledger.info();
    const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', DEMO: 'off' });
    const submit = async (k: Keypair, op: string, args: Record<string, unknown>) => {
      const seq = (await ledger.getAccount(k.address)).seq + 1;
      return ledger.submit(signLedgerTx(k, info.passphrase, { source: k.address, seq, op, args }));
    };
    const payer = randomKeypair();
    const payee = randomKeypair();
    const vk = randomKeypair();
    await ledger.faucet(payer.address);
    const opened = await submit(payer, 'channel.open', {
      payee: payee.address,
      deposit: '1000000',
      voucherKey: vk.publicKeyHex,
      expiryLedger: info.latestLedger + 10_000,
    });
    const channelId = BigInt(String(opened.result?.['channelId']));

    const first = await createFacilitator({ config, ledger: { ...wrap(ledger), close: () => Promise.resolve() } });
    await first.listen();
    expect((await first.store.getChannel(channelId))?.deposit).toBe(1_000_000n);
    await first.close();

    // While it is down: a top-up, and a claim by the payee with a voucher.
    await submit(payer, 'channel.top_up', { channelId: channelId.toString(), amount: '500000' });
    const sig = toHex(voucherContext(info.passphrase, info.contracts.channel).sign(vk, channelId, 40_000n));
    await submit(payee, 'channel.claim', { channelId: channelId.toString(), cumulative: '40000', signature: sig });

    const second = await createFacilitator({ config, ledger });
    await second.listen();
    const record = await second.store.getChannel(channelId);
    expect(record).toMatchObject({ deposit: 1_500_000n, claimed: 40_000n });
    const types = (await second.store.events({ channelId, limit: 10 })).map((e) => e.type);
    expect(types).toEqual(['channel.opened', 'channel.topped_up', 'channel.claimed']);
    await second.close();
  });
});

/** The same ledger object, but closing the first facilitator must not close the shared ledger. */
function wrap(ledger: LocalLedger) {
  return {
    info: () => ledger.info(),
    latestLedger: () => ledger.latestLedger(),
    getChannel: (id: bigint) => ledger.getChannel(id),
    getAccount: (a: string) => ledger.getAccount(a),
    getTx: (h: string) => ledger.getTx(h),
    submit: (tx: Parameters<LocalLedger['submit']>[0]) => ledger.submit(tx),
    claim: (args: Parameters<LocalLedger['claim']>[0], signer: Parameters<LocalLedger['claim']>[1]) =>
      ledger.claim(args, signer),
    claimMany: (...a: Parameters<LocalLedger['claimMany']>) => ledger.claimMany(...a),
    refund: (...a: Parameters<LocalLedger['refund']>) => ledger.refund(...a),
    events: (cursor: string | null, limit: number) => ledger.events(cursor, limit),
  };
}

describe('a standalone ledger (LEDGER_URL)', () => {
  it('verifies and claims through a ledger reached over HTTP', async () => {
    const { startLedgerServer } = await import('@svc/ledger');
    const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-remote-ledger-'));
    const server = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 1 });
    const h = await startHarness({ LEDGER_URL: server.url, DEMO: 'off' });
    try {
      expect((await fetch(`${h.url}/ledger/info`)).status).toBe(404); // not served here: it is elsewhere
      const remote = new (await import('@svc/sdk')).LocalLedgerClient(server.url);
      const info = await remote.info();
      const payer = randomKeypair();
      const payee = randomKeypair();
      const vk = randomKeypair();
      await remote.faucet(payer.address);
      const { channelId } = await remote.openChannel({
        payer,
        payee: payee.address,
        deposit: 100_000n,
        voucherKey: vk,
      });
      const sig = toHex(voucherContext(info.passphrase, info.contracts.channel).sign(vk, channelId, 5000n));
      const ok = await h.verify(
        { channelId: channelId.toString(), cumulative: '5000', signature: sig },
        h.requirements({ payTo: payee.address }),
      );
      expect(ok.body['isValid']).toBe(true);
      const claim = await fetch(`${h.url}/channels/${channelId}/claim`, { method: 'POST' });
      expect(claim.status).toBe(200);
      expect(await remote.balance(payee.address)).toBe(5000n);
    } finally {
      await h.close();
      await server.close();
      fs.rmSync(ledgerDir, { recursive: true, force: true });
    }
  });
});
