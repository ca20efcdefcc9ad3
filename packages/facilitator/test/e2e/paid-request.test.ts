// The paid request, end to end: a buyer funded by the faucet opens a channel and pays /demo/book
// 200 times; every receipt verifies offline; the claim scheduler settles exactly what was earned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJsonHeader, verifyReceipt } from '@svc/core';
import { payFetch } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Buyer, Harness } from '../helpers/harness.js';

const PAYMENTS = 200;
const PRICE = 5000n;

// The receipt is signed on the threadpool, or on the main thread on machines of two cores or
// fewer (VerifierDeps.signReceiptsInline): both ways are held to the same receipts.
describe.each([
  ['the threadpool', false],
  ['the main thread', true],
])('paying /demo/book on the embedded default, receipts signed on %s', (_where, inline) => {
  let h: Harness;
  let buyer: Buyer;

  beforeAll(async () => {
    h = await startHarness({}, { signReceiptsInline: inline });
    buyer = await h.buyer({ deposit: 5_000_000n });
  });
  afterAll(() => h.close());

  it(`pays ${PAYMENTS} times; every answer is 200 with a receipt that verifies offline`, async () => {
    const signers = (await (await fetch(`${h.url}/supported`)).json()) as { signers: Record<string, string[]> };
    const trusted = Object.values(signers.signers).flat();
    expect(trusted).toEqual([h.f.address]);
    let previous = 0n;
    for (let i = 1; i <= PAYMENTS; i++) {
      const res = await payFetch(`${h.url}/demo/book`, {}, { signer: buyer.signer });
      expect(res.status).toBe(200);
      const header = decodeJsonHeader(res.headers.get('payment-response')!);
      expect(header.ok).toBe(true);
      const receipt = res.payment!.receipt;
      expect(verifyReceipt(receipt, trusted)).toEqual({ ok: true });
      expect(BigInt(receipt.cumulative)).toBe(previous + PRICE);
      expect(receipt).toMatchObject({
        payee: buyer.payee,
        payer: buyer.keys.address,
        amount: '5000',
        unit: 'request',
        method: 'GET',
      });
      expect(receipt.resource).toBe(`${h.url}/demo/book`);
      const body = (await res.json()) as { title: string };
      expect(body.title).toBeTruthy();
      previous = BigInt(receipt.cumulative);
    }
    const view = (await (await fetch(`${h.url}/channels/${buyer.channelId}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ lastAccepted: String(PRICE * BigInt(PAYMENTS)), vouchers: PAYMENTS, claimed: '0' });
  });

  it('the claim scheduler settles on the ledger and the payee balance rises by exactly what was earned', async () => {
    const earned = PRICE * BigInt(PAYMENTS);
    const before = await h.ledger.balance(buyer.payee);
    await h.f.scheduler.tick();
    const after = await h.ledger.balance(buyer.payee);
    expect(after - before).toBe(earned);
    const onLedger = await h.ledger.channel(buyer.channelId);
    expect(onLedger?.claimed).toBe(earned.toString());
    await h.f.watcher.tick();
    const view = (await (await fetch(`${h.url}/channels/${buyer.channelId}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ claimed: earned.toString(), unclaimed: '0', vouchersSinceClaim: 0 });
    const claims = await h.f.store.events({ limit: 10, types: ['channel.claimed'] });
    expect(claims).toHaveLength(1);
    expect(claims[0]!.data).toMatchObject({ amount: earned.toString(), vouchersCovered: PAYMENTS });
  });
});
