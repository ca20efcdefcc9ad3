// Accepting a payment is one domain operation (domain/payments.ts) with hooks for what follows an
// acceptance or a refusal: an accepted hook runs once per new acceptance (not for the replay of an
// earlier answer), a refused hook once per refusal, a hook that throws leaves the payment standing,
// and every refusal is in the audit log as voucher.rejected, beside the verifier's voucher.accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcceptedHook, PaymentAttempt, Refused } from '../../src/domain/payments.js';
import { startHarness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import type { Harness } from '../helpers/harness.js';

describe('the payment hooks', () => {
  let h: Harness;
  const accepted: Parameters<AcceptedHook>[0][] = [];
  const refused: { attempt: PaymentAttempt; refused: Refused }[] = [];

  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off', LOG_LEVEL: 'error' });
    h.f.services.payments.onAccepted((e) => accepted.push(e));
    h.f.services.payments.onRefused((e) => refused.push(e));
    // A hook that fails must not undo or refuse a payment.
    h.f.services.payments.onAccepted(() => {
      throw new Error('a hook that fails');
    });
  });
  afterAll(() => h.close());

  it('run once per new acceptance (a replay under the same Idempotency-Key runs none) and once per refusal', async () => {
    const b = await h.buyer();
    const voucher = b.signer.next(5000n);
    const first = await h.verify(voucher, undefined, { 'idempotency-key': 'hooks-1' });
    expect(first.body['isValid']).toBe(true);
    const replay = await h.verify(voucher, undefined, { 'idempotency-key': 'hooks-1' });
    expect(replay.body).toEqual(first.body);
    expect(accepted).toHaveLength(1);
    expect(accepted[0]!.attempt.input.payment.cumulative).toBe(5000n);
    expect(accepted[0]!.attempt.payeeSide).toBe(false);
    expect(accepted[0]!.accepted.response.receipt.id).toBe(
      (first.body['extra'] as { receipt: { receipt: { id: string } } }).receipt.receipt.id,
    );

    const stale = await h.verify(voucher);
    expect(stale.body).toMatchObject({ isValid: false, invalidReason: 'VOUCHER_NOT_INCREASING' });
    expect(refused).toHaveLength(1);
    expect(refused[0]!.refused.code).toBe('VOUCHER_NOT_INCREASING');
    expect(accepted).toHaveLength(1);
  });

  it('record every refusal as voucher.rejected, with its code, channel and resource', async () => {
    const b = await h.buyer();
    const forged = { ...b.signer.next(5000n), signature: 'ab'.repeat(64) };
    expect((await h.verify(forged)).body['invalidReason']).toBe('VOUCHER_BAD_SIGNATURE');
    // Recorded off the answer's path: it may land just after the answer.
    const rejected = () => h.f.store.events({ limit: 10, channelId: b.channelId, types: ['voucher.rejected'] });
    await until(async () => (await rejected()).length > 0, 5000, 25);
    const events = await rejected();
    expect(events).toHaveLength(1);
    expect(events[0]!).toMatchObject({
      source: 'facilitator',
      data: {
        channelId: b.channelId.toString(),
        code: 'VOUCHER_BAD_SIGNATURE',
        resource: `${h.url}/test/resource`,
      },
    });
  });
});
