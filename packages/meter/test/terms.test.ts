// The 402 terms, built from the meter's options and the facilitator's /supported answer.
import { describe, expect, it } from 'vitest';
import {
  PaymentRequiredSchema,
  batchTermsOf,
  contractFromRaw,
  paymentIdentifierDeclaration,
  randomKeypair,
} from '@svc/core';
import type { SupportedResponse } from '@svc/core';
import { bazaarFor, paymentRequired, requirementsFor } from '@svc/meter';

const asset = contractFromRaw(new Uint8Array(32).fill(1));
const channelContract = contractFromRaw(new Uint8Array(32).fill(2));
const signer = randomKeypair().address;
const payTo = randomKeypair().address;
const extra = {
  asset,
  assetCode: 'USDC',
  decimals: 7,
  channelContract,
  areFeesSponsored: true,
  facilitator: 'https://f.example',
  receiptSigner: signer,
};
const supported: SupportedResponse = {
  kinds: [
    { x402Version: 1, scheme: 'channel', network: 'stellar:local', extra },
    { x402Version: 2, scheme: 'channel', network: 'stellar:local', extra },
  ],
  extensions: ['bazaar'],
  signers: { 'stellar:*': [signer] },
};

const perRequest = { price: 5000n, unit: 'request' as const, description: 'd' };

/** The 402 of a resource at https://seller.example/x priced per request, with the `channel` option only. */
function perRequest402(bazaar: ReturnType<typeof bazaarFor>) {
  return paymentRequired({
    error: 'PAYMENT_REQUIRED',
    source: 'gateway',
    message: 'm',
    resourceUrl: 'https://seller.example/x',
    terms: { channel: requirementsFor(perRequest, payTo, supported), batch: null },
    bazaar,
    options: perRequest,
  });
}

describe('payment terms', () => {
  it('per request: the price, a minimum deposit of 1000 units, no slice fields', () => {
    const r = requirementsFor({ price: 5000n, unit: 'request' }, payTo, supported);
    expect(r).toEqual({
      scheme: 'channel',
      network: 'stellar:local',
      asset,
      payTo,
      amount: '5000',
      unit: 'request',
      maxTimeoutSeconds: 60,
      extra: { channelContract, minDeposit: '5000000', facilitator: 'https://f.example', areFeesSponsored: true },
    });
  });

  it('per token and per second: slice size and price, a minimum deposit of 100 slices', () => {
    expect(requirementsFor({ price: 200n, unit: 'token', sliceTokens: 50 }, payTo, supported).extra).toEqual({
      channelContract,
      minDeposit: '1000000',
      facilitator: 'https://f.example',
      areFeesSponsored: true,
      sliceTokens: 50,
      sliceAmount: '10000',
    });
    expect(requirementsFor({ price: 1000n, unit: 'second' }, payTo, supported).extra).toMatchObject({
      sliceSeconds: 10,
      sliceAmount: '10000',
      minDeposit: '1000000',
    });
  });

  it('derives discovery metadata from the method and unit, and keeps what the seller gives', () => {
    expect(bazaarFor({ price: 1n, unit: 'request' }, 'GET', new URLSearchParams('q=a&n=2'))).toEqual({
      info: {
        input: { type: 'http', method: 'GET', queryParams: { q: 'a', n: '2' } },
        output: { type: 'json', mimeType: 'application/json' },
      },
      schema: {},
    });
    expect(bazaarFor({ price: 1n, unit: 'second' }, 'GET', new URLSearchParams()).info.output.mimeType).toBe(
      'text/event-stream',
    );
    const given = bazaarFor(
      {
        price: 1n,
        unit: 'request',
        bazaar: { info: { output: { type: 'json', mimeType: 'application/geo+json' } }, schema: { type: 'object' } },
      },
      'POST',
      new URLSearchParams(),
    );
    expect(given.info.output.mimeType).toBe('application/geo+json');
    expect(given.info.input.method).toBe('POST');
    expect(given.schema).toEqual({ type: 'object' });
  });

  it('builds a 402 body that its own schema accepts', () => {
    const body = perRequest402(bazaarFor(perRequest, 'GET', new URLSearchParams()));
    expect(PaymentRequiredSchema.parse(body)).toEqual(body);
    expect(body.resource).toEqual({ url: 'https://seller.example/x', description: 'd', mimeType: 'application/json' });
  });

  it('echoes a bounded part of the query: a long or crowded one keeps the 402 within its schema and PAYMENT-REQUIRED small', () => {
    const query = new URLSearchParams();
    query.append('n'.repeat(300), '1'); // a name past the schema's 256
    query.append('big', 'y'.repeat(5000)); // a value past the budget
    query.append('q', 'a');
    for (let i = 0; i < 40; i++) query.append(`p${i}`, String(i));
    query.append('q', 'b'); // a repeated name past the cut: not kept, so the first value stands
    const bazaar = bazaarFor(perRequest, 'GET', query);
    const echoed = bazaar.info.input.queryParams!;
    expect(Object.keys(echoed)).toEqual(['q', ...Array.from({ length: 15 }, (_, i) => `p${i}`)]);
    expect(echoed['q']).toBe('a');
    const body = perRequest402(bazaar);
    expect(PaymentRequiredSchema.parse(body)).toEqual(body);
    // The whole query was over 5 KB; its echo in the header stays a small part of 16 KiB.
    expect(Buffer.from(JSON.stringify(body)).toString('base64').length).toBeLessThan(4096);
    // A name that would set a prototype is kept as data, not as the object's prototype.
    const proto = bazaarFor(perRequest, 'GET', new URLSearchParams('__proto__=1')).info.input.queryParams!;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__']);
  });

  it('declares payment-identifier (not required) with the batch-settlement option only: a channel-only 402 is unchanged', () => {
    const options = { price: 5000n, unit: 'request' as const };
    const channel = requirementsFor(options, payTo, supported);
    const bazaar = bazaarFor(options, 'GET', new URLSearchParams());
    const context = {
      error: 'PAYMENT_REQUIRED',
      source: 'gateway' as const,
      message: 'm',
      resourceUrl: 'https://s.example/x',
      bazaar,
      options,
    };
    const channelOnly = paymentRequired({ ...context, terms: { channel, batch: null } });
    expect(Object.keys(channelOnly.extensions)).toEqual(['bazaar']);
    const both = paymentRequired({ ...context, terms: { channel, batch: batchTermsOf(channel, signer) } });
    expect(both.extensions).toEqual({ bazaar, 'payment-identifier': paymentIdentifierDeclaration() });
    expect(both.extensions['payment-identifier']?.info).toEqual({ required: false });
    expect(PaymentRequiredSchema.parse(both)).toEqual(both);
    expect(PaymentRequiredSchema.parse(channelOnly)).toEqual(channelOnly);
  });
});
