// The meter's stream-session calls read the facilitator's answers against @svc/core's stream wire:
// an answer of the wrong shape is the facilitator's failure (FacilitatorError), not a stream that
// later breaks on a field that is not there.
import { describe, expect, it } from 'vitest';
import { FacilitatorError, StreamCalls } from '@svc/meter';

const STREAM_ID = 'ab'.repeat(16);

/** A facilitator that answers every call with `body` (status 200). */
function calls(body: unknown): StreamCalls {
  const fetchImpl = (() => Promise.resolve(Response.json(body))) as typeof fetch;
  return new StreamCalls('http://facilitator.test', fetchImpl, 1000, 'token');
}

const OPEN = {
  channelId: '1',
  payTo: 'G',
  resource: 'http://seller/t',
  unit: 'second',
  sliceCost: '2000',
  initialCharge: '2000',
  receiptId: 'cd'.repeat(32),
} as const;
const OPENED = { streamId: STREAM_ID, requiredCumulative: '4000', voucherUrl: 'http://f/v', deposit: '10000' };

describe('StreamCalls', () => {
  it('reads answers of the stream wire’s shapes', async () => {
    expect(await calls(OPENED).open(OPEN)).toEqual(OPENED);
    expect(await calls({ kind: 'timeout' }).wait(STREAM_ID, 1000)).toEqual({ kind: 'timeout' });
    const ended = { charged: '2000', vouchers: 1, reason: 'done', units: 3 };
    expect(await calls(ended).end(STREAM_ID, 'done', 3)).toEqual(ended);
  });

  it.each([
    ['a number for an amount', { ...OPENED, requiredCumulative: 4000 }],
    ['no stream id', { ...OPENED, streamId: undefined }],
    ['nothing', null],
  ])('refuses an opening answer with %s', async (_, body) => {
    await expect(calls(body).open(OPEN)).rejects.toThrow(FacilitatorError);
    await expect(calls(body).open(OPEN)).rejects.toThrow(/POST \/streams with an unexpected body/);
  });

  it('refuses a wait answer of another kind', async () => {
    await expect(calls({ kind: 'paid', requiredCumulative: '4000' }).wait(STREAM_ID, 1000)).rejects.toThrow(
      FacilitatorError,
    );
  });
});
