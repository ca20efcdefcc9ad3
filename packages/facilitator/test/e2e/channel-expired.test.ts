// A channel past its expiry ledger takes no voucher, and its payer can take the deposit back: GET
// /channels/:id says `expired`, not `open` with a negative expiresInLedgers. Its seller can still
// claim what it was paid until the channel is closed, so the view keeps what is unclaimed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

describe('GET /channels/:id of a channel past its expiry', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off', VOUCHER_EXPIRY_SAFETY_LEDGERS: '1' });
  });
  afterAll(() => h.close());

  it('is `expired`, with what is still unclaimed; open before its expiry ledger', async () => {
    const latest = (await h.ledger.info()).latestLedger;
    const b = await h.buyer({ expiryLedger: latest + 4 });
    expect((await h.verify(b.signer.next(5000n))).body['isValid']).toBe(true);
    const view = async () =>
      (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as Record<string, unknown>;
    expect(await view()).toMatchObject({ status: 'open', unclaimed: '5000' });
    await expect
      .poll(async () => (await h.ledger.info()).latestLedger, { timeout: 15_000, interval: 250 })
      .toBeGreaterThanOrEqual(latest + 4);
    const after = await view();
    expect(after).toMatchObject({ status: 'expired', unclaimed: '5000' });
    expect(after['expiresInLedgers']).toBeLessThanOrEqual(0);
  });
});
