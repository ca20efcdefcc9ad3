// LocalLedgerClient against a real local ledger server (random port, real HTTP): smart accounts
// made, read back and used by their agent and owner keys, channels opened by a smart account,
// swaps through the DEX pool.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { channelIdOf, LedgerError, randomKeypair } from '@svc/core';
import type { Keypair, LedgerInfo } from '@svc/core';
import { LocalLedgerClient } from '../src/index.js';
import type { AccountPolicy, SmartAccountSigner } from '../src/index.js';

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

describe('LocalLedgerClient: smart accounts and the DEX', () => {
  let dir: string;
  let server: LedgerServer;
  let client: LocalLedgerClient;
  let info: LedgerInfo;
  let owner: Keypair;
  let agent: Keypair;
  let seller: Keypair;
  let policy: AccountPolicy;
  let address: string;
  let asAgent: SmartAccountSigner;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sdk-ledger-'));
    server = await startLedgerServer({ port: 0, dataDir: dir, ledgerSeconds: 5, clock: { now: () => T0 } });
    client = new LocalLedgerClient(server.url);
    info = await client.info();
    [owner, agent, seller] = [randomKeypair(), randomKeypair(), randomKeypair()];
    policy = {
      agentKey: agent.address,
      perTxCap: 1_000n,
      dailyCap: 2_500n,
      payees: [seller.address],
      expiresLedger: info.latestLedger + 1_000,
    };
    address = (await client.createAccount({ owner, policy })).address;
    asAgent = { account: address, signer: agent };
    await client.faucet(address, 1_000_000n);
  });

  afterEach(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const code = (p: Promise<unknown>) =>
    p.then(
      () => 'SUCCESS',
      (err: unknown) => (err instanceof LedgerError ? (err.code ?? err.status) : err),
    );

  it('creates a smart account and reads it back with exact bigints', async () => {
    expect(address).toMatch(/^C[A-Z2-7]{55}$/);
    expect(await client.account(address)).toEqual({
      address,
      seq: 0,
      balances: [{ asset: info.contracts.asset, amount: 1_000_000n }],
      account: { owner: owner.address, policy, frozen: false, spentToday: 0n, day: '2026-11-22' },
    });
    expect((await client.account(owner.address)).account).toBeUndefined();
    expect(await client.balance(address)).toBe(1_000_000n);
  });

  it('the agent transfers within its policy; a non-payee is 5, over the per-tx cap 6, over the day 7', async () => {
    expect((await client.transfer({ from: asAgent, to: seller.address, amount: 1_000n })).tx).toMatch(/^[0-9a-f]{64}$/);
    expect(await code(client.transfer({ from: asAgent, to: randomKeypair().address, amount: 1n }))).toBe(5);
    expect(await code(client.transfer({ from: asAgent, to: seller.address, amount: 1_001n }))).toBe(6);
    expect(await code(client.transfer({ from: asAgent, to: seller.address, amount: 1_000n }))).toBe('SUCCESS');
    expect(await code(client.transfer({ from: asAgent, to: seller.address, amount: 501n }))).toBe(7);
    expect(await client.balance(seller.address)).toBe(2_000n);
    expect((await client.account(address)).account).toMatchObject({ spentToday: 2_000n });
    expect((await client.account(address)).seq).toBe(5);
  });

  it('a smart account opens and tops up a channel signed by its agent, within its caps', async () => {
    const voucherKey = randomKeypair();
    const opened = await client.openChannel({ payer: asAgent, payee: seller.address, deposit: 1_000n, voucherKey });
    expect(await client.channel(opened.channelId)).toMatchObject({
      payer: address,
      payee: seller.address,
      deposit: '1000',
      voucherKey: voucherKey.publicKeyHex,
      open: true,
    });
    expect(await client.topUp({ payer: asAgent, channelId: opened.channelId, amount: 1_000n })).toMatchObject({
      deposit: 2_000n,
    });
    expect(await code(client.topUp({ payer: asAgent, channelId: opened.channelId, amount: 501n }))).toBe(7);
    expect(
      await code(
        client.openChannel({
          payer: asAgent,
          payee: randomKeypair().address,
          deposit: 1n,
          voucherKey: randomKeypair(),
        }),
      ),
    ).toBe(5);
    expect(await client.balance(address)).toBe(1_000_000n - 2_000n);
  });

  it('opens a channel under the id its voucher key derives, known before it is sent; a key opens one channel only', async () => {
    const voucherKey = randomKeypair();
    const facilitator = randomKeypair().address;
    const expected = channelIdOf(info.passphrase, info.contracts.channel, voucherKey.publicKey);
    expect(await client.channelIdOf(voucherKey)).toBe(expected);
    await client.faucet(owner.address, 1_000n);
    const opened = await client.openChannel({
      payer: owner,
      payee: seller.address,
      deposit: 100n,
      voucherKey,
      receiverAuthorizer: facilitator,
    });
    expect(opened.channelId).toBe(expected);
    expect(await client.channel(expected)).toMatchObject({
      id: expected.toString(),
      receiverAuthorizer: facilitator,
      refundNonce: '0',
    });
    expect(await code(client.openChannel({ payer: owner, payee: seller.address, deposit: 1n, voucherKey }))).toBe(27);
  });

  it('signs an opening and a top-up without sending them (a deposit payload carries them); whoever submits them lands them as signed', async () => {
    const voucherKey = randomKeypair();
    const facilitator = randomKeypair().address;
    await client.faucet(owner.address, 1_000n);
    const { seq } = await client.account(owner.address);
    const opening = await client.signOpenChannel({
      payer: owner,
      payee: seller.address,
      deposit: 100n,
      voucherKey,
      receiverAuthorizer: facilitator,
    });
    expect(opening.channelId).toBe(channelIdOf(info.passphrase, info.contracts.channel, voucherKey.publicKey));
    expect(opening.tx).toMatchObject({ source: owner.address, seq: seq + 1, op: 'channel.open' });
    // Nothing was sent: no channel, the seq unused.
    expect(await client.channel(opening.channelId)).toBeNull();
    expect((await client.account(owner.address)).seq).toBe(seq);
    const opened = await fetch(`${server.url}/tx`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(opening.tx),
    });
    expect(((await opened.json()) as { hash: string; status: string }).hash).toBe(opening.hash);
    expect(await client.channel(opening.channelId)).toMatchObject({ deposit: '100', receiverAuthorizer: facilitator });
    const topUp = await client.signTopUp({ payer: owner, channelId: opening.channelId, amount: 50n });
    expect(topUp.tx).toMatchObject({ seq: seq + 2, op: 'channel.top_up' });
    await fetch(`${server.url}/tx`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(topUp.tx),
    });
    expect((await client.channel(opening.channelId))?.deposit).toBe('150');
  });

  it('the owner freezes, moves funds past the policy, unfreezes and replaces the policy', async () => {
    const other = randomKeypair().address;
    await client.freeze({ owner, account: address, frozen: true });
    expect((await client.account(address)).account?.frozen).toBe(true);
    expect(await code(client.transfer({ from: asAgent, to: seller.address, amount: 1n }))).toBe(3);
    // The owner key signs as the account itself and is not limited: any payee, past the caps.
    await client.submitAs(address, owner, 'transfer', { to: other, amount: '5000' });
    expect(await client.balance(other)).toBe(5_000n);
    await client.freeze({ owner, account: address, frozen: false });
    await client.setPolicy({ owner, account: address, policy: { ...policy, payees: [other] } });
    expect((await client.account(address)).account).toMatchObject({
      frozen: false,
      policy: { payees: [other] },
      spentToday: 0n,
    });
    await client.transfer({ from: asAgent, to: other, amount: 10n });
    expect(await client.balance(other)).toBe(5_010n);
    // Agent-signed changes to the account are the owner's only: 1 BAD_SIGNATURE.
    expect(await code(client.submitAs(address, agent, 'account.freeze', { account: address, frozen: true }))).toBe(1);
  });

  it('submits concurrent transactions of one source one at a time: none takes another one’s seq', async () => {
    // Found by the HTTP fuzz of POST /demo/owner/freeze: reads of seq raced and the ledger refused the losers.
    const before = (await client.account(owner.address)).seq;
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_v, i) => client.freeze({ owner, account: address, frozen: i % 2 === 0 })),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect((await client.account(owner.address)).seq).toBe(before + 12);
    expect((await client.account(address)).account?.frozen).toBe(false);
  });

  it('a key that is neither the owner’s nor the agent’s is refused outright (400, no effect)', async () => {
    const err = await client
      .transfer({ from: { account: address, signer: randomKeypair() }, to: seller.address, amount: 1n })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect(err).toMatchObject({ status: 400, code: undefined });
    expect(await client.account(address)).toMatchObject({ seq: 0, balances: [{ amount: 1_000_000n }] });
  });

  it('swaps both ways through the DEX pool at 1:10, from a plain account and from an agent within its caps', async () => {
    const xlm = info.contracts.xlm!;
    const buyer = randomKeypair();
    await client.faucet(buyer.address, 500n);
    expect(await client.swap({ from: buyer, sell: info.contracts.asset, amount: 123n })).toMatchObject({
      sold: 123n,
      bought: 1_230n,
      boughtAsset: xlm,
    });
    expect(await client.swap({ from: buyer, sell: xlm, amount: 1_229n })).toMatchObject({
      bought: 122n,
      boughtAsset: info.contracts.asset,
    });
    expect([await client.balance(buyer.address), await client.balance(buyer.address, xlm)]).toEqual([499n, 1n]);
    expect(await code(client.swap({ from: asAgent, sell: info.contracts.asset, amount: 1_001n }))).toBe(6);
    expect((await client.swap({ from: asAgent, sell: info.contracts.asset, amount: 1_000n })).bought).toBe(10_000n);
    expect((await client.account(address)).account?.spentToday).toBe(1_000n);
    expect(await code(client.swap({ from: buyer, sell: info.contracts.channel, amount: 1n }))).toBe(27);
  });
});
