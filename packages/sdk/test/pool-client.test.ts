// LocalLedgerClient and the credit pool against a real local ledger server (random port, real
// HTTP): deposit, a line opened by the owner and repaid by the agent, a liquidation at a loss,
// withdrawal, the pool read back with exact bigints, and the contract's codes as LedgerError.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { LedgerError, randomKeypair } from '@svc/core';
import type { Keypair, LedgerInfo } from '@svc/core';
import { LocalLedgerClient } from '../src/index.js';
import type { SmartAccountSigner } from '../src/index.js';

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const DEPOSIT = 1_000_000_000n;
const LIMIT = 100_000_000n;

describe('LocalLedgerClient: the credit pool', () => {
  let dir: string;
  let server: LedgerServer;
  let client: LocalLedgerClient;
  let info: LedgerInfo;
  let investor: Keypair;
  let owner: Keypair;
  let seller: Keypair;
  let account: string;
  let asAgent: SmartAccountSigner;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sdk-pool-'));
    server = await startLedgerServer({ port: 0, dataDir: dir, ledgerSeconds: 5, clock: { now: () => T0 } });
    client = new LocalLedgerClient(server.url);
    info = await client.info();
    const agent = randomKeypair();
    [investor, owner, seller] = [randomKeypair(), randomKeypair(), randomKeypair()];
    const policy = {
      agentKey: agent.address,
      perTxCap: 200_000_000n,
      dailyCap: 1_000_000_000n,
      payees: [seller.address],
      expiresLedger: info.latestLedger + 1_000,
    };
    account = (await client.createAccount({ owner, policy })).address;
    asAgent = { account, signer: agent };
    await client.faucet(investor.address, DEPOSIT);
    await client.faucet(account, 20_000_000n);
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

  it('deposits, lends, is repaid with profit, liquidates at a loss and pays out: every number exact', async () => {
    expect(info.contracts.creditPool).toMatch(/^C[A-Z2-7]{55}$/);
    expect(await client.poolDeposit({ from: investor, amount: DEPOSIT })).toMatchObject({ shares: DEPOSIT });
    expect(await client.openLine({ owner, account, limit: LIMIT })).toMatchObject({
      limit: LIMIT,
      fee: 2_000_000n,
      debt: 102_000_000n,
    });
    expect(await client.pool()).toEqual({
      address: info.contracts.creditPool,
      size: DEPOSIT,
      idle: DEPOSIT - LIMIT,
      lent: LIMIT,
      totalShares: DEPOSIT,
      sharePrice: 10_000_000n,
      utilizationBps: 1_000,
      liquidationThresholdBps: 11_000,
      // 120,000,000 × 10,000 / 102,000,000 = 11,764.7 → 11,764
      lines: [
        {
          account,
          debt: 102_000_000n,
          value: 120_000_000n,
          healthBps: 11_764,
          liquidatable: false,
          openedAt: new Date(T0).toISOString(),
        },
      ],
      positions: [{ address: investor.address, shares: DEPOSIT, value: DEPOSIT }],
    });

    // The agent repays as the account: the 2,000,000 fee lifts the price to 1,002,000,000 × 10^7 / 10^9.
    expect(await client.closeLine({ from: asAgent, account })).toMatchObject({ repaid: 102_000_000n });
    expect(await client.pool()).toMatchObject({ size: 1_002_000_000n, lent: 0n, sharePrice: 10_020_000n, lines: [] });
    expect(await client.balance(account)).toBe(18_000_000n);

    // A second line, then the agent spends it: 18,000,000 against 102,000,000 is 1,764 bps.
    await client.openLine({ owner, account, limit: LIMIT });
    await client.transfer({ from: asAgent, to: seller.address, amount: LIMIT });
    expect((await client.pool())?.lines).toMatchObject([{ value: 18_000_000n, healthBps: 1_764, liquidatable: true }]);
    const liquidator = randomKeypair();
    expect(await client.liquidate({ from: liquidator, account })).toMatchObject({
      seized: 18_000_000n,
      shortfall: 84_000_000n,
    });
    // idle 902,000,000 + 18,000,000 = 920,000,000 over 10^9 shares: 9,200,000 per share.
    expect(await client.pool()).toMatchObject({
      size: 920_000_000n,
      idle: 920_000_000n,
      sharePrice: 9_200_000n,
      lines: [],
      positions: [{ shares: DEPOSIT, value: 920_000_000n }],
    });
    expect(await client.poolWithdraw({ from: investor, shares: DEPOSIT })).toMatchObject({ amount: 920_000_000n });
    expect(await client.balance(investor.address)).toBe(920_000_000n);
    expect(await client.pool()).toMatchObject({ size: 0n, totalShares: 0n, positions: [] });
  });

  it('the contract’s refusals come back as LedgerError with their codes', async () => {
    await client.poolDeposit({ from: investor, amount: DEPOSIT });
    expect(await code(client.openLine({ owner: randomKeypair(), account, limit: LIMIT }))).toBe(26);
    expect(await code(client.openLine({ owner: seller, account: seller.address, limit: LIMIT }))).toBe(27);
    expect(
      await code(client.submitAs(account, asAgent.signer, 'pool.open_line', { account, limit: LIMIT.toString() })),
    ).toBe(26);
    await client.openLine({ owner, account, limit: LIMIT });
    expect(await code(client.liquidate({ from: randomKeypair(), account }))).toBe(27); // healthy
    expect(await code(client.poolWithdraw({ from: investor, shares: DEPOSIT }))).toBe(27); // 900,000,000 idle
    expect(await code(client.closeLine({ from: seller, account }))).toBe(26);
    expect(await code(client.poolDeposit({ from: seller, amount: 1n }))).toBe(27); // no balance
    expect((await client.account(investor.address)).seq).toBe(2);
  });

  it('pool() is null where the ledger has no credit pool (404)', async () => {
    const notFound: typeof fetch = () =>
      Promise.resolve(
        new Response(
          JSON.stringify({ error: 'NOT_FOUND', source: 'ledger', message: 'This ledger has no credit pool.' }),
          { status: 404 },
        ),
      );
    expect(await new LocalLedgerClient('http://ledger.invalid/ledger', notFound).pool()).toBeNull();
    const down: typeof fetch = () => Promise.resolve(new Response('{}', { status: 503 }));
    await expect(new LocalLedgerClient('http://ledger.invalid/ledger', down).pool()).rejects.toMatchObject({
      status: 503,
    });
  });
});
