// The float view: GET /float (summary, lines, positions, sampled history), GET /float/lines/:account
// and GET /float/positions/:address, read from the local ledger's credit pool and never writing to
// it. The share price is checked by hand after a line closes with its fee.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import type { Keypair } from '@svc/core';
import { startHarness } from '../helpers/harness.js';
import type { Harness } from '../helpers/harness.js';

const UNIT = 10_000_000n;

interface Float {
  pool: {
    size: string;
    idle: string;
    lent: string;
    totalShares: string;
    sharePrice: string;
    utilizationBps: number;
    liquidationThresholdBps: number;
    lineCount: number;
    investorCount: number;
  };
  lines: { account: string; debt: string; value: string; healthBps: number; liquidatable: boolean }[];
  positions: { address: string; shares: string; value: string }[];
  history: { at: string; sharePrice: string; size: string; lent: string; utilizationBps: number }[];
  sampleSeconds: number;
}

describe('the float endpoints', () => {
  let h: Harness;
  const investors = [randomKeypair(), randomKeypair()];
  const owner = randomKeypair();
  const agent = randomKeypair();
  let account: string;

  let restarted = false;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    if (!restarted) await h.close();
    else fs.rmSync(h.dataDir, { recursive: true, force: true });
  });

  const get = async <T>(path: string): Promise<{ status: number; body: T & { error?: string } }> => {
    const res = await fetch(`${h.url}${path}`);
    return { status: res.status, body: (await res.json()) as T & { error?: string } };
  };

  async function ledgerEventCount(): Promise<number> {
    return (await h.f.localLedger!.events(null, 10_000)).events.length;
  }

  it('shows an empty pool at a share price of 1.0 before anyone invests', async () => {
    const { status, body } = await get<Float>('/float');
    expect(status).toBe(200);
    expect(body.pool).toMatchObject({
      size: '0',
      totalShares: '0',
      sharePrice: '10000000',
      utilizationBps: 0,
      lineCount: 0,
      investorCount: 0,
      liquidationThresholdBps: 11000,
    });
    expect(body.lines).toEqual([]);
    expect(body.sampleSeconds).toBe(60);
  });

  it('shows investors, a credit line and its health, and samples the history', async () => {
    for (const [i, investor] of investors.entries()) {
      await h.ledger.faucet(investor.address);
      await h.ledger.poolDeposit({ from: investor, amount: (i === 0 ? 1000n : 500n) * UNIT });
    }
    await h.ledger.faucet(owner.address);
    const info = await h.ledger.info();
    account = (
      await h.ledger.createAccount({
        owner,
        policy: {
          agentKey: agent.address,
          perTxCap: UNIT,
          dailyCap: 10n * UNIT,
          payees: [],
          expiresLedger: info.latestLedger + 10_000,
        },
      })
    ).address;
    await h.ledger.transfer({ from: owner, to: account, amount: 50n * UNIT });
    await h.ledger.openLine({ owner, account, limit: 100n * UNIT });
    await h.f.floatHistory.tick();

    const { body } = await get<Float>('/float');
    // size = idle 1400 + lent 100; fee ⌈100 × 2 %⌉ = 2 units, not counted until repaid.
    expect(body.pool).toMatchObject({
      size: String(1500n * UNIT),
      idle: String(1400n * UNIT),
      lent: String(100n * UNIT),
      totalShares: String(1500n * UNIT),
      sharePrice: '10000000',
      utilizationBps: 666, // ⌊100 × 10000 / 1500⌋
      lineCount: 1,
      investorCount: 2,
    });
    // value 150 units (50 own + 100 borrowed) against a debt of 102: ⌊150 × 10000 / 102⌋ = 14705.
    expect(body.lines).toEqual([
      expect.objectContaining({
        account,
        debt: String(102n * UNIT),
        value: String(150n * UNIT),
        healthBps: 14705,
        liquidatable: false,
      }),
    ]);
    expect(body.positions.map((p) => p.address)).toEqual([investors[0]!.address, investors[1]!.address]);
    const last = body.history.at(-1)!;
    expect(last).toMatchObject({
      sharePrice: '10000000',
      size: String(1500n * UNIT),
      lent: String(100n * UNIT),
      utilizationBps: 666,
    });
    expect(body.history.length).toBeGreaterThanOrEqual(2);

    const line = await get<Float['lines'][number]>(`/float/lines/${account}`);
    expect(line.status).toBe(200);
    expect(line.body).toEqual(body.lines[0]);
    const position = await get<Float['positions'][number]>(`/float/positions/${investors[1]!.address}`);
    expect(position.body).toEqual({
      address: investors[1]!.address,
      shares: String(500n * UNIT),
      value: String(500n * UNIT),
    });
  });

  it('the share price rises by the fee when the line is repaid (checked by hand)', async () => {
    await h.ledger.closeLine({ from: owner, account });
    await h.f.floatHistory.tick();
    const { body } = await get<Float>('/float');
    // idle 1400 + 102 repaid = 1502 units over 1500 shares: ⌊1502 × 10^7 / 1500⌋ = 10013333.
    expect(body.pool).toMatchObject({ size: String(1502n * UNIT), lent: '0', sharePrice: '10013333', lineCount: 0 });
    // ⌊1000 units of shares × 1502 / 1500⌋ = 1001.3333333 units.
    const position = await get<{ value: string }>(`/float/positions/${investors[0]!.address}`);
    expect(position.body.value).toBe('10013333333');
    expect(body.history.at(-1)!.sharePrice).toBe('10013333');
    expect(body.history.at(-2)!.sharePrice).toBe('10000000');
  });

  it('the share price falls after a liquidation at a loss (checked by hand)', async () => {
    // The account kept 48 units after repaying 102 of its 150. A new line of 100 (debt 102) …
    await h.ledger.openLine({ owner, account, limit: 100n * UNIT });
    // … then its owner moves 108 away: 40 left against 102, ⌊40 × 10000 / 102⌋ = 3921 bps.
    await h.ledger.transfer({ from: { account, signer: owner }, to: owner.address, amount: 108n * UNIT });
    const line = await get<Float['lines'][number]>(`/float/lines/${account}`);
    expect(line.body).toMatchObject({ value: String(40n * UNIT), healthBps: 3921, liquidatable: true });
    const liquidator = randomKeypair();
    await h.ledger.faucet(liquidator.address);
    const { seized, shortfall } = await h.ledger.liquidate({ from: liquidator, account });
    expect([seized, shortfall]).toEqual([40n * UNIT, 62n * UNIT]);
    await h.f.floatHistory.tick();
    const { body } = await get<Float>('/float');
    // idle 1402 + 40 seized = 1442 units over 1500 shares: ⌊1442 × 10^7 / 1500⌋ = 9613333.
    expect(body.pool).toMatchObject({ size: String(1442n * UNIT), lent: '0', sharePrice: '9613333', lineCount: 0 });
    expect(body.history.at(-1)!.sharePrice).toBe('9613333');
    // ⌊500 units of shares × 1442 / 1500⌋ = 480.6666666 units.
    expect((await get<{ value: string }>(`/float/positions/${investors[1]!.address}`)).body.value).toBe('4806666666');
  });

  it('history takes 1 to 500 samples (newest last) and the endpoints refuse bad input', async () => {
    const one = await get<Float>('/float?history=1');
    expect(one.body.history).toHaveLength(1);
    expect(one.body.history[0]!.sharePrice).toBe('9613333');
    for (const bad of ['0', '501', 'abc', '1.5', ''])
      expect((await get(`/float?history=${bad}`)).status, bad).toBe(400);
    expect((await get('/float?limit=3')).status).toBe(400);
    expect((await get(`/float/lines/${account}`)).status).toBe(404); // repaid: no line
    expect((await get('/float/lines/not-an-address')).status).toBe(400);
    expect((await get('/float/positions/not-an-address')).status).toBe(400);
    const nobody = randomKeypair().address;
    expect((await get(`/float/positions/${nobody}`)).body).toEqual({ address: nobody, shares: '0', value: '0' });
  });

  it('submits no transaction: the ledger is unchanged by any number of reads', async () => {
    const before = await ledgerEventCount();
    const seqs = async (keys: Keypair[]) => Promise.all(keys.map(async (k) => (await h.ledger.account(k.address)).seq));
    const seqBefore = await seqs([...investors, owner]);
    for (let i = 0; i < 5; i++) {
      await get('/float?history=500');
      await get(`/float/lines/${account}`);
      await get(`/float/positions/${investors[0]!.address}`);
    }
    expect(await ledgerEventCount()).toBe(before);
    expect(await seqs([...investors, owner])).toEqual(seqBefore);
  });

  it('keeps the history across a restart (it lives in the store)', async () => {
    const samples = (await get<Float>('/float?history=500')).body.history;
    expect(samples.length).toBeGreaterThanOrEqual(3);
    await h.f.close();
    restarted = true;
    const again = await startHarness({ DATA_DIR: h.dataDir });
    try {
      await again.f.floatHistory.tick(); // the start's sample, or one more
      const restored = (await (await fetch(`${again.url}/float?history=500`)).json()) as Float;
      expect(restored.history.slice(0, samples.length)).toEqual(samples);
      expect(restored.history.length).toBeGreaterThan(samples.length);
    } finally {
      await again.close();
    }
  });
});
