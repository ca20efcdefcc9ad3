// Every reason code on the per-request path, each produced by a voucher crafted for it; none of
// them may answer 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerError, contractFromRaw, encodeJsonHeader, randomKeypair, toBase64, toHex, utf8 } from '@svc/core';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const IDENTITY = '01' + '00'.repeat(31);

describe('reason codes at /verify', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const rejected = async (payload: Parameters<Harness['verify']>[0], reqs?: Parameters<Harness['verify']>[1]) => {
    const res = await h.verify(payload, reqs);
    expect(res.status).toBe(200);
    expect(res.body['isValid']).toBe(false);
    return res.body['invalidReason'];
  };

  it('WRONG_PAYEE: the channel pays someone else', async () => {
    const b = await h.buyer();
    expect(await rejected(b.signer.next(5000n), h.requirements({ payTo: randomKeypair().address }))).toBe(
      'WRONG_PAYEE',
    );
  });

  it('VOUCHER_BAD_SIGNATURE: signed by a key that is not the channel’s voucher key', async () => {
    const b = await h.buyer();
    const other = await h.buyer();
    const forged = { ...b.signer.next(5000n), signature: other.signer.sign(5000n).signature };
    expect(await rejected(forged)).toBe('VOUCHER_BAD_SIGNATURE');
  });

  it('VOUCHER_BAD_SIGNATURE: R of small order, and the identity forgery R = identity, S = 0', async () => {
    const b = await h.buyer();
    const zeroS = IDENTITY + '00'.repeat(32);
    expect(await rejected({ channelId: b.channelId.toString(), cumulative: '5000', signature: zeroS })).toBe(
      'VOUCHER_BAD_SIGNATURE',
    );
    const good = b.signer.next(5000n).signature;
    const smallR = 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a' + good.slice(64);
    expect(await rejected({ channelId: b.channelId.toString(), cumulative: '5000', signature: smallR })).toBe(
      'VOUCHER_BAD_SIGNATURE',
    );
  });

  it('a small-order voucher key is refused when the channel is opened, and never verifies if one is stored', async () => {
    const payer = randomKeypair();
    await h.ledger.faucet(payer.address);
    const err = await h.ledger
      .submit(payer, 'channel.open', {
        payee: randomKeypair().address,
        deposit: '1000',
        voucherKey: IDENTITY,
        expiryLedger: 100_000,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe(27);
    // Defence in depth: a record holding the identity key (as a compromised store might) accepts nothing.
    const reqs = h.requirements();
    await h.f.store.write([
      {
        op: 'channel.insert',
        channel: {
          id: 7777n,
          network: reqs.network,
          channelContract: reqs.extra.channelContract,
          payer: payer.address,
          payee: reqs.payTo,
          asset: reqs.asset,
          voucherKey: IDENTITY,
          deposit: 10_000_000n,
          claimed: 0n,
          lastAccepted: 0n,
          lastSignature: null,
          charged: 0n,
          receiverAuthorizer: null,
          refundNonce: 0,
          reservation: null,
          expiryLedger: 1_000_000,
          status: 'open',
          vouchers: 0,
          vouchersClaimed: 0,
          openedAt: null,
          lastVoucherAt: null,
          closedAt: null,
          refunded: null,
          createdAt: new Date().toISOString(),
        },
      },
    ]);
    expect(await rejected({ channelId: '7777', cumulative: '5000', signature: IDENTITY + '00'.repeat(32) })).toBe(
      'VOUCHER_BAD_SIGNATURE',
    );
  });

  it('VOUCHER_NOT_INCREASING: the same voucher twice', async () => {
    const b = await h.buyer();
    const v = b.signer.next(5000n);
    expect((await h.verify(v)).body['isValid']).toBe(true);
    expect(await rejected(v)).toBe('VOUCHER_NOT_INCREASING');
  });

  it('VOUCHER_UNDERPAID: one base unit short of the price', async () => {
    const b = await h.buyer();
    expect(await rejected(b.signer.sign(4999n))).toBe('VOUCHER_UNDERPAID');
  });

  it('CHANNEL_EXHAUSTED: beyond the deposit', async () => {
    const b = await h.buyer({ deposit: 10_000n });
    const over = b.signer.sign(10_000n);
    const beyond = {
      ...over,
      cumulative: '15000',
      signature: toHex(h.f.services.vouchers.sign(b.voucherKey, b.channelId, 15_000n)),
    };
    expect(await rejected(beyond)).toBe('CHANNEL_EXHAUSTED');
  });

  it('CHANNEL_EXPIRING: within the safety margin of the expiry', async () => {
    const latest = (await h.ledger.info()).latestLedger;
    const b = await h.buyer({ expiryLedger: latest + 30 });
    expect(await rejected(b.signer.next(5000n))).toBe('CHANNEL_EXPIRING');
  });

  it('CHANNEL_CLOSED: the payee closed it', async () => {
    const payee = randomKeypair();
    const b = await h.buyer({ payee: payee.address });
    await h.ledger.closeChannel({ signer: payee, channelId: b.channelId });
    await h.f.watcher.tick();
    expect(await rejected(b.signer.next(5000n), h.requirements({ payTo: payee.address }))).toBe('CHANNEL_CLOSED');
  });

  it('CHANNEL_NOT_FOUND: an id the ledger never issued', async () => {
    const b = await h.buyer();
    expect(await rejected({ ...b.signer.next(5000n), channelId: '18446744073709551615' })).toBe('CHANNEL_NOT_FOUND');
  });

  it('WRONG_NETWORK and WRONG_ASSET', async () => {
    const b = await h.buyer();
    expect(await rejected(b.signer.next(5000n), h.requirements({ network: 'stellar:testnet' }))).toBe('WRONG_NETWORK');
    expect(
      await rejected(b.signer.next(5000n), h.requirements({ asset: contractFromRaw(new Uint8Array(32).fill(9)) })),
    ).toBe('WRONG_ASSET');
  });

  it('PAYMENT_MALFORMED for a malformed payload, BAD_REQUEST (400) for a body that is not a verify request', async () => {
    const reqs = h.requirements();
    const post = (body: unknown) =>
      fetch(`${h.url}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    for (const payload of [
      {},
      {
        x402Version: 2,
        scheme: 'channel',
        network: 'stellar:local',
        payload: { channelId: 'x', cumulative: '1', signature: 'ab' },
      },
    ]) {
      const res = await post({ x402Version: 2, paymentPayload: payload, paymentRequirements: reqs });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ isValid: false, invalidReason: 'PAYMENT_MALFORMED' });
    }
    for (const body of [
      '{',
      '[]',
      { x402Version: 2 },
      { x402Version: 2, paymentPayload: [], paymentRequirements: reqs },
      { x402Version: '2', paymentPayload: {}, paymentRequirements: reqs },
    ]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'BAD_REQUEST', source: 'facilitator' });
    }
    // What the official x402 client can build is a refusal it understands, not a 400.
    const refusals: [unknown, string][] = [
      [{ x402Version: 3, paymentPayload: {}, paymentRequirements: reqs }, 'UNSUPPORTED_VERSION'],
      [{ x402Version: 2, paymentPayload: {}, paymentRequirements: { ...reqs, scheme: 'exact' } }, 'UNSUPPORTED_SCHEME'],
      [{ x402Version: 2, paymentPayload: {}, paymentRequirements: { ...reqs, amount: '-1' } }, 'PAYMENT_MALFORMED'],
    ];
    for (const [body, reason] of refusals) {
      const res = await post(body);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ isValid: false, invalidReason: reason });
    }
    const big = await post({ x402Version: 2, paymentPayload: { pad: 'x'.repeat(70_000) }, paymentRequirements: reqs });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: 'BAD_REQUEST' });
    const text = await fetch(`${h.url}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<a/>',
    });
    expect(text.status).toBe(415);
    const badUrl = await fetch(`${h.url}/channels/%E0%A4%A`);
    expect(badUrl.status).toBe(400);
    expect(await badUrl.json()).toMatchObject({ error: 'BAD_REQUEST', source: 'facilitator' });
    const unknown = await fetch(`${h.url}/nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'NOT_FOUND' });
    const badKey = await fetch(`${h.url}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'bad key!' },
      body: JSON.stringify({ x402Version: 2, paymentPayload: {}, paymentRequirements: reqs }),
    });
    expect(badKey.status).toBe(400);
  });

  it('Idempotency-Key: a repeat of an accepted voucher gets the first answer, not VOUCHER_NOT_INCREASING', async () => {
    const b = await h.buyer();
    const v = b.signer.next(5000n);
    const first = await h.verify(v, undefined, { 'idempotency-key': 'req-1' });
    const again = await h.verify(v, undefined, { 'idempotency-key': 'req-1' });
    expect(first.body['isValid']).toBe(true);
    expect(again.body).toEqual(first.body);
    const otherKey = await h.verify(v, undefined, { 'idempotency-key': 'req-2' });
    expect(otherKey.body['invalidReason']).toBe('VOUCHER_NOT_INCREASING');
    // The record keeps what rebuilds the answer (its receipt is stored beside it), not the ~1.5 KB answer.
    const record = await h.f.store.getIdempotent('verify:req-1');
    const receipt = (first.body['extra'] as { receipt: { receipt: { id: string } } }).receipt.receipt;
    expect(JSON.parse(record!.response)).toMatchObject({ receiptId: receipt.id });
    expect(record!.response.length).toBeLessThan(200);
  });

  it('Idempotency-Key: a first answer kept whole (records of earlier versions) is replayed as it was', async () => {
    const b = await h.buyer();
    const v = b.signer.next(5000n);
    const first = await h.verify(v);
    expect(first.body['isValid']).toBe(true);
    const answer = (first.body['extra'] as { receipt: Record<string, unknown> }).receipt;
    const write = await h.f.store.write([
      {
        op: 'idempotency',
        key: 'verify:kept-whole',
        fingerprint: `${v.channelId}:${v.cumulative}:${v.signature}`,
        response: JSON.stringify(answer),
        at: new Date().toISOString(),
      },
    ]);
    expect(write.ok).toBe(true);
    const again = await h.verify(v, undefined, { 'idempotency-key': 'kept-whole' });
    expect(again.body).toEqual(first.body);
  });
});

