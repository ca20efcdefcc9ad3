// The client vectors of the Stellar binding (docs/schemes/scheme_batch_settlement_stellar.vectors.json),
// run through the buyer's scheme client. `paymentResponse`: a paid answer is adopted when its charge
// adds up, else the client signs no more on the channel. `corrective`: for each case the client, with its books as given, pays the vector's terms (its
// voucher must be the vector's `sentVoucher`, byte for byte), is answered a corrective 402 carrying
// the case's channelState and voucherState, and must reach the case's outcome — adopt (the books
// move to the proved charged total, @x402/fetch retries, the next voucher is that total plus the
// price), unchanged (nothing to adopt, no retry), or refuse (books kept, no retry, the reason logged).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromHex, keypairFromSeed } from '@svc/core';
import type { BatchRequirements } from '@svc/core';
import { ChannelSigner } from '@svc/sdk';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { BatchSettlementStellarScheme } from '../src/batch-settlement/client.js';

type Outcome =
  | { outcome: 'adopt'; chargedCumulativeAmount: string; nextMaxClaimableAmount: string }
  | { outcome: 'unchanged' }
  | { outcome: 'refuse'; reason: keyof typeof REASONS };

interface Case {
  name: string;
  client: { chargedCumulativeAmount: string; signedMaxClaimable: string };
  sentVoucher: { channelId: string; maxClaimableAmount: string; signature: string };
  extra: Record<string, unknown>;
  expected: Outcome;
}

interface Corrective {
  network: string;
  networkPassphrase: string;
  voucherSeedHex: string;
  channelId: string;
  deposit: string;
  price: string;
  cases: Case[];
}

interface PaymentResponses {
  client: { chargedCumulativeAmount: string; signedMaxClaimable: string };
  sentVoucher: { channelId: string; maxClaimableAmount: string; signature: string };
  cases: {
    name: string;
    extra: Record<string, unknown>;
    expected:
      | { outcome: 'adopt'; chargedCumulativeAmount: string; nextMaxClaimableAmount: string }
      | { outcome: 'stop'; reason: keyof typeof STOPS };
  }[];
}

/** What the client's log says for each reason to stop that the binding names. */
const STOPS = {
  charge_above_price: /charged \d+, above the price of \d+/,
  total_mismatch: /is not the \d+ charged before plus the \d+ charged now/,
  channel_mismatch: /the answer is for channel/,
  no_charge: /the answer says no charge/,
  no_channel_state: /the answer has no channel state/,
} as const;

/** What the client's log says for each reason the binding names. */
const REASONS = {
  voucher_not_client_key: /was not signed by this channel's voucher key/,
  charged_above_voucher: /charged, above its voucher's/,
  charged_below_claimed: /charged, below the \d+ claimed on the ledger/,
  channel_mismatch: /the 402's state is for channel/,
  no_voucher_state: /shows no voucher to prove its state/,
} as const;

const MISMATCH = 'invalid_batch_settlement_stellar_cumulative_amount_mismatch';
const vectors = JSON.parse(
  readFileSync(new URL('../../../docs/schemes/scheme_batch_settlement_stellar.vectors.json', import.meta.url), 'utf8'),
) as { paymentRequirements: BatchRequirements; paymentResponse: PaymentResponses; corrective: Corrective };
const terms = vectors.paymentRequirements;
const corrective = vectors.corrective;
const asX402 = (t: object) => t as PaymentRequirements;

function clientFor(c: { client: Case['client'] }) {
  const signer = new ChannelSigner({
    channelId: BigInt(corrective.channelId),
    deposit: BigInt(corrective.deposit),
    voucherKey: keypairFromSeed(fromHex(corrective.voucherSeedHex, 32)),
    networkPassphrase: corrective.networkPassphrase,
    channelContract: terms.extra.channelContract,
    network: corrective.network,
    payee: terms.payTo,
    asset: terms.asset,
    cumulative: BigInt(c.client.chargedCumulativeAmount),
    signed: BigInt(c.client.signedMaxClaimable),
    receiverAuthorizer: terms.extra.receiverAuthorizer,
  });
  const logs: string[] = [];
  const client = new BatchSettlementStellarScheme(
    { signerFor: () => Promise.resolve(signer) },
    { log: (line) => logs.push(line) },
  );
  const pay = async (): Promise<PaymentPayload> => {
    const result = await client.createPaymentPayload(2, asX402(terms));
    return { x402Version: 2, accepted: asX402(terms), payload: result.payload };
  };
  return { signer, client, logs, pay };
}

