// The demo seller attests every paid book it serves: its meter's calls are the facilitator's own
// (in process, marked internal), so the per-IP costly limit — 30 a minute, meant for strangers
// calling POST /receipts/:id/attest — does not refuse them after the 30th book.
import { decodeJsonHeader, sha256, toHex, isChannelTerms } from '@svc/core';
import type { PaymentRequired } from '@svc/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentHeader, startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

describe('the demo seller attests what it served', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ IP_COSTLY_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => h.close());

  it('every paid book is attested, past the per-IP costly limit', async () => {
    const unpaid = await fetch(`${h.url}/demo/book`);
    expect(unpaid.status).toBe(402);
    const terms = decodeJsonHeader(unpaid.headers.get('payment-required')!);
    if (!terms.ok) throw new Error(terms.message);
    const accepted = (terms.value as PaymentRequired).accepts.filter(isChannelTerms)[0]!;
    const b = await h.buyer({ payee: accepted.payTo });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const voucher = b.signer.next(BigInt(accepted.amount));
      const res = await fetch(`${h.url}/demo/book`, {
        headers: { 'payment-signature': paymentHeader(voucher, accepted) },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const body = new Uint8Array(await res.arrayBuffer());
      const receipt = JSON.parse(Buffer.from(res.headers.get('payment-response')!, 'base64').toString()) as {
        receipt: { id: string };
      };
      b.signer.confirm(BigInt(voucher.cumulative));
      ids.push(receipt.receipt.id);
      const id = receipt.receipt.id;
      let hash: string | null = null;
      await until(
        async () => {
          const view = (await (await fetch(`${h.url}/receipts/${id}`)).json()) as {
            attestation: { responseHash: string } | null;
          };
          hash = view.attestation?.responseHash ?? null;
          return hash !== null;
        },
        5_000,
        20,
      );
      expect(hash).toBe(toHex(sha256(body)));
    }
    expect(new Set(ids).size).toBe(8);
  });
});
