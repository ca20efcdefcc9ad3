// BatchSettlementStellarScheme (server): terms filled from the facilitator's batch-settlement kind,
// the corrective 402 built by @x402/core's resource server, a charge above the price refused, and
// the channel's reservation released when a handler or a settlement fails.
import { describe, expect, it } from 'vitest';
import { BatchRequirementsSchema, contractFromRaw, randomBytes } from '@svc/core';
import { x402ResourceServer } from '@x402/core/server';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleContext,
  SettleResponse,
  VerifiedPaymentCanceledContext,
} from '@x402/core/types';
import { BatchSettlementStellarScheme } from '../src/batch-settlement/server.js';
import { ChannelSchemeServer } from '../src/index.js';
import { fixture } from './helpers/fixtures.js';

const base = (payTo: string, extra: Record<string, unknown> = {}): PaymentRequirements => ({
  scheme: 'batch-settlement',
  network: 'stellar:local',
  asset: '',
  amount: '5000',
  payTo,
  maxTimeoutSeconds: 60,
  extra,
});

/** A facilitator client that records the settlements asked of it. */
function recordingFacilitator(answer: () => Promise<SettleResponse>) {
  const settled: { payload: PaymentPayload; requirements: PaymentRequirements }[] = [];
  const client: Pick<FacilitatorClient, 'settle'> = {
    settle: (payload, requirements) => {
      settled.push({ payload, requirements });
      return answer();
    },
  };
  return { client, settled };
}

const released = (): Promise<SettleResponse> =>
  Promise.resolve({ success: true, transaction: '', network: 'stellar:local', amount: '', extra: {} });

describe('BatchSettlementStellarScheme (server): terms', () => {
  const server = new BatchSettlementStellarScheme();

  it('fills the asset and extra from the batch-settlement kind: the authorizer, the unit and the unit price', async () => {
    const f = fixture();
    const out = await server.enhancePaymentRequirements(base(f.payTo), f.batchKind, []);
    expect(out).toEqual({
      scheme: 'batch-settlement',
      network: 'stellar:local',
      asset: f.asset,
      amount: '5000',
      payTo: f.payTo,
      maxTimeoutSeconds: 60,
      extra: {
        receiverAuthorizer: f.receiverAuthorizer,
        channelContract: f.channelContract,
        facilitator: 'http://127.0.0.1:9',
        minDeposit: '5000000',
        areFeesSponsored: true,
        unit: 'request',
        unitPrice: '5000',
      },
    });
    expect(BatchRequirementsSchema.safeParse(out).success).toBe(true);
    // Nothing per request: the buyer's echo of the terms matches them on the next request.
    expect(await server.enhancePaymentRequirements(base(f.payTo), f.batchKind, [])).toEqual(out);
  });

  it('keeps a route’s minDeposit and other keys, takes the asset by ticker, and the facilitator’s values win', async () => {
    const f = fixture();
    const out = await new BatchSettlementStellarScheme({ minDepositUnits: 10n }).enhancePaymentRequirements(
      {
        ...base(f.payTo, { minDeposit: '123', note: 'x', receiverAuthorizer: f.payTo }),
        asset: 'usdc',
      },
      f.batchKind,
      [],
    );
    expect(out.asset).toBe(f.asset);
    expect(out.extra).toMatchObject({ note: 'x', minDeposit: '123', receiverAuthorizer: f.receiverAuthorizer });
    const scaled = await new BatchSettlementStellarScheme({ minDepositUnits: 10n }).enhancePaymentRequirements(
      base(f.payTo),
      f.batchKind,
      [],
    );
    expect(scaled.extra['minDeposit']).toBe('50000');
  });

  it('refuses terms svc cannot settle: another asset, a bad payee or minDeposit, a channel kind', async () => {
    const f = fixture();
    await expect(
      server.enhancePaymentRequirements({ ...base(f.payTo), asset: contractFromRaw(randomBytes(32)) }, f.batchKind, []),
    ).rejects.toThrow(/settles in/);
    await expect(server.enhancePaymentRequirements(base('0xabc'), f.batchKind, [])).rejects.toThrow(/payTo/);
    await expect(server.enhancePaymentRequirements(base(f.payTo, { minDeposit: 5 }), f.batchKind, [])).rejects.toThrow(
      /minDeposit/,
    );
    await expect(server.enhancePaymentRequirements(base(f.payTo), f.kind, [])).rejects.toThrow(
      /not a svc batch-settlement kind/,
    );
    expect(server.validateFacilitatorSupport('stellar:local', f.kind)).toMatch(/not a svc batch-settlement kind/);
    expect(server.validateFacilitatorSupport('stellar:local', f.batchKind)).toBeUndefined();
    // And the channel scheme's server no longer takes a batch-settlement kind for its own.
    expect(new ChannelSchemeServer().validateFacilitatorSupport('stellar:local', f.batchKind)).toMatch(
      /not a svc channel kind/,
    );
  });

  it('declares the authorization flow, 7 decimals and prices in base or asset units', async () => {
    expect(server.scheme).toBe('batch-settlement');
    expect(server.paymentFlows[server.defaultAssetTransferMethod]).toEqual({
      supported: ['authorization'],
      default: 'authorization',
    });
    expect(server.getAssetDecimals('C', 'stellar:local')).toBe(7);
    await expect(server.parsePrice('$0.0005', 'stellar:local')).resolves.toEqual({ amount: '5000', asset: '' });
    await expect(server.parsePrice(0.01, 'stellar:local')).rejects.toThrow(/number/);
  });
});

