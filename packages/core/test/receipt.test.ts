import { describe, expect, it } from 'vitest';
import {
  ReceiptSchema,
  fromHex,
  keypairFromSeed,
  randomKeypair,
  receiptBytes,
  requestHash,
  sha256,
  signReceipt,
  toHex,
  utf8,
  verifyReceipt,
} from '@svc/core';
import type { ReceiptBody } from '@svc/core';

const facilitator = keypairFromSeed(fromHex('07'.repeat(32), 32));
const body: ReceiptBody = {
  v: 1,
  network: 'stellar:local',
  signer: facilitator.address,
  channelId: '42',
  payer: randomKeypair().address,
  payee: randomKeypair().address,
  resource: 'https://seller.example/demo/book',
  method: 'GET',
  unit: 'request',
  amount: '5000',
  cumulative: '135000',
  requestHash: requestHash('GET', 'https://seller.example/demo/book', null),
  ts: '2026-11-22T10:00:00.000Z',
};

describe('receipts (docs/protocol.md#receipts)', () => {
  it('signs JCS bytes without id and signature; id is their sha256', () => {
    const receipt = signReceipt(facilitator, body);
    expect(ReceiptSchema.parse(receipt)).toEqual(receipt);
    const bytes = receiptBytes(body);
    expect(new TextDecoder().decode(bytes).startsWith('{"amount":"5000","channelId":"42","cumulative":"135000"')).toBe(
      true,
    );
    expect(receipt.id).toBe(toHex(sha256(bytes)));
    expect(Object.keys(receipt)[1]).toBe('id');
  });

  it('verifies offline, with and without a trusted signer list', () => {
    const receipt = signReceipt(facilitator, body);
    expect(verifyReceipt(receipt)).toEqual({ ok: true });
    expect(verifyReceipt(receipt, [facilitator.address])).toEqual({ ok: true });
    expect(verifyReceipt(JSON.parse(JSON.stringify(receipt)))).toEqual({ ok: true });
  });

  it('refuses a tampered amount, a foreign signer, a wrong id and a non-receipt', () => {
    const receipt = signReceipt(facilitator, body);
    expect(verifyReceipt({ ...receipt, amount: '5001' })).toMatchObject({ ok: false });
    expect(verifyReceipt(receipt, [randomKeypair().address])).toEqual({ ok: false, reason: 'signer is not trusted' });
    const other = randomKeypair();
    const forged = signReceipt(other, { ...body, signer: facilitator.address });
    expect(verifyReceipt(forged)).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyReceipt({ ...receipt, id: '00'.repeat(32) })).toMatchObject({ ok: false });
    expect(verifyReceipt({ hello: 1 })).toEqual({ ok: false, reason: 'not a receipt' });
  });

  it('hashes METHOD \\n URL \\n body', () => {
    expect(requestHash('post', 'http://a/b?c=1', '{"x":1}')).toBe(toHex(sha256(utf8('POST\nhttp://a/b?c=1\n{"x":1}'))));
    expect(requestHash('GET', 'http://a/', null)).toBe(toHex(sha256(utf8('GET\nhttp://a/\n'))));
  });
});

describe('receipt signing off the main thread', () => {
  it('signReceiptAsync gives the same receipt as signReceipt', async () => {
    const { signReceiptAsync } = await import('@svc/core');
    expect(await signReceiptAsync(facilitator, body)).toEqual(signReceipt(facilitator, body));
  });
});
