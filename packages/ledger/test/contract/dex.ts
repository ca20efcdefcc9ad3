// Ledger contract cases: the fixed-rate DEX pool (docs/protocol.md#the-local-ledger dex.swap): genesis reserves,
// exact amounts both ways, conservation of each asset, failure codes, a smart account's agent.
import { describe, expect, it } from 'vitest';
import { isContractAddress } from '@svc/core';
import { DEX_GENESIS_RESERVES, DEX_RATE } from '../../src/index.js';
import type { Ledger } from '../../src/index.js';
import { allEvents, ASSET, CONTRACTS } from '../helpers/actors.js';
import { SmartActor } from '../helpers/smart-account.js';
import type { ContractFixture } from './fixture.js';

const XLM = CONTRACTS.xlm;
const POOL = CONTRACTS.dex;

async function holdings(ledger: Ledger, address: string): Promise<{ usdc: bigint; xlm: bigint }> {
  const { balances } = await ledger.getAccount(address);
  const of = (asset: string) => balances.find((b) => b.asset === asset)?.amount ?? 0n;
  return { usdc: of(ASSET), xlm: of(XLM) };
}

export function dexCases(f: ContractFixture): void {
  describe('dex.swap', () => {
    it('the pool and XLM are derived contracts; the pool holds its genesis reserves, recorded by no tx', async () => {
      const info = await f.ledger.info();
      expect({ dex: info.contracts.dex, xlm: info.contracts.xlm }).toEqual({ dex: POOL, xlm: XLM });
      expect(isContractAddress(POOL) && isContractAddress(XLM)).toBe(true);
      expect(new Set([info.contracts.channel, info.contracts.asset, info.contracts.creditPool, POOL, XLM]).size).toBe(
        5,
      );
      expect(await holdings(f.ledger, POOL)).toEqual({
        usdc: DEX_GENESIS_RESERVES.asset,
        xlm: DEX_GENESIS_RESERVES.xlm,
      });
      expect((await f.ledger.getAccount(POOL)).seq).toBe(0);
      expect(await allEvents(f.ledger)).toEqual([]);
      expect(DEX_RATE).toBe(10n);
    });

    it('swaps both ways at 1 USDC = 10 XLM with exact amounts, rounding down, conserving each asset', async () => {
      await f.ledger.faucet(f.payer.address, 1_000_000n);
      const total = async () => {
        const [payer, pool] = [await holdings(f.ledger, f.payer.address), await holdings(f.ledger, POOL)];
        return { usdc: payer.usdc + pool.usdc, xlm: payer.xlm + pool.xlm };
      };
      const before = await total();
      expect(before).toEqual({ usdc: DEX_GENESIS_RESERVES.asset + 1_000_000n, xlm: DEX_GENESIS_RESERVES.xlm });

      const buy = await f.payer.send('dex.swap', { sell: ASSET, amount: '123457' });
      expect(buy).toMatchObject({ status: 'SUCCESS', result: { sold: '123457', bought: '1234570', boughtAsset: XLM } });
      expect(buy.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: f.payer.address, to: POOL, amount: '123457' }],
        ['asset.transferred', { asset: XLM, from: POOL, to: f.payer.address, amount: '1234570' }],
        [
          'dex.swapped',
          { account: f.payer.address, sold: '123457', soldAsset: ASSET, bought: '1234570', boughtAsset: XLM },
        ],
      ]);
      expect(await holdings(f.ledger, f.payer.address)).toEqual({ usdc: 876_543n, xlm: 1_234_570n });
      expect(await total()).toEqual(before);

      const sell = await f.payer.send('dex.swap', { sell: XLM, amount: '1234569' });
      expect(sell).toMatchObject({
        status: 'SUCCESS',
        result: { sold: '1234569', bought: '123456', boughtAsset: ASSET },
      });
      expect(sell.events.at(-1)?.data).toEqual({
        account: f.payer.address,
        sold: '1234569',
        soldAsset: XLM,
        bought: '123456',
        boughtAsset: ASSET,
      });
      expect(await holdings(f.ledger, f.payer.address)).toEqual({ usdc: 999_999n, xlm: 1n });
      expect(await holdings(f.ledger, POOL)).toEqual({
        usdc: DEX_GENESIS_RESERVES.asset + 1n,
        xlm: DEX_GENESIS_RESERVES.xlm - 1n,
      });
      expect(await total()).toEqual(before);
      expect(await f.ledger.getTx(sell.hash)).toEqual(sell);
    });

    it('fails with 27 for an amount ≤ 0, an asset the pool does not trade, buying nothing, too small a balance or reserve', async () => {
      await f.tearDown();
      await f.setUp({ dexReserves: { asset: 100n, xlm: 5_000n } });
      await f.ledger.faucet(f.payer.address, 1_000n);
      const swap = (sell: string, amount: number) => f.payer.send('dex.swap', { sell, amount: amount.toString() });
      await f.expectCode(swap(ASSET, 0), 27);
      await f.expectCode(swap(ASSET, -1), 27);
      await f.expectCode(swap(CONTRACTS.channel, 10), 27);
      await f.expectCode(swap(f.payee.address, 10), 27);
      expect((await swap(ASSET, 400)).status).toBe('SUCCESS'); // the pool: 500 USDC, 1,000 XLM
      expect((await f.expectCode(swap(ASSET, 101), 27)).message).toMatch(/insufficient reserves/);
      expect((await f.expectCode(swap(XLM, 9), 27)).message).toMatch(/buy nothing/);
      expect((await f.expectCode(swap(XLM, 4_001), 27)).message).toMatch(/insufficient balance/);
      expect(await holdings(f.ledger, f.payer.address)).toEqual({ usdc: 600n, xlm: 4_000n });
      expect(await holdings(f.ledger, POOL)).toEqual({ usdc: 500n, xlm: 1_000n });
      expect((await swap(ASSET, 100)).status).toBe('SUCCESS'); // exactly the rest of the XLM reserve
      expect(await holdings(f.ledger, POOL)).toEqual({ usdc: 600n, xlm: 0n });
      expect(await f.payer.seq()).toBe(9);
    });

    it('a smart account’s agent swaps within its caps but needs no payee; XLM counts at the rate, rounded up', async () => {
      const latest = await f.ledger.latestLedger();
      const policy = (agent: { address: string }) => ({
        agentKey: agent.address,
        perTxCap: '1000',
        dailyCap: '2500',
        payees: [f.payee.address],
        expiresLedger: latest + 1000,
      });
      const sa = await SmartActor.create(f.ledger, f.payer, policy);
      await f.ledger.faucet(sa.address, 1_000_000n);
      const swap = (by: 'agent' | 'owner', sell: string, amount: number) =>
        sa.send(by === 'agent' ? sa.agent : f.payer.keys, 'dex.swap', { sell, amount: amount.toString() });
      expect((await swap('owner', ASSET, 10_000)).status).toBe('SUCCESS'); // the owner: not limited, not counted
      await f.expectCode(swap('agent', ASSET, 1_001), 6);
      expect((await swap('agent', ASSET, 1_000)).status).toBe('SUCCESS');
      await f.expectCode(swap('agent', XLM, 10_001), 6); // worth 1,000.1 USDC base units: 1,001
      expect(await swap('agent', XLM, 9_991)).toMatchObject({ status: 'SUCCESS', result: { bought: '999' } }); // counts 1,000
      await f.expectCode(swap('agent', XLM, 5_001), 7);
      expect((await swap('agent', XLM, 5_000)).status).toBe('SUCCESS');
      expect(await sa.state()).toMatchObject({ spentToday: 2_500n });
      expect(await holdings(f.ledger, sa.address)).toEqual({
        usdc: 1_000_000n - 11_000n + 999n + 500n,
        xlm: 110_000n - 9_991n - 5_000n,
      });
    });
  });
}
