// The audit order is causal: a channel's opening takes an event id before its first
// payment, and is recorded once, whoever records it first. Against a real standalone ledger whose
// events the facilitator's watcher sees late (it polls once a minute here), so the first voucher
// arrives before the watcher has reached the opening; before the fix, `channel.opened` was stored
// after the channel's first `voucher.accepted`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

describe('a channel paid on before the watcher sees it open (LEDGER_URL, watcher polling once a minute)', () => {
  const ledgerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-opening-order-'));
  let server: LedgerServer;
  let h: Harness;

  beforeAll(async () => {
    server = await startLedgerServer({ port: 0, dataDir: ledgerDir, ledgerSeconds: 0.2 });
    h = await startHarness(
      { LEDGER_URL: server.url, DEMO: 'off', LOG_LEVEL: 'fatal', CLAIM_INTERVAL_SECONDS: '3600' },
      { watchPollMs: 60_000 },
    );
  });

  afterAll(async () => {
    await h?.close();
    await server?.close();
    fs.rmSync(ledgerDir, { recursive: true, force: true });
  });

  const typesOf = async (channelId: bigint) =>
    (await h.f.store.events({ channelId, order: 'asc', limit: 100 })).map((e) => e.type);

  it('records the opening before the first payment, and once when the watcher gets there', async () => {
    const seller = randomKeypair();
    const b = await h.buyer({ payee: seller.address });
    const reqs = h.requirements({ payTo: seller.address, amount: '1000' });
    for (const cumulative of [1000n, 2000n])
      expect((await h.verify(b.signer.sign(cumulative), reqs)).body['isValid']).toBe(true);
    expect(await typesOf(b.channelId)).toEqual(['channel.opened', 'voucher.accepted', 'voucher.accepted']);

    // The watcher reaches the opening: it is not recorded a second time.
    await h.f.watcher.tick();
    expect(await typesOf(b.channelId)).toEqual(['channel.opened', 'voucher.accepted', 'voucher.accepted']);
    // And what the payer's account ledger shows, newest first, ends with the opening.
    const ledger = (await (await fetch(`${h.url}/accounts/${b.keys.address}/ledger`)).json()) as {
      events: { type: string; data: Record<string, unknown> }[];
    };
    expect(ledger.events.map((e) => e.type)).toEqual(['voucher.accepted', 'voucher.accepted', 'channel.opened']);
    expect(ledger.events[2]!.data).toMatchObject({
      channelId: b.channelId.toString(),
      payer: b.keys.address,
      payee: seller.address,
      deposit: '5000000',
    });
  });

  it('records an opening the watcher reached first once, before any payment', async () => {
    const seller = randomKeypair();
    const b = await h.buyer({ payee: seller.address });
    await h.f.watcher.tick();
    expect(await h.f.store.getIdempotent(`opened:${b.channelId}`)).not.toBeNull();
    expect(
      (await h.verify(b.signer.sign(1000n), h.requirements({ payTo: seller.address, amount: '1000' }))).body['isValid'],
    ).toBe(true);
    expect(await typesOf(b.channelId)).toEqual(['channel.opened', 'voucher.accepted']);
  });

  it('records a claim the watcher reaches with the opening in the same page as covering the vouchers accepted', async () => {
    // Seen in CI under load: the watcher's page held the channel's opening and a claim of it; the
    // claim was judged against the channel as the opening event describes it (nothing accepted),
    // not as the store has it, so it was recorded covering null vouchers and the channel's
    // vouchersClaimed never moved.
    const seller = randomKeypair();
    const b = await h.buyer({ payee: seller.address });
    const reqs = h.requirements({ payTo: seller.address, amount: '1000' });
    for (let i = 1n; i <= 5n; i++) expect((await h.verify(b.signer.sign(1000n * i), reqs)).body['isValid']).toBe(true);
    // The payee claims on the ledger itself (anyone may): the facilitator learns of it only from the watcher.
    const voucher = b.signer.sign(5000n);
    const claim = await h.ledger.submit(seller, 'channel.claim', {
      channelId: b.channelId.toString(),
      cumulative: voucher.cumulative,
      signature: voucher.signature,
    });
    expect(claim.status).toBe('SUCCESS');
    await h.f.watcher.tick();
    const claimed = await h.f.store.events({ channelId: b.channelId, types: ['channel.claimed'], limit: 10 });
    expect(claimed.map((e) => e.data)).toEqual([
      expect.objectContaining({ amount: '5000', cumulative: '5000', vouchersCovered: 5, tx: claim.hash }),
    ]);
    const record = await h.f.store.getChannel(b.channelId);
    expect(record).toMatchObject({ claimed: 5000n, vouchers: 5, vouchersClaimed: 5 });
  });
});