function paymentRequired(extra: Record<string, unknown>): PaymentRequired {
  return {
    x402Version: 2,
    error: MISMATCH,
    resource: { url: 'https://seller.example/r' },
    accepts: [asX402({ ...terms, extra: { ...terms.extra, ...extra } })],
  };
}

describe('corrective 402 vectors of the binding', () => {
  it('cover adopting, not retrying and every reason to refuse', () => {
    const seen = new Set(
      corrective.cases.map((c) => (c.expected.outcome === 'refuse' ? c.expected.reason : c.expected.outcome)),
    );
    expect([...seen].sort()).toEqual(['adopt', 'unchanged', ...Object.keys(REASONS)].sort());
  });

  for (const c of corrective.cases) {
    it(`${c.name}: ${c.expected.outcome}`, async () => {
      const { signer, client, logs, pay } = clientFor(c);
      const sent = await pay();
      expect(sent.payload).toEqual({ type: 'voucher', voucher: c.sentVoucher });
      const result = await client.schemeHooks.onPaymentResponse!({
        paymentPayload: sent,
        requirements: sent.accepted,
        paymentRequired: paymentRequired(c.extra),
      });
      const before = BigInt(c.client.chargedCumulativeAmount);
      const { expected } = c;
      if (expected.outcome === 'adopt') {
        expect(result).toEqual({ recovered: true });
        expect(signer.cumulative).toBe(BigInt(expected.chargedCumulativeAmount));
        expect(logs).toEqual([]);
        const next = await pay();
        expect((next.payload as { voucher: { maxClaimableAmount: string } }).voucher.maxClaimableAmount).toBe(
          expected.nextMaxClaimableAmount,
        );
        return;
      }
      expect(result).toBeUndefined();
      expect(signer.cumulative).toBe(before);
      if (expected.outcome === 'unchanged') {
        expect(logs).toEqual([]);
        return;
      }
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(REASONS[expected.reason]);
    });
  }
});

describe('payment-response vectors of the binding', () => {
  const paid = vectors.paymentResponse;

  it('cover adopting and every reason to stop', () => {
    const seen = new Set(paid.cases.map((c) => (c.expected.outcome === 'stop' ? c.expected.reason : 'adopt')));
    expect([...seen].sort()).toEqual(['adopt', ...Object.keys(STOPS)].sort());
  });

  for (const c of paid.cases) {
    it(`${c.name}: ${c.expected.outcome}`, async () => {
      const { signer, client, logs, pay } = clientFor(paid);
      const sent = await pay();
      expect(sent.payload).toEqual({ type: 'voucher', voucher: paid.sentVoucher });
      const result = await client.schemeHooks.onPaymentResponse!({
        paymentPayload: sent,
        requirements: sent.accepted,
        settleResponse: { success: true, transaction: '', network: sent.accepted.network, amount: '', extra: c.extra },
      });
      expect(result).toBeUndefined();
      const { expected } = c;
      if (expected.outcome === 'adopt') {
        expect(signer.cumulative).toBe(BigInt(expected.chargedCumulativeAmount));
        expect(logs).toEqual([]);
        const next = await pay();
        expect((next.payload as { voucher: { maxClaimableAmount: string } }).voucher.maxClaimableAmount).toBe(
          expected.nextMaxClaimableAmount,
        );
        return;
      }
      expect(signer.cumulative).toBe(BigInt(paid.client.chargedCumulativeAmount));
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(STOPS[expected.reason]);
      await expect(pay()).rejects.toThrow(/is not used any more by this client/);
    });
  }
});
