// The buyer's side of a deposit inside the first paid request, over real HTTP: payFetch with a
// Wallet, `svc pay` and streamPaid, each from a fresh funded buyer with no channel, pay their first
// request with one header — the signed opening travels as a batch-settlement deposit payload, the
// facilitator submits it — and are served with the deposit response. The wallet sends no ledger
// transaction of its own; the next request pays by voucher; an exhausted channel is topped up by
// the next payment's deposit the same way (here, after a cooperative refund took most of it back).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_SCHEME, decodeJsonHeader } from '@svc/core';
import type { BatchRequirements, PaymentRequired } from '@svc/core';
import { Wallet, payFetch, streamPaid } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';
import { spawnSvc } from '../helpers/process.js';

describe('a deposit inside the first paid request, from the buyer’s tools', () => {
  let h: Harness;
  let terms: BatchRequirements;
  const dirs: string[] = [];

  beforeAll(async () => {
    h = await startHarness({ CLAIM_INTERVAL_SECONDS: '3600' });
    const res = await fetch(`${h.url}/demo/book`);
    const decoded = decodeJsonHeader(res.headers.get('payment-required')!);
    terms = (decoded.ok ? (decoded.value as PaymentRequired) : null)!.accepts.find(
      (a): a is BatchRequirements => a.scheme === BATCH_SCHEME,
    )!;
  });
  afterAll(async () => {
    await h?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** The real `svc` command with the wallet `file`, run to its end. */
  function svc(args: string[], file: string): Promise<{ code: number | null; out: string }> {
    const proc = spawnSvc(args, { SVC_WALLET: file });
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    return new Promise((resolve) => proc.once('close', (code) => resolve({ code, out })));
  }

  /** The ledger's record of a transaction (GET /ledger/tx/:hash). */
  async function ledgerTx(hash: string) {
    return (await (await fetch(`${h.url}/ledger/tx/${hash}`)).json()) as { status: string; source: string; op: string };
  }

  it('payFetch: a fresh wallet’s first request is served with the deposit response, the next pays by voucher', async () => {
    const lines: string[] = [];
    const wallet = Wallet.open({ log: (line) => lines.push(line) });
    const signer = (t: Parameters<typeof wallet.signerFor>[0], o?: Parameters<typeof wallet.signerFor>[2]) =>
      wallet.signerFor(t, 1n, o);
    const first = await payFetch(`${h.url}/demo/book`, {}, { signer });
    expect(first.status).toBe(200);
    expect(first.deposit).toMatchObject({ amount: BigInt(terms.extra.minDeposit) });
    expect(first.payment).toMatchObject({ cumulative: terms.amount, delta: terms.amount });
    const [channel] = wallet.channels;
    expect(channel?.receiverAuthorizer).toBe(terms.extra.receiverAuthorizer);
    // The opening is the buyer's own transaction, submitted by the facilitator: the wallet sent none.
    expect(await ledgerTx(first.deposit!.transaction)).toMatchObject({
      status: 'SUCCESS',
      source: wallet.buyer.address,
      op: 'channel.open',
    });
    expect(lines.join('\n')).toMatch(/opens with the next payment/);
    expect(lines.join('\n')).not.toMatch(/opened channel/);
    expect(await h.ledger.channel(channel!.channelId)).toMatchObject({
      open: true,
      payee: terms.payTo,
      deposit: terms.extra.minDeposit,
      receiverAuthorizer: terms.extra.receiverAuthorizer,
    });

    const second = await payFetch(`${h.url}/demo/book`, {}, { signer });
    expect(second.status).toBe(200);
    expect(second.deposit).toBeNull();
    expect(second.payment).toMatchObject({ cumulative: String(2n * BigInt(terms.amount)) });
    expect(wallet.channels).toHaveLength(1);
  });

  it('payFetch: an exhausted channel is topped up by the next payment’s deposit, not by a transaction of the wallet', async () => {
    const price = BigInt(terms.amount);
    const minimum = BigInt(terms.extra.minDeposit);
    const lines: string[] = [];
    const wallet = Wallet.open({ log: (line) => lines.push(line) });
    const signer = (t: Parameters<typeof wallet.signerFor>[0], o?: Parameters<typeof wallet.signerFor>[2]) =>
      wallet.signerFor(t, 1n, o);
    await payFetch(`${h.url}/demo/book`, {}, { signer });
    const [channel] = wallet.channels;
    // A cooperative refund leaves less than one more request in it: the next one needs a top-up.
    await wallet.refund(`${h.url}/demo/book`, { amount: minimum - price - 1n });
    expect(channel!.remaining).toBe(1n);
    expect(lines.join('\n')).not.toMatch(/topped/);
    const res = await payFetch(`${h.url}/demo/book`, {}, { signer });
    expect(res.status).toBe(200);
    expect(res.deposit?.amount).toBe(minimum);
    expect(await ledgerTx(res.deposit!.transaction)).toMatchObject({ status: 'SUCCESS', op: 'channel.top_up' });
    expect(lines.join('\n')).toMatch(/topped up by .* with the next payment/);
    expect((await h.ledger.channel(channel!.channelId))?.deposit).toBe(String(price + 1n + minimum));
  });

  it('svc pay: the first request carries the deposit, and says so; svc refund then takes the rest back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pay-deposit-'));
    dirs.push(dir);
    const file = path.join(dir, 'wallet.json');
    const { code, out } = await svc(['pay', `${h.url}/demo/book`, '2'], file);
    expect(code, out).toBe(0);
    expect(out).toMatch(/opens with the next payment/);
    expect(out).toMatch(new RegExp(`#1 deposited ${terms.extra.minDeposit} .* inside this request: tx [0-9a-f]{16}…`));
    expect(out).not.toMatch(/#2 deposited/);
    expect(out).toMatch(/#2 200 paid/);
    // The channel svc pay opened is a batch-settlement one: svc refund takes the rest back at once.
    const buyer = Wallet.open({ file }).buyer.address;
    const before = await h.ledger.balance(buyer);
    const refund = await svc(['refund', `${h.url}/demo/book`], file);
    expect(refund.code, refund.out).toBe(0);
    const left = BigInt(terms.extra.minDeposit) - 2n * BigInt(terms.amount);
    expect(await h.ledger.balance(buyer)).toBe(before + left);
  });

  it('streamPaid: a fresh wallet’s stream opens its channel with the first slice’s deposit', async () => {
    const lines: string[] = [];
    const wallet = Wallet.open({ log: (line) => lines.push(line) });
    const run = await streamPaid({
      url: `${h.url}/demo/ticker/stream?seconds=2`,
      signer: (t, o) => wallet.signerFor(t, 1n, o),
    });
    expect(run.scheme).toBe('batch-settlement');
    expect(run.ended.reason).toBe('done');
    expect(lines.join('\n')).toMatch(/opens with the next payment/);
    const [channel] = wallet.channels;
    expect(channel?.pendingDeposit).toBeNull();
    expect((await h.ledger.channel(channel!.channelId))?.open).toBe(true);
  });
});
