// The svc facilitator's GET /supported, POST /verify and POST /settle as the official x402 2.x
// facilitator client (HTTPFacilitatorClient from @x402/core) parses them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentResponseSchema, randomKeypair, verifyReceipt } from '@svc/core';
import type { PaymentRequirements as SvcRequirements } from '@svc/core';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { SvcFacilitatorClient } from '../src/index.js';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Harness } from '../../facilitator/test/helpers/harness.js';

describe('svc facilitator ↔ @x402/core HTTPFacilitatorClient', () => {
  let h: Harness;
  let client: HTTPFacilitatorClient;
  beforeAll(async () => {
    h = await startHarness();
    client = new HTTPFacilitatorClient({ url: h.url });
  });
  afterAll(() => h.close());

  const asX402 = (r: SvcRequirements) => r as unknown as PaymentRequirements;
  const payloadFor = (reqs: SvcRequirements, payload: Record<string, unknown>): PaymentPayload => ({
    x402Version: 2,
    accepted: asX402(reqs),
    payload,
    resource: { url: `${h.url}/paid/thing`, description: '', mimeType: '' },
  });

  it('GET /supported parses: kinds, extensions, signers', async () => {
    const supported = await client.getSupported();
    const info = await h.ledger.info();
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ x402Version: 2, scheme: 'channel', network: 'stellar:local' }),
    );
    expect(supported.kinds[0]!.extra).toMatchObject({
      asset: info.contracts.asset,
      assetCode: 'USDC',
      decimals: 7,
      channelContract: info.contracts.channel,
    });
    expect(supported.signers['stellar:*']).toEqual([h.f.address]);
    expect(Array.isArray(supported.extensions)).toBe(true);
  });

  it('POST /verify: a valid voucher is isValid true with the payer', async () => {
    const b = await h.buyer();
    const reqs = h.requirements();
    const result = await client.verify(payloadFor(reqs, b.signer.next(5000n)), asX402(reqs));
    expect(result).toMatchObject({ isValid: true, payer: b.keys.address });
  });

  it('POST /verify: a rejected payment is 200 with isValid false and the reason, not an error', async () => {
    const b = await h.buyer({ payee: randomKeypair().address });
    const reqs = h.requirements();
    await expect(client.verify(payloadFor(reqs, b.signer.next(5000n)), asX402(reqs))).resolves.toMatchObject({
      isValid: false,
      invalidReason: 'WRONG_PAYEE',
    });
    await expect(
      client.verify(payloadFor(reqs, { channelId: '1', cumulative: '1.5', signature: 'zz' }), asX402(reqs)),
    ).resolves.toMatchObject({ isValid: false, invalidReason: 'PAYMENT_MALFORMED' });
  });

  it('POST /verify: the official client keeps the svc receipt in `extra`, and the attest token for the seller’s side', async () => {
    const b = await h.buyer();
    const reqs = h.requirements();
    const result = await client.verify(payloadFor(reqs, b.signer.next(5000n)), asX402(reqs));
    const receipt = PaymentResponseSchema.parse(result.extra?.['receipt']);
    expect(verifyReceipt(receipt.receipt, [h.f.address])).toEqual({ ok: true });
    expect(result.extra).not.toHaveProperty('attestToken');
    // A seller on the official middleware sends its seller token through createAuthHeaders.
    const token = h.sellerToken(reqs.payTo);
    const asSeller = new HTTPFacilitatorClient({
      url: h.url,
      createAuthHeaders: () =>
        Promise.resolve({
          verify: { authorization: `Bearer ${token}` },
          settle: { authorization: `Bearer ${token}` },
          supported: {},
        }),
    });
    const signed = await asSeller.verify(payloadFor(reqs, b.signer.sign(10_000n)), asX402(reqs));
    expect(signed.extra).toMatchObject({
      receipt: { cumulative: '10000' },
      attestToken: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('requests the official client can build but svc does not take are refusals it understands, not errors', async () => {
    const b = await h.buyer();
    const reqs = h.requirements();
    const exact = { ...asX402(reqs), scheme: 'exact', extra: {} };
    await expect(client.verify(payloadFor(reqs, b.signer.next(5000n)), exact)).resolves.toMatchObject({
      isValid: false,
      invalidReason: 'UNSUPPORTED_SCHEME',
    });
    await expect(client.settle(payloadFor(reqs, b.signer.next(5000n)), exact)).resolves.toMatchObject({
      success: false,
      errorReason: 'UNSUPPORTED_SCHEME',
    });
    const v3 = { ...payloadFor(reqs, b.signer.next(5000n)), x402Version: 3 };
    await expect(client.verify(v3, asX402(reqs))).resolves.toMatchObject({
      isValid: false,
      invalidReason: 'UNSUPPORTED_VERSION',
    });
    const { extra: _extra, ...noExtra } = reqs;
    await expect(
      client.verify(payloadFor(reqs, b.signer.next(5000n)), noExtra as unknown as PaymentRequirements),
    ).resolves.toMatchObject({
      isValid: false,
      invalidReason: 'PAYMENT_MALFORMED',
      invalidMessage: expect.stringMatching(/extra/),
    });
    // A body that is not a verify request at all stays a 400.
    const junk = await fetch(`${h.url}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(junk.status).toBe(400);
  });

  it('POST /settle: confirms the verified voucher (success, transaction "", network, payer)', async () => {
    const b = await h.buyer();
    const reqs = h.requirements();
    const payload = payloadFor(reqs, b.signer.next(5000n));
    expect((await client.verify(payload, asX402(reqs))).isValid).toBe(true);
    const settled = await client.settle(payload, asX402(reqs));
    expect(settled).toMatchObject({ success: true, transaction: '', network: 'stellar:local', payer: b.keys.address });
    // The stock client keeps only the x402 fields and `extra`: the svc receipt travels in `extra`.
    expect(settled).not.toHaveProperty('receipt');
    expect(settled).toMatchObject({
      amount: '5000',
      extra: { scheme: 'channel', cumulative: '5000', receipt: { payer: b.keys.address } },
    });
  });

  it('POST /settle: a rejected payment is 200 with success false and the reason', async () => {
    const b = await h.buyer();
    const reqs = h.requirements();
    const tampered = { ...b.signer.sign(5000n), cumulative: '10000' };
    await expect(client.settle(payloadFor(reqs, tampered), asX402(reqs))).resolves.toMatchObject({
      success: false,
      errorReason: 'VOUCHER_BAD_SIGNATURE',
      transaction: '',
      network: 'stellar:local',
    });
    await expect(client.settle(payloadFor(reqs, b.signer.sign(5000n)), asX402(reqs))).resolves.toMatchObject({
      success: true,
      payer: b.keys.address,
    });
  });

  it('SvcFacilitatorClient.settle keeps the svc receipt, which verifies offline', async () => {
    const svc = new SvcFacilitatorClient({ url: h.url });
    const b = await h.buyer();
    const reqs = h.requirements();
    const payload = payloadFor(reqs, b.signer.next(5000n));
    expect((await svc.verify(payload, asX402(reqs))).isValid).toBe(true);
    const settled = PaymentResponseSchema.parse(await svc.settle(payload, asX402(reqs)));
    expect(verifyReceipt(settled.receipt, [h.f.address])).toEqual({ ok: true });
    expect(settled.receipt).toMatchObject({
      resource: `${h.url}/paid/thing`,
      cumulative: '5000',
      payer: b.keys.address,
    });
    await expect(
      svc.settle(payloadFor(reqs, { ...b.signer.sign(5000n), channelId: '999999' }), asX402(reqs)),
    ).resolves.toMatchObject({ success: false, errorReason: 'CHANNEL_NOT_FOUND' });
  });
});
