// Stream sessions without HTTP: a session opened on a first slice paid through Payments, its next
// slice's voucher credited and handed to the seller's wait, an early voucher refused, and the
// session's end charging what was delivered — on the real adapters in a temporary directory.
import { describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { domainPerSuite, voucherInput } from '../helpers/domain.js';

const SLICE = 2000n;

describe('StreamSessions (channel)', () => {
  const d = domainPerSuite();
  const payee = randomKeypair().address;

  it('opens on the first slice’s receipt, credits the next slice’s voucher to the waiting seller, and ends charging the slices', async () => {
    const { signer } = await d.channel({ payee, deposit: 1_000_000n });
    const terms = { ...d.terms(payee, 100n), unit: 'token' as const };
    terms.extra = { ...terms.extra, sliceTokens: 20, sliceAmount: SLICE.toString() };
    const paid = await d.services.payments.settle({
      input: voucherInput(signer, terms, SLICE, { resource: 'http://seller.test/chat', method: 'POST' }),
      payeeSide: true,
      listing: null,
    });
    expect(paid.ok).toBe(true);
    if (!paid.ok) return;
    signer.confirm(SLICE);
    const { stream } = await d.services.streams.open({
      channelId: signer.channelId,
      payTo: payee,
      resource: 'http://seller.test/chat',
      unit: 'token',
      sliceCost: SLICE,
      initialCharge: SLICE,
      receiptId: paid.answer.receipt.id,
    });
    expect(stream.required).toBe(2n * SLICE);

    // A voucher past the next slice is refused, and nothing is credited.
    const ahead = signer.sign(3n * SLICE);
    await expect(
      d.services.streams.voucher(
        signer.channelId,
        { streamId: stream.id, cumulative: 3n * SLICE, signature: ahead.signature },
        'http://f.test',
      ),
    ).rejects.toMatchObject({ code: 'CONFLICT' });

    const waiting = d.services.streams.wait(stream.id, 5_000);
    const next = signer.sign(2n * SLICE);
    const credited = await d.services.streams.voucher(
      signer.channelId,
      { streamId: stream.id, cumulative: 2n * SLICE, signature: next.signature },
      'http://f.test',
    );
    expect(credited).toMatchObject({ streamId: stream.id, requiredCumulative: 3n * SLICE });
    expect(await waiting).toMatchObject({ kind: 'paid', requiredCumulative: 3n * SLICE });

    const ended = await d.services.streams.end(stream.id, 'done', 30);
    expect(ended.status).not.toBe('open');
    expect((await d.services.store.getChannel(signer.channelId))?.lastAccepted).toBe(2n * SLICE);
  });
});