describe('BatchSettlementStellarScheme (server): the corrective 402', () => {
  const correction = {
    channelState: {
      channelId: '7',
      balance: '1000000',
      totalClaimed: '0',
      chargedCumulativeAmount: '15000',
      refundNonce: '0',
      expiryLedger: 100,
    },
    voucherState: { signedMaxClaimable: '15000', signature: 'ab'.repeat(64) },
  };

  /** A resource server with both svc schemes, and the 402 it builds after the facilitator refused `payload`. */
  async function refused(extra: unknown, accepts?: (f: ReturnType<typeof fixture>) => PaymentRequirements[]) {
    const f = fixture();
    const scheme = new BatchSettlementStellarScheme();
    const server = new x402ResourceServer({} as FacilitatorClient)
      .register('stellar:local', new ChannelSchemeServer())
      .register('stellar:local', scheme)
      .register('stellar:testnet', scheme);
    const batch = f.batchTerms as unknown as PaymentRequirements;
    const offered = accepts ? accepts(f) : [f.terms as unknown as PaymentRequirements, batch];
    const payload: PaymentPayload = { x402Version: 2, accepted: batch, payload: {} };
    await scheme.schemeHooks.onAfterVerify!({
      paymentPayload: payload,
      requirements: batch,
      declaredExtensions: {},
      result: { isValid: false, invalidReason: 'x', ...(extra === undefined ? {} : { extra }) } as never,
    });
    const response = await server.createPaymentRequiredResponse(
      offered,
      { url: 'http://127.0.0.1:1/r' },
      'invalid_batch_settlement_stellar_cumulative_amount_mismatch',
      undefined,
      undefined,
      payload,
    );
    return { f, response };
  }

  it('adds the channel’s state and its voucher to the batch-settlement option, and only there', async () => {
    const { f, response } = await refused(correction);
    expect(response.accepts[0]!.extra).toEqual(f.terms.extra);
    expect(response.accepts[1]!.extra).toEqual({ ...f.batchTerms.extra, ...correction });
  });

  it('adds nothing for a refusal without a state, or with a broken one, and never throws', async () => {
    for (const extra of [undefined, { channelState: { channelId: 'x' } }, 'junk']) {
      const { f, response } = await refused(extra);
      expect(response.accepts[1]!.extra).toEqual(f.batchTerms.extra);
    }
  });

  it('leaves options on several networks alone (core lets each run add keys only to its own network’s)', async () => {
    const { f, response } = await refused(correction, (fx) => [
      fx.batchTerms as unknown as PaymentRequirements,
      { ...(fx.batchTerms as unknown as PaymentRequirements), network: 'stellar:testnet' },
    ]);
    expect(response.accepts.map((a) => a.extra)).toEqual([f.batchTerms.extra, f.batchTerms.extra]);
  });
});

