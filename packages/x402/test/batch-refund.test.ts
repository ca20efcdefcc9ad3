// `scheme.refund(url, { amount? })` over real HTTP against a real svc facilitator: an @x402/fetch
// buyer pays the demo seller under batch-settlement, then takes back part of its unused deposit,
// then the rest; the channel's books follow (the deposit after the refund), a channel the wallet
// does not have is not opened to be refunded, and a refusal carries the facilitator's code.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchRefundError } from '@svc/core';
import { LocalLedgerClient, Wallet } from '@svc/sdk';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementStellarScheme } from '../src/batch-settlement/client.js';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Harness } from '../../facilitator/test/helpers/harness.js';

describe('BatchSettlementStellarScheme.refund', () => {
  let h: Harness;
  let ledger: LocalLedgerClient;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-batch-refund-'));

  beforeAll(async () => {
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600' });
    ledger = new LocalLedgerClient(`${h.url}/ledger`);
  });
  afterAll(async () => {
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('pays, then refunds part and then all of the unused deposit to the buyer’s account', async () => {
    const file = path.join(dir, 'wallet.json');
    const wallet = Wallet.open({ file });
    const scheme = await BatchSettlementStellarScheme.fromFacilitator(h.url, wallet, { log: () => undefined });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('stellar:*', scheme));
    for (let i = 0; i < 2; i++) expect((await pay(`${h.url}/demo/book`)).status).toBe(200);
    const signer = wallet.channels[0]!;
    const deposit = signer.deposit;
    const charged = signer.cumulative;
    expect(charged).toBeGreaterThan(0n);
    const before = await ledger.balance(wallet.buyer.address);

    const part = await scheme.refund(`${h.url}/demo/book`, { amount: 100_000n });
    expect(part.refunded).toBe(100_000n);
    expect(part.channelId).toBe(signer.channelId);
    expect(part.transaction).toMatch(/.+/);
    expect(part.channelState).toMatchObject({ balance: (deposit - 100_000n).toString(), refundNonce: '1' });
    expect(await ledger.balance(wallet.buyer.address)).toBe(before + 100_000n);
    expect(signer.deposit).toBe(deposit - 100_000n);
    // The wallet file keeps the lower deposit.
    expect(Wallet.open({ file }).channels[0]!.deposit).toBe(deposit - 100_000n);

    // The channel still pays, from what is left.
    expect((await pay(`${h.url}/demo/book`)).status).toBe(200);
    const chargedNow = signer.cumulative;

    // Everything else, under the next nonce (the client signs the nonce the facilitator shows).
    const rest = await scheme.refund(`${h.url}/demo/book`);
    expect(rest.refunded).toBe(deposit - 100_000n - chargedNow);
    expect(rest.channelState).toMatchObject({ refundNonce: '2', chargedCumulativeAmount: chargedNow.toString() });
    expect(await ledger.balance(wallet.buyer.address)).toBe(before + deposit - chargedNow);

    // Nothing is left: refused with the scheme's code.
    const none = await scheme.refund(`${h.url}/demo/book`).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(BatchRefundError);
    expect((none as BatchRefundError).code).toBe('invalid_batch_settlement_stellar_refund_no_balance');
  });

  it('opens no channel to refund one it does not have', async () => {
    const wallet = Wallet.open();
    const scheme = await BatchSettlementStellarScheme.fromFacilitator(h.url, wallet, { log: () => undefined });
    const err = await scheme.refund(`${h.url}/demo/book`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchRefundError);
    expect((err as BatchRefundError).code).toBe('no_channel');
    expect(wallet.channels).toHaveLength(0);
  });
});
