// Smart accounts on the local ledger, seen through the facilitator: policy violations reported as
// chain.rejected with the ledger's code, a frozen payer refused at /verify and its stream ended
// with ACCOUNT_FROZEN, a swap reported, and the account record.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerError, randomKeypair } from '@svc/core';
import type { Keypair, ReportBody } from '@svc/core';
import { svc } from '@svc/meter';
import { ChannelSigner, reportTransaction, streamPaid } from '@svc/sdk';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

/** A report signed by `by` (the sdk's reportTransaction). */
const report = async (h: Harness, body: ReportBody, by: Keypair) => {
  const { status, body: json } = await reportTransaction({
    facilitator: h.url,
    signer: by,
    networkPassphrase: (await h.ledger.info()).passphrase,
    ...body,
  });
  return { status, json: () => Promise.resolve(json) };
};

describe('smart accounts', () => {
  let h: Harness;
  let owner: Keypair;
  let agent: Keypair;
  let payee: Keypair;
  let account: string;

  beforeAll(async () => {
    h = await startHarness();
    owner = randomKeypair();
    agent = randomKeypair();
    payee = randomKeypair();
    const latest = (await h.ledger.info()).latestLedger;
    ({ address: account } = await h.ledger.createAccount({
      owner,
      policy: {
        agentKey: agent.address,
        perTxCap: 2_000_000n,
        dailyCap: 3_000_000n,
        payees: [payee.address],
        expiresLedger: latest + 100_000,
      },
    }));
    await h.ledger.faucet(account);
  });
  afterAll(() => h.close());

  it('GET /accounts/:address shows the policy, today’s spend and the frozen flag', async () => {
    const view = (await (await fetch(`${h.url}/accounts/${account}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({
      address: account,
      kind: 'smart',
      frozen: false,
      spentToday: '0',
      policy: { agentKey: agent.address, perTxCap: '2000000', dailyCap: '3000000', payees: [payee.address] },
    });
  });

  it('an agent transfer outside the policy fails on the ledger with its code, and its report publishes chain.rejected with that code', async () => {
    const as = { account, signer: agent };
    const failing = async (to: string, amount: bigint) => {
      const err = await h.ledger.transfer({ from: as, to, amount }).then(
        () => null,
        (e: unknown) => e as LedgerError,
      );
      expect(err).toBeInstanceOf(LedgerError);
      return err!;
    };
    const reportOf = async (err: LedgerError) => {
      // A smart account's report is signed by its agent (its owner's would do as well).
      const res = await report(h, { account, tx: err.tx! }, agent);
      expect(res.status).toBe(200);
      return ((await res.json()) as { event: { type: string; data: Record<string, unknown> } }).event;
    };
    const notAllowed = await failing(randomKeypair().address, 1000n);
    expect(notAllowed.code).toBe(5);
    expect(await reportOf(notAllowed)).toMatchObject({
      type: 'chain.rejected',
      data: { account, code: 5, codeName: 'PAYEE_NOT_ALLOWED', tx: notAllowed.tx },
    });
    const overTx = await failing(payee.address, 2_000_001n);
    expect(overTx.code).toBe(6);
    expect((await reportOf(overTx)).data).toMatchObject({ code: 6, codeName: 'PER_TX_CAP_EXCEEDED' });
    await h.ledger.transfer({ from: as, to: payee.address, amount: 2_000_000n });
    const overDay = await failing(payee.address, 1_000_001n);
    expect(overDay.code).toBe(7);
    expect((await reportOf(overDay)).data).toMatchObject({ code: 7, codeName: 'DAILY_CAP_EXCEEDED' });
    await h.ledger.freeze({ owner, account, frozen: true });
    const frozen = await failing(payee.address, 1n);
    expect(frozen.code).toBe(3);
    expect((await reportOf(frozen)).data).toMatchObject({ code: 3, codeName: 'ACCOUNT_FROZEN' });
    await h.ledger.freeze({ owner, account, frozen: false });
    await h.f.watcher.tick();
    const events = (await h.f.store.events({ account, types: ['account.frozen'], limit: 10 })).map(
      (e) => e.data['frozen'],
    );
    expect(events).toEqual([true, false]);
  });

  it('a swap, reported, publishes dex.swapped', async () => {
    const trader = randomKeypair();
    await h.ledger.faucet(trader.address);
    const info = await h.ledger.info();
    const swap = await h.ledger.swap({ from: trader, sell: info.contracts.asset, amount: 10_000_000n });
    const res = await report(h, { account: trader.address, tx: swap.tx, kind: 'swap' }, trader);
    expect(await res.json()).toMatchObject({
      repeated: false,
      event: {
        type: 'dex.swapped',
        data: {
          account: trader.address,
          sold: '10000000',
          soldAsset: info.contracts.asset,
          bought: swap.bought.toString(),
          tx: swap.tx,
        },
      },
    });
  });
});

describe('a frozen payer', () => {
  let h: Harness;
  let seller: http.Server;
  let sellerUrl = '';
  const owner = randomKeypair();
  const agent = randomKeypair();
  const payee = randomKeypair();
  let account = '';
  let signer: ChannelSigner;

  beforeAll(async () => {
    h = await startHarness();
    const info = await h.ledger.info();
    ({ address: account } = await h.ledger.createAccount({
      owner,
      policy: {
        agentKey: agent.address,
        perTxCap: 10_000_000n,
        dailyCap: 10_000_000n,
        payees: [payee.address],
        expiresLedger: info.latestLedger + 100_000,
      },
    }));
    await h.ledger.faucet(account);
    const voucherKey = randomKeypair();
    const { channelId } = await h.ledger.openChannel({
      payer: { account, signer: agent },
      payee: payee.address,
      deposit: 1_000_000n,
      voucherKey,
    });
    signer = new ChannelSigner({
      channelId,
      deposit: 1_000_000n,
      voucherKey,
      networkPassphrase: info.passphrase,
      channelContract: info.contracts.channel,
      network: info.network,
      payee: payee.address,
      asset: info.contracts.asset,
    });
    const client = svc({ facilitator: h.url, payTo: payee.address, sellerToken: h.sellerToken(payee.address) });
    const ticker = { price: 1000n, unit: 'second' as const, sliceSeconds: 2 };
    const app = express();
    app.get('/ticks', client.meter(ticker), async (req, res) => {
      const s = await client.stream(req, res, ticker);
      for (let i = 1; i <= 10 && (await s.next()); i++) {
        s.send('tick', { i });
        await new Promise((r) => setTimeout(r, 150));
      }
      await s.end();
    });
    seller = http.createServer(app);
    await new Promise<void>((r) => seller.listen(0, '127.0.0.1', () => r()));
    sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => seller.close(() => r()));
    await h.close();
  });

  it('its stream ends with ACCOUNT_FROZEN once its owner freezes it, and /verify then refuses it', async () => {
    let frozeAt = 0;
    const run = await streamPaid({
      url: `${sellerUrl}/ticks`,
      signer,
      onEvent: (e) => {
        if (e.event === 'tick' && frozeAt === 0) {
          frozeAt = e.at;
          void h.ledger.freeze({ owner, account, frozen: true });
        }
      },
    });
    expect(run.ended).toMatchObject({ reason: 'ACCOUNT_FROZEN', units: 2, charged: '2000' });
    const refused = await h.verify(signer.next(5000n), h.requirements({ payTo: payee.address }));
    expect(refused.body).toMatchObject({ isValid: false, invalidReason: 'ACCOUNT_FROZEN' });
    await h.ledger.freeze({ owner, account, frozen: false });
    await h.f.watcher.tick();
    expect((await h.verify(signer.next(5000n), h.requirements({ payTo: payee.address }))).body['isValid']).toBe(true);
  });
});
