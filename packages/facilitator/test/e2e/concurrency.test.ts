// The compare-and-set under contention, and the per-channel voucher limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

describe('50 concurrent copies of one voucher against one process', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('exactly one is accepted; the others are VOUCHER_NOT_INCREASING', async () => {
    const b = await h.buyer();
    const voucher = b.signer.next(5000n);
    const results = await Promise.all(Array.from({ length: 50 }, () => h.verify(voucher)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const accepted = results.filter((r) => r.body['isValid'] === true);
    expect(accepted).toHaveLength(1);
    expect(new Set(results.filter((r) => r.body['isValid'] === false).map((r) => r.body['invalidReason']))).toEqual(
      new Set(['VOUCHER_NOT_INCREASING']),
    );
    const view = await (await fetch(`${h.url}/channels/${b.channelId}`)).json();
    expect(view).toMatchObject({ lastAccepted: '5000', vouchers: 1 });
    const receipts = await h.f.store.listReceipts({ channelId: b.channelId, limit: 100 });
    expect(receipts).toHaveLength(1);
  });

  it('50 different increasing vouchers racing: every accepted one is above the last, none lost', async () => {
    const b = await h.buyer();
    const vouchers = Array.from({ length: 50 }, (_, i) => b.signer.sign(5000n * BigInt(i + 1)));
    const results = await Promise.all(vouchers.map((v) => h.verify(v)));
    const accepted = results.filter((r) => r.body['isValid'] === true);
    const view = (await (await fetch(`${h.url}/channels/${b.channelId}`)).json()) as {
      lastAccepted: string;
      vouchers: number;
    };
    expect(accepted.length).toBeGreaterThan(0);
    expect(view.vouchers).toBe(accepted.length);
    const deltas = accepted.map((r) =>
      BigInt(((r.body['extra'] as Record<string, unknown>)['receipt'] as { delta: string }).delta),
    );
    expect(deltas.reduce((a, c) => a + c, 0n)).toBe(BigInt(view.lastAccepted));
  });
});

describe('the per-channel voucher limit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => h.close());

  it('a flood of forged vouchers does not use up the channel’s limit; the limit answers 429 with Retry-After', async () => {
    const b = await h.buyer();
    const other = await h.buyer();
    for (let i = 0; i < 30; i++) {
      const forged = { ...b.signer.sign(5000n * BigInt(i + 1)), signature: other.signer.sign(5000n).signature };
      expect((await h.verify(forged)).body['invalidReason']).toBe('VOUCHER_BAD_SIGNATURE');
    }
    for (let i = 1; i <= 5; i++) {
      const res = await h.verify(b.signer.sign(5000n * BigInt(i)));
      expect(res.body['isValid']).toBe(true);
    }
    const limited = await h.verify(b.signer.sign(30_000n));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.body).toMatchObject({ error: 'RATE_LIMITED', source: 'facilitator' });
    // Another channel is not affected.
    expect((await h.verify(other.signer.next(5000n))).body['isValid']).toBe(true);
    // /settle answers the same limit the same way (and its document says so: h.close() checks).
    const settle = await h.settle(b.signer.sign(35_000n));
    expect(settle.status).toBe(429);
    expect(Number(settle.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const documented = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: { responses: Record<string, unknown> } }>;
    };
    expect(Object.keys(documented.paths['/settle']!.post.responses)).toEqual(
      expect.arrayContaining(['200', '400', '429', '503']),
    );
  });

  it('replaying an old voucher does not use up the channel’s limit: only a voucher that could advance the channel counts', async () => {
    const b = await h.buyer();
    const old = b.signer.sign(5000n);
    expect((await h.verify(old)).body['isValid']).toBe(true);
    // A stranger replays the accepted voucher (public in every receipt it was shown with) again and again.
    for (let i = 0; i < 20; i++) {
      const replay = await h.verify(old);
      expect({ status: replay.status, reason: replay.body['invalidReason'] }).toEqual({
        status: 200,
        reason: 'VOUCHER_NOT_INCREASING',
      });
    }
    // The buyer still has its whole allowance left but the one voucher it used: 4 more.
    for (let i = 2; i <= 5; i++) expect((await h.verify(b.signer.sign(5000n * BigInt(i)))).body['isValid']).toBe(true);
    expect((await h.verify(b.signer.sign(30_000n))).status).toBe(429);
  });
});
