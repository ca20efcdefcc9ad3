// `svc refund <url> [amount]` run as a user runs it (the real `svc` command) against a real
// facilitator: the buyer's wallet file holds a batch-settlement channel to the demo seller, and the
// command takes back part of its unused deposit, then the rest, to the buyer's ledger account;
// a wallet with no such channel, and an amount that is no amount, are told what is wrong.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SCHEME, channelTermsOf, decodeJsonHeader } from '@svc/core';
import type { BatchRequirements, PaymentRequired } from '@svc/core';
import { Wallet } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { spawnSvc } from '../helpers/process.js';

function svc(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const proc = spawnSvc(args, env);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, out })));
}

describe('svc refund', () => {
  let h: Harness;
  let terms: BatchRequirements;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-refund-'));

  beforeAll(async () => {
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600' });
    const res = await fetch(`${h.url}/demo/book`);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    const book = (decoded.ok ? decoded.value : null) as PaymentRequired;
    terms = book.accepts.find((a): a is BatchRequirements => a.scheme === BATCH_SCHEME)!;
  });
  afterAll(async () => {
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refunds part, then all of the unused deposit of the wallet’s batch-settlement channel', async () => {
    const file = path.join(dir, 'wallet.json');
    const wallet = Wallet.open({ file });
    // A channel bound to the facilitator, charged one payment, as the x402 batch client leaves it.
    const signer = await wallet.signerFor(channelTermsOf(terms), 1n, {
      receiverAuthorizer: terms.extra.receiverAuthorizer,
    });
    const v = signer.next(5000n);
    const settled = await fetch(`${h.url}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: terms,
          payload: {
            type: 'voucher',
            voucher: { channelId: v.channelId, maxClaimableAmount: v.cumulative, signature: v.signature },
          },
        },
        paymentRequirements: terms,
      }),
    });
    expect(((await settled.json()) as { success: boolean }).success).toBe(true);
    signer.confirm(5000n);
    wallet.save();
    const deposit = signer.deposit;
    const before = await h.ledger.balance(wallet.buyer.address);

    const part = await svc(['refund', `${h.url}/demo/book`, '100000'], { SVC_WALLET: file });
    expect(part.out).toMatch(
      new RegExp(
        `refunded 100000 base units \\(.+\\) from channel ${signer.channelId} \\(tx \\S+\\); ${deposit - 100_000n} left in it`,
      ),
    );
    expect(part.code).toBe(0);
    expect(await h.ledger.balance(wallet.buyer.address)).toBe(before + 100_000n);
    expect(Wallet.open({ file }).channels[0]!.deposit).toBe(deposit - 100_000n);

    const all = await svc(['refund', `${h.url}/demo/book`], { SVC_WALLET: file });
    expect(all.out).toMatch(new RegExp(`refunded ${deposit - 100_000n - 5000n} base units`));
    expect(all.code).toBe(0);
    expect(await h.ledger.balance(wallet.buyer.address)).toBe(before + deposit - 5000n);

    const none = await svc(['refund', `${h.url}/demo/book`], { SVC_WALLET: file });
    expect(none.out).toMatch(/refund refused: invalid_batch_settlement_stellar_refund_no_balance: .*nothing unused/);
    expect(none.code).toBe(1);
  });

  it('says so when the wallet has no channel to refund, or the amount is no amount', async () => {
    const file = path.join(dir, 'empty.json');
    const empty = await svc(['refund', `${h.url}/demo/book`], { SVC_WALLET: file });
    expect(empty.out).toMatch(/refund refused: no_channel: this wallet has no open channel to G\S+ bound to/);
    expect(empty.code).toBe(1);
    const bad = await svc(['refund', `${h.url}/demo/book`, '1.5'], { SVC_WALLET: file });
    expect(bad.out).toMatch(/amount must be a whole number of base units above 0/);
    expect(bad.code).toBe(1);
  });
});
