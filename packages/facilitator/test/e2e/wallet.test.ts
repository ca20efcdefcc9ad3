// The buyer's Wallet used as an agent uses it: many requests at once from one wallet.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJsonHeader, isChannelTerms, randomKeypair } from '@svc/core';
import type { PaymentRequired } from '@svc/core';
import { PaymentError, Wallet, payFetch } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

describe('a Wallet paying several requests at once', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('opens one channel for them all (one faucet grant, one open), and every request is paid', async () => {
    const wallet = Wallet.open({ ledgerUrl: `${h.url}/ledger` });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        payFetch(`${h.url}/demo/book`, {}, { signer: (terms) => wallet.signerFor(terms) }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(wallet.channels).toHaveLength(1);
    expect(wallet.channels[0]!.cumulative).toBe(30_000n);
  });
});

describe('two Wallets on one file (two processes of one buyer)', () => {
  let h: Harness;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wallet-'));
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the channels each opened: a save does not drop the other’s', async () => {
    const file = path.join(dir, 'wallet.json');
    const first = Wallet.open({ file, ledgerUrl: `${h.url}/ledger` });
    const second = Wallet.open({ file, ledgerUrl: `${h.url}/ledger` });
    expect(second.buyer.address).toBe(first.buyer.address);
    const terms = decodeJsonHeader((await fetch(`${h.url}/demo/book`)).headers.get('payment-required')!);
    const accept = (terms.ok ? (terms.value as PaymentRequired) : null)!.accepts.filter(isChannelTerms)[0]!;
    const a = await first.signerFor(accept);
    const b = await second.signerFor(accept);
    expect(b.channelId).not.toBe(a.channelId);
    const saved = Wallet.open({ file, ledgerUrl: `${h.url}/ledger` }).channels.map((c) => c.channelId);
    expect(saved.sort()).toEqual([a.channelId, b.channelId].sort());
  });
});

describe('a Wallet asked for channels bound to a receiver authorizer (batch-settlement)', () => {
  let h: Harness;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wallet-'));
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('opens, keeps and picks a bound channel only when asked for that authorizer', async () => {
    const file = path.join(dir, 'wallet.json');
    const wallet = Wallet.open({ file, ledgerUrl: `${h.url}/ledger` });
    const terms = decodeJsonHeader((await fetch(`${h.url}/demo/book`)).headers.get('payment-required')!);
    const accept = (terms.ok ? (terms.value as PaymentRequired) : null)!.accepts.filter(isChannelTerms)[0]!;
    const authorizer = h.f.address;

    const bound = await wallet.signerFor(accept, 1n, { receiverAuthorizer: authorizer });
    expect(bound.receiverAuthorizer).toBe(authorizer);
    expect((await h.ledger.channel(bound.channelId))?.receiverAuthorizer).toBe(authorizer);
    expect(await wallet.signerFor(accept, 1n, { receiverAuthorizer: authorizer })).toBe(bound);
    // A `channel`-scheme payment gets a channel bound to none, and another authorizer another channel.
    const plain = await wallet.signerFor(accept);
    expect(plain).not.toBe(bound);
    expect(plain.receiverAuthorizer).toBeNull();
    expect((await h.ledger.channel(plain.channelId))?.receiverAuthorizer).toBeNull();
    const other = await wallet.signerFor(accept, 1n, { receiverAuthorizer: randomKeypair().address });
    expect([bound.channelId, plain.channelId]).not.toContain(other.channelId);

    // The file keeps each channel's authorizer: a later run picks the same bound channel.
    const again = Wallet.open({ file, ledgerUrl: `${h.url}/ledger` });
    const picked = await again.signerFor(accept, 1n, { receiverAuthorizer: authorizer });
    expect(picked.channelId).toBe(bound.channelId);
    expect(picked.receiverAuthorizer).toBe(authorizer);
    expect((await again.signerFor(accept)).channelId).toBe(plain.channelId);
  });
});

