// ChannelSchemeServer: requirements filled from the facilitator's /supported kind, in svc's shape.
import { describe, expect, it } from 'vitest';
import { PaymentRequiredSchema, PaymentRequirementsSchema, contractFromRaw, randomBytes } from '@svc/core';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ChannelSchemeServer, decorateForSvcBuyers } from '../src/index.js';
import { fixture } from './helpers/fixtures.js';

const base = (payTo: string, extra: Record<string, unknown> = {}): PaymentRequirements => ({
  scheme: 'channel',
  network: 'stellar:local',
  asset: '',
  amount: '5000',
  payTo,
  maxTimeoutSeconds: 60,
  extra,
});

describe('ChannelSchemeServer.enhancePaymentRequirements', () => {
  const server = new ChannelSchemeServer();

  it('fills the asset, unit and extra from the kind, with minDeposit = 1000 × the price', async () => {
    const f = fixture();
    const out = await server.enhancePaymentRequirements(base(f.payTo), f.kind, []);
    expect(out).toEqual({
      scheme: 'channel',
      network: 'stellar:local',
      asset: f.asset,
      amount: '5000',
      payTo: f.payTo,
      maxTimeoutSeconds: 60,
      unit: 'request',
      extra: {
        channelContract: f.channelContract,
        minDeposit: '5000000',
        facilitator: 'http://127.0.0.1:9',
        areFeesSponsored: true,
      },
    });
    expect(PaymentRequirementsSchema.safeParse(out).success).toBe(true);
  });

  it('keeps a route’s minDeposit and other extra keys, but the facilitator’s contract wins', async () => {
    const f = fixture();
    const out = await new ChannelSchemeServer({ minDepositUnits: 10n }).enhancePaymentRequirements(
      base(f.payTo, { minDeposit: '123', note: 'x', channelContract: contractFromRaw(randomBytes(32)) }),
      f.kind,
      [],
    );
    expect(out.extra).toEqual({
      note: 'x',
      channelContract: f.channelContract,
      minDeposit: '123',
      facilitator: 'http://127.0.0.1:9',
      areFeesSponsored: true,
    });
    const scaled = await new ChannelSchemeServer({ minDepositUnits: 10n }).enhancePaymentRequirements(
      base(f.payTo),
      f.kind,
      [],
    );
    expect(scaled.extra['minDeposit']).toBe('50000');
  });

  it('accepts the asset by contract or ticker and refuses another one', async () => {
    const f = fixture();
    expect((await server.enhancePaymentRequirements({ ...base(f.payTo), asset: 'usdc' }, f.kind, [])).asset).toBe(
      f.asset,
    );
    expect((await server.enhancePaymentRequirements({ ...base(f.payTo), asset: f.asset }, f.kind, [])).asset).toBe(
      f.asset,
    );
    await expect(
      server.enhancePaymentRequirements({ ...base(f.payTo), asset: contractFromRaw(randomBytes(32)) }, f.kind, []),
    ).rejects.toThrow(/settles in/);
  });

  it('refuses terms svc cannot settle: a bad payee, a bad minDeposit, a foreign kind', async () => {
    const f = fixture();
    await expect(server.enhancePaymentRequirements(base('0xabc'), f.kind, [])).rejects.toThrow(/payTo/);
    await expect(server.enhancePaymentRequirements(base(f.payTo, { minDeposit: 5 }), f.kind, [])).rejects.toThrow(
      /minDeposit/,
    );
    const foreign = { x402Version: 2, scheme: 'channel', network: 'stellar:local' as const, extra: { feePayer: 'x' } };
    await expect(server.enhancePaymentRequirements(base(f.payTo), foreign, [])).rejects.toThrow(
      /not a svc channel kind/,
    );
    expect(server.validateFacilitatorSupport('stellar:local', foreign)).toMatch(/not a svc channel kind/);
    expect(server.validateFacilitatorSupport('stellar:local', f.kind)).toBeUndefined();
  });

  it('declares the authorization flow and 7 decimals', () => {
    expect(server.scheme).toBe('channel');
    expect(server.paymentFlows[server.defaultAssetTransferMethod]).toEqual({
      supported: ['authorization'],
      default: 'authorization',
    });
    expect(server.getAssetDecimals('C', 'stellar:local')).toBe(7);
  });
});

describe('decorateForSvcBuyers', () => {
  const terms = async () => {
    const f = fixture();
    return [await new ChannelSchemeServer().enhancePaymentRequirements(base(f.payTo), f.kind, [])];
  };
  const decorate = (res: PaymentRequired, method = 'get') => {
    decorateForSvcBuyers({
      requirements: res.accepts,
      resourceInfo: res.resource,
      paymentRequiredResponse: res,
      transportContext: { request: { method } },
    });
    return res as PaymentRequired & Record<string, unknown>;
  };

  it('makes an official 402 readable by svc buyers (source, message, bazaar)', async () => {
    const res = decorate({
      x402Version: 2,
      error: 'Payment required',
      resource: { url: 'http://127.0.0.1:1/w', description: '', mimeType: '' },
      accepts: await terms(),
    });
    expect(res['source']).toBe('gateway');
    expect(res['message']).toMatch(/PAYMENT-SIGNATURE/);
    expect(PaymentRequiredSchema.safeParse(res).success).toBe(true);
    expect((res.extensions?.['bazaar'] as { info: { input: { method: string } } }).info.input.method).toBe('GET');
  });

  it('marks a facilitator rejection and keeps a route’s own bazaar declaration', async () => {
    const own = {
      info: { input: { type: 'http', method: 'POST' }, output: { type: 'json', mimeType: 'application/json' } },
      schema: { x: 1 },
    };
    const res = decorate({
      x402Version: 2,
      error: 'WRONG_PAYEE',
      resource: { url: 'http://127.0.0.1:1/w', description: '', mimeType: '' },
      accepts: await terms(),
      extensions: { bazaar: own },
    });
    expect(res['source']).toBe('facilitator');
    expect(res['message']).not.toBe('');
    expect(res.extensions?.['bazaar']).toBe(own);
  });
});
