// GET /metrics: off without METRICS_TOKEN (404, nothing counted), then served only to
// the bearer of the token (401 otherwise). What it serves parses as the Prometheus text format and
// follows what happened: vouchers accepted, and refused by code, the verification histogram, a
// claim and the vouchers it covered, a stream session opened and ended, an event stream, the store,
// the ledger and leadership.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import type { PaymentRequirements } from '@svc/core';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import type { PrometheusText } from '../helpers/prometheus-text.js';

const TOKEN = 'metrics-token-0123456789abcdef';

describe('GET /metrics with METRICS_TOKEN', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ METRICS_TOKEN: TOKEN, DEMO: 'off', MANUAL_CLAIM_COOLDOWN_SECONDS: '0' });
  });
  afterAll(() => h.close());

  const scrape = async (): Promise<PrometheusText> => {
    const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parsePrometheusText(await res.text());
  };

  it('counts vouchers accepted and refused by code, with the verification histogram, and a claim with its vouchers', async () => {
    const b = await h.buyer();
    for (let i = 1; i <= 3; i++) expect((await h.verify(b.signer.sign(5000n * BigInt(i)))).body['isValid']).toBe(true);
    // A repeat under the same Idempotency-Key is the first answer again, not a new payment.
    const keyed = b.signer.sign(20_000n);
    for (let i = 0; i < 2; i++)
      expect((await h.verify(keyed, undefined, { 'idempotency-key': 'metrics-1' })).body['isValid']).toBe(true);
    expect((await h.verify(keyed)).body['invalidReason']).toBe('VOUCHER_NOT_INCREASING');
    const forged = { ...b.signer.sign(25_000n), signature: 'ab'.repeat(64) };
    expect((await h.verify(forged)).body['invalidReason']).toBe('VOUCHER_BAD_SIGNATURE');
    // Refused before the verifier: counted, but no verification to time.
    const exact = { ...h.requirements(), scheme: 'exact' } as unknown as PaymentRequirements;
    expect((await h.verify(b.signer.sign(30_000n), exact)).body['invalidReason']).toBe('UNSUPPORTED_SCHEME');
    const claim = await fetch(`${h.url}/channels/${b.channelId}/claim`, { method: 'POST' });
    expect(claim.status).toBe(200);
    expect(await claim.json()).toMatchObject({ vouchersCovered: 4 });

    const m = await scrape();
    expect(m.types.get('svc_payments_accepted_total')).toBe('counter');
    expect(m.value('svc_payments_accepted_total', { scheme: 'channel' })).toBe(4);
    expect(m.value('svc_payments_accepted_total', { scheme: 'batch-settlement' })).toBe(0);
    expect(m.value('svc_payments_refused_total', { code: 'VOUCHER_NOT_INCREASING', scheme: 'channel' })).toBe(1);
    expect(m.value('svc_payments_refused_total', { code: 'VOUCHER_BAD_SIGNATURE', scheme: 'channel' })).toBe(1);
    // Refused before any scheme was read: no scheme label.
    expect(m.value('svc_payments_refused_total', { code: 'UNSUPPORTED_SCHEME' })).toBe(1);
    // Every refusal code is there from the start, at 0.
    expect(m.value('svc_payments_refused_total', { code: 'CHANNEL_EXHAUSTED', scheme: 'channel' })).toBe(0);
    expect(
      m.value('svc_payments_refused_total', {
        code: 'invalid_batch_settlement_stellar_cumulative_amount_mismatch',
        scheme: 'batch-settlement',
      }),
    ).toBe(0);
    expect(m.types.get('svc_verification_duration_seconds')).toBe('histogram');
    expect(m.value('svc_verification_duration_seconds_count', { outcome: 'accepted' })).toBe(4);
    expect(m.value('svc_verification_duration_seconds_count', { outcome: 'refused' })).toBe(2);
    expect(m.value('svc_verification_duration_seconds_sum', { outcome: 'accepted' })).toBeGreaterThan(0);
    expect(m.value('svc_verification_duration_seconds_bucket', { outcome: 'accepted', le: '5' })).toBe(4);
    expect(m.value('svc_claims_total', { outcome: 'claimed' })).toBe(1);
    expect(m.value('svc_claims_total', { outcome: 'failed' })).toBe(0);
    expect(m.value('svc_claimed_vouchers_total')).toBe(4);
    // Each accepted voucher and the claim wrote to the store.
    expect(m.value('svc_store_write_duration_seconds_count')).toBeGreaterThanOrEqual(5);
    expect(m.value('svc_store_write_errors_total')).toBe(0);
    expect(m.value('svc_store_writable')).toBe(1);
    expect(m.value('svc_ledger_reachable')).toBe(1);
    // Read every 50 ms here, from a ledger that closes every second.
    const latest = Number((await h.ledger.info()).latestLedger);
    expect(m.value('svc_ledger_latest')).toBeGreaterThanOrEqual(latest - 2);
    expect(m.value('svc_ledger_latest')).toBeLessThanOrEqual(latest);
    expect(m.value('svc_leader')).toBe(1);
    // And the process's own.
    expect(m.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(m.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });

  it('counts batch-settlement payments by scheme: a charge (/settle, a stream slice) is accepted, a /verify only reserves', async () => {
    const before = await scrape();
    const b = await h.buyer({ batch: true });
    const terms = h.requirements();
    const batchTerms = {
      scheme: 'batch-settlement',
      network: terms.network,
      asset: terms.asset,
      payTo: terms.payTo,
      amount: terms.amount,
      maxTimeoutSeconds: terms.maxTimeoutSeconds,
      extra: {
        ...terms.extra,
        receiverAuthorizer: h.f.address,
        unit: 'request',
        unitPrice: terms.amount,
      },
    };
    const pay = async (route: '/verify' | '/settle', ceiling: bigint) => {
      const v = b.signer.sign(ceiling);
      const res = await fetch(`${h.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: {
            x402Version: 2,
            accepted: batchTerms,
            payload: {
              type: 'voucher',
              voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
            },
          },
          paymentRequirements: batchTerms,
          method: 'GET',
        }),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    const price = BigInt(terms.amount);
    expect(await pay('/verify', price)).toMatchObject({ isValid: true });
    expect(await pay('/settle', price)).toMatchObject({ success: true });
    expect(await pay('/settle', 2n * price)).toMatchObject({ success: true });
    // A ceiling that is not what was charged plus the price.
    expect(await pay('/settle', 5n * price)).toMatchObject({
      errorReason: 'invalid_batch_settlement_stellar_cumulative_amount_mismatch',
    });
    const m = await scrape();
    const delta = (name: string, labels: Record<string, string>) => m.value(name, labels) - before.value(name, labels);
    expect(delta('svc_payments_accepted_total', { scheme: 'batch-settlement' })).toBe(2);
    expect(delta('svc_payments_accepted_total', { scheme: 'channel' })).toBe(0);
    expect(
      delta('svc_payments_refused_total', {
        code: 'invalid_batch_settlement_stellar_cumulative_amount_mismatch',
        scheme: 'batch-settlement',
      }),
    ).toBe(1);
    // The two charges and the refusal are timed with the channel's vouchers; the reservation is not a payment.
    expect(delta('svc_verification_duration_seconds_count', { outcome: 'accepted' })).toBe(2);
    expect(delta('svc_verification_duration_seconds_count', { outcome: 'refused' })).toBe(1);
  });

  it('counts stream sessions opened, open and ended by reason, and the event streams open', async () => {
    const before = await scrape();
    const events = await fetch(`${h.url}/events`);
    expect(events.status).toBe(200);
    const payee = randomKeypair();
    const b = await h.buyer({ payee: payee.address });
    const terms = h.requirements({
      payTo: payee.address,
      amount: '1000',
      unit: 'second',
      extra: { sliceAmount: '2000', sliceSeconds: 2 },
    });
    const first = await h.verify(b.signer.sign(2000n), terms);
    const receiptId = (first.body['extra'] as { receipt: { receipt: { id: string } } }).receipt.receipt.id;
    const seller = { 'content-type': 'application/json', authorization: `Bearer ${h.sellerToken(payee.address)}` };
    const opened = await fetch(`${h.url}/streams`, {
      method: 'POST',
      headers: seller,
      body: JSON.stringify({
        channelId: b.channelId.toString(),
        payTo: payee.address,
        resource: `${h.url}/r`,
        unit: 'second',
        sliceCost: '2000',
        initialCharge: '2000',
        receiptId,
      }),
    });
    expect(opened.status).toBe(200);
    const { streamId } = (await opened.json()) as { streamId: string };

    const during = await scrape();
    expect(during.value('svc_stream_sessions_open')).toBe(before.value('svc_stream_sessions_open') + 1);
    expect(during.value('svc_stream_sessions_opened_total')).toBe(before.value('svc_stream_sessions_opened_total') + 1);
    expect(during.value('svc_event_streams_open')).toBe(1);
    await events.body?.cancel();

    const ended = await fetch(`${h.url}/streams/${streamId}`, {
      method: 'DELETE',
      headers: seller,
      body: JSON.stringify({ reason: 'done', units: 2 }),
    });
    expect(ended.status).toBe(200);
    const after = await scrape();
    expect(after.value('svc_stream_sessions_open')).toBe(before.value('svc_stream_sessions_open'));
    expect(after.value('svc_stream_sessions_ended_total', { reason: 'done' })).toBe(
      before.value('svc_stream_sessions_ended_total', { reason: 'done' }) + 1,
    );
    expect(after.value('svc_stream_sessions_ended_total', { reason: 'TIMEOUT' })).toBe(0);
  });

  it('answers 401 without the token, with a wrong one, or with another scheme, and never echoes the token', async () => {
    for (const authorization of [null, 'Bearer wrong-token-0123456789abcdef', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const res = await fetch(`${h.url}/metrics`, authorization === null ? {} : { headers: { authorization } });
      expect(res.status).toBe(401);
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({ error: 'UNAUTHORIZED', source: 'facilitator' });
      expect(body).not.toContain(TOKEN);
    }
    const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { security?: unknown } }>;
    };
    expect(doc.paths['/metrics']?.get?.security).toEqual([{ metricsToken: [] }]);
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ DEMO: 'off' });
  });
  afterAll(() => h.close());

  it('answers 404, whatever the credential, and counts nothing', async () => {
    const b = await h.buyer();
    expect((await h.verify(b.signer.sign(5000n))).body['isValid']).toBe(true);
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Record<string, string>[]) {
      const res = await fetch(`${h.url}/metrics`, { headers });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'NOT_FOUND', message: expect.stringMatching(/METRICS_TOKEN/) });
    }
    expect(h.f.services.metrics).toBeNull();
  });
});