describe('BatchSettlementStellarScheme (server): charges and releases', () => {
  function contexts() {
    const f = fixture();
    const accepted = f.batchTerms as unknown as PaymentRequirements;
    const paymentPayload: PaymentPayload = {
      x402Version: 2,
      accepted,
      payload: { type: 'voucher', voucher: { channelId: '7', maxClaimableAmount: '5000', signature: 'ab' } },
      resource: { url: 'http://127.0.0.1:1/r' },
    };
    const settle = (amount: string): SettleContext => ({
      paymentPayload,
      requirements: { ...accepted, amount },
      declaredExtensions: {},
      phase: 'after-handler',
    });
    return { f, accepted, paymentPayload, settle };
  }

  it('lets a charge up to the price through, and refuses one above it, releasing the channel', async () => {
    const { paymentPayload, settle } = contexts();
    const { client, settled } = recordingFacilitator(released);
    const hooks = new BatchSettlementStellarScheme({ facilitator: client }).schemeHooks;
    await expect(hooks.onBeforeSettle!(settle('5000'))).resolves.toBeUndefined();
    await expect(hooks.onBeforeSettle!(settle('1200'))).resolves.toBeUndefined();
    await expect(hooks.onBeforeSettle!(settle('0'))).resolves.toBeUndefined();
    expect(settled).toEqual([]);
    for (const charge of ['5001', '-1', '12.5']) {
      await expect(hooks.onBeforeSettle!(settle(charge))).resolves.toMatchObject({
        abort: true,
        reason: 'invalid_batch_settlement_stellar_charge_exceeds_signed_cumulative',
      });
    }
    expect(settled).toHaveLength(3);
    for (const s of settled) {
      expect(s.payload).toBe(paymentPayload);
      expect(s.requirements.amount).toBe('0');
    }
  });

  it('releases the channel when the handler fails or the settlement does: a /settle of 0 for the same payment', async () => {
    const { paymentPayload, settle } = contexts();
    const { client, settled } = recordingFacilitator(released);
    const hooks = new BatchSettlementStellarScheme({ facilitator: client }).schemeHooks;
    const canceled: VerifiedPaymentCanceledContext = {
      ...settle('5000'),
      phase: 'cancel',
      reason: 'handler_failed',
      responseStatus: 500,
      settledPhases: [],
    };
    await hooks.onVerifiedPaymentCanceled!(canceled);
    await hooks.onSettleFailure!({ ...settle('5000'), error: new Error('facilitator said no') });
    expect(settled.map((s) => [s.payload === paymentPayload, s.requirements.amount])).toEqual([
      [true, '0'],
      [true, '0'],
    ]);
  });

  it('never throws when the release fails: it says so', async () => {
    const { settle } = contexts();
    const logs: string[] = [];
    const down = recordingFacilitator(() => Promise.reject(new Error('connection refused')));
    const refusing = recordingFacilitator(() =>
      Promise.resolve({
        success: false,
        errorReason: 'invalid_batch_settlement_stellar_channel_busy',
        transaction: '',
        network: 'stellar:local',
      }),
    );
    for (const { client } of [down, refusing]) {
      const hooks = new BatchSettlementStellarScheme({ facilitator: client, log: (l) => logs.push(l) }).schemeHooks;
      await expect(
        hooks.onVerifiedPaymentCanceled!({ ...settle('5000'), reason: 'handler_threw', settledPhases: [] }),
      ).resolves.toBeUndefined();
    }
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatch(
      /could not release the channel after the handler did not succeed \(handler_threw\): connection refused/,
    );
    expect(logs[1]).toMatch(/did not release the channel.*channel_busy/);
  });

  it('reaches the facilitator named by the terms when given no client', async () => {
    const { settle } = contexts();
    const logs: string[] = [];
    const hooks = new BatchSettlementStellarScheme({ log: (l) => logs.push(l) }).schemeHooks;
    // The fixture's facilitator (127.0.0.1:9) does not listen: the attempt is what is seen.
    await hooks.onVerifiedPaymentCanceled!({ ...settle('5000'), reason: 'handler_failed', settledPhases: [] });
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/could not release the channel/);
  });
});