describe('a Wallet whose channel to the seller is at or past its expiry', () => {
  let h: Harness;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wallet-'));
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('extends it (a top-up with a later expiry) and pays on it, rather than leaving its deposit locked behind a new channel', async () => {
    const latest = (await h.ledger.info()).latestLedger;
    const b = await h.buyer({ expiryLedger: latest + 3 });
    const file = path.join(dir, 'wallet.json');
    fs.writeFileSync(file, JSON.stringify({ version: 1, buyer: b.keys.secret(), channels: [b.signer.toState()] }));
    await expect
      .poll(async () => (await h.ledger.info()).latestLedger, { timeout: 15_000, interval: 250 })
      .toBeGreaterThanOrEqual(latest + 3);
    const said: string[] = [];
    const wallet = Wallet.open({ file, ledgerUrl: `${h.url}/ledger`, log: (line) => said.push(line) });
    const res = await payFetch(`${h.url}/demo/book`, {}, { signer: (terms) => wallet.signerFor(terms) });
    expect(res.status).toBe(200);
    expect(wallet.channels.map((c) => c.channelId)).toEqual([b.channelId]);
    const onLedger = await h.ledger.channel(b.channelId);
    expect(onLedger!.expiryLedger).toBeGreaterThan((await h.ledger.info()).latestLedger + 1000);
    expect(said.join('\n')).toMatch(new RegExp(`channel ${b.channelId} .*expir.*extended it to ledger \\d+`));
  });
});

describe('a Wallet that cannot fund the deposit a seller asks for', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('says so in asset units, with what it holds and what to do, not as a ledger error in base units', async () => {
    const terms = decodeJsonHeader((await fetch(`${h.url}/demo/book`)).headers.get('payment-required')!);
    const accept = (terms.ok ? (terms.value as PaymentRequired) : null)!.accepts.filter(isChannelTerms)[0]!;
    // Twice what one faucet grant gives (10,000 of the asset).
    const dear = { ...accept, extra: { ...accept.extra, minDeposit: '200000000000' } };
    const wallet = Wallet.open({ ledgerUrl: `${h.url}/ledger` });
    const err = (await wallet.signerFor(dear).catch((e: unknown) => e)) as PaymentError;
    expect(err).toBeInstanceOf(PaymentError);
    expect(err.code).toBe('INSUFFICIENT_FUNDS');
    expect(err.message).toContain('needs a deposit of 20000.0000000');
    expect(err.message).toContain(`${wallet.buyer.address} holds 10000.0000000`);
    expect(err.message).toMatch(/fund .* with at least 10000\.0000000 more/);
    expect(err.message).not.toMatch(/base units|code 27/);
    expect(wallet.channels).toHaveLength(0);
  });
});

describe('a Wallet whose channel to the seller has less left than a payment', () => {
  let h: Harness;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wallet-'));
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('tops that channel up and pays on it, rather than leaving its remainder behind a new channel', async () => {
    const b = await h.buyer({ deposit: 7000n });
    expect((await h.verify(b.signer.next(5000n))).body['isValid']).toBe(true);
    b.signer.confirm(5000n); // the wallet heard the answer: its books say 2000 left
    const file = path.join(dir, 'wallet.json');
    fs.writeFileSync(file, JSON.stringify({ version: 1, buyer: b.keys.secret(), channels: [b.signer.toState()] }));
    const said: string[] = [];
    const wallet = Wallet.open({ file, ledgerUrl: `${h.url}/ledger`, log: (line) => said.push(line) });
    const res = await payFetch(`${h.url}/demo/book`, {}, { signer: (terms) => wallet.signerFor(terms) });
    expect(res.status).toBe(200);
    expect(wallet.channels.map((c) => c.channelId)).toEqual([b.channelId]);
    expect(wallet.channels[0]!.cumulative).toBe(10_000n);
    expect(BigInt((await h.ledger.channel(b.channelId))!.deposit)).toBeGreaterThan(7000n);
    expect(said.join('\n')).toMatch(
      new RegExp(`channel ${b.channelId} had 2000 left, less than a payment of 5000: topped it up`),
    );
  });
});