describe('reason codes through the seller middleware (the demo seller)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const get = (header?: string, name = 'payment-signature') =>
    fetch(`${h.url}/demo/book`, header === undefined ? {} : { headers: { [name]: header } });

  it.each([
    ['not base64', '%%%'],
    ['base64 of text', toBase64(utf8('hello'))],
    ['base64 of invalid UTF-8', toBase64(new Uint8Array([0xc3, 0x28]))],
    ['JSON of the wrong shape', encodeJsonHeader({ x402Version: 2, scheme: 'channel' })],
    ['an unknown scheme', encodeJsonHeader({ x402Version: 2, scheme: 'exact', network: 'stellar:local', payload: {} })],
    [
      'a cumulative beyond i128',
      encodeJsonHeader({
        x402Version: 2,
        scheme: 'channel',
        network: 'stellar:local',
        payload: { channelId: '1', cumulative: '1'.repeat(40), signature: 'a'.repeat(128) },
      }),
    ],
    ['over 8 KiB', 'A'.repeat(9000)],
  ])('a header that is %s: 402 PAYMENT_MALFORMED with the same accepts', async (_name, header) => {
    const plain = await get();
    const terms = (await plain.json()) as { accepts: unknown[] };
    const res = await get(header);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: string; source: string; accepts: unknown[] };
    expect(body.error).toBe('PAYMENT_MALFORMED');
    expect(body.source).toBe('gateway');
    expect(body.accepts).toEqual(terms.accepts);
  });

  it('a rejected voucher: 402 with the reason code from the facilitator and the same accepts', async () => {
    const b = await h.buyer();
    const reqs = h.requirements();
    const header = encodeJsonHeader({ x402Version: 2, accepted: reqs, payload: b.signer.sign(4000n) });
    const res = await get(header);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: string; source: string; accepts: Array<{ payTo: string }> };
    expect(body).toMatchObject({ error: 'VOUCHER_UNDERPAID', source: 'facilitator' });
    expect(body.accepts[0]!.payTo).toBe(reqs.payTo);
    const required = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString()) as unknown;
    expect(required).toEqual(body);
  });

  it('an X-PAYMENT (v1) header is accepted and mirrored in X-PAYMENT-RESPONSE', async () => {
    const b = await h.buyer();
    const header = encodeJsonHeader({
      x402Version: 1,
      scheme: 'channel',
      network: 'stellar:local',
      payload: b.signer.next(5000n),
    });
    const res = await get(header, 'x-payment');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-payment-response')).toBe(res.headers.get('payment-response'));
    expect(res.headers.get('x-payment-response')).toBeTruthy();
  });
});
