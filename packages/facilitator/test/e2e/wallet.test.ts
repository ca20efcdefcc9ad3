// The buyer's Wallet used as an agent uses it: many requests at once from one wallet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Wallet, payFetch } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

describe('a Wallet paying several requests at once', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('opens one channel for them all (one faucet grant, one open), and every request is paid', async () => {
    const wallet = Wallet.open({ ledgerUrl: `${h.url}/ledger` });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        payFetch(`${h.url}/demo/book`, {}, { signer: (terms) => wallet.signerFor(terms) }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(wallet.channels).toHaveLength(1);
    expect(wallet.channels[0]!.cumulative).toBe(30_000n);
  });
});
