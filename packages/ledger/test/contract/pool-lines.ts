// Ledger contract cases: the credit pool's lines (docs/protocol.md#the-local-ledger pool.open_line, pool.close_line,
// pool.liquidate): who may open and repay, the opening health, live health numbers, liquidation
// at a loss with the share price falling by the amount worked out by hand, and conservation of
// each asset across every pool op.
import { describe, expect, it } from 'vitest';
import { DEX_GENESIS_RESERVES } from '../../src/index.js';
import type { TxResult } from '../../src/index.js';
import { Actor, allEvents, ASSET, CONTRACTS } from '../helpers/actors.js';
import { borrower, deposit, openLine, POOL, poolEvents, poolOf, XLM } from '../helpers/pool.js';
import type { SmartActor } from '../helpers/smart-account.js';
import type { ContractFixture } from './fixture.js';

const A_DEPOSIT = 1_000_000_000n;
const LIMIT = 100_000_000n;
const DEBT = 102_000_000n; // limit + 2%
/** With the line in hand the account must hold 110% of the debt: 112,200,000 − 100,000,000 of its own. */
const MIN_COLLATERAL = 12_200_000n;

const pay = (sa: SmartActor, to: string, amount: bigint) => sa.byAgent('transfer', { to, amount: amount.toString() });
const swap = (sa: SmartActor, sell: string, amount: bigint) =>
  sa.byAgent('dex.swap', { sell, amount: amount.toString() });

async function lineOf(f: ContractFixture, account: string) {
  return (await poolOf(f.ledger)).lines.find((l) => l.account === account);
}

export function poolLineCases(f: ContractFixture): void {
  describe('credit pool: lines', () => {
    it('opens a line to a smart account at its owner’s request: limit to the account, debt = limit + 2% (pool.line_opened)', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, MIN_COLLATERAL - 1n);
      const open = () => f.stranger.send('pool.open_line', { account: sa.address, limit: LIMIT.toString() });
      // 12,199,999 + 100,000,000 = 112,199,999 against 102,000,000: 10,999 bps, liquidatable at once.
      expect((await f.expectCode(open(), 27)).message).toMatch(/10999 bps/);
      await f.ledger.faucet(sa.address, 1n);
      const opened = await open();
      expect(opened).toMatchObject({
        status: 'SUCCESS',
        source: f.stranger.address,
        result: { limit: '100000000', fee: '2000000', debt: '102000000' },
      });
      expect(poolEvents(opened)).toEqual([
        ['asset.transferred', { asset: ASSET, from: POOL, to: sa.address, amount: '100000000' }],
        [
          'pool.line_opened',
          {
            account: sa.address,
            limit: '100000000',
            fee: '2000000',
            debt: '102000000',
            size: '1000000000',
            totalShares: '1000000000',
            sharePrice: '10000000',
          },
        ],
      ]);
      expect(await sa.balance()).toBe(LIMIT + MIN_COLLATERAL);
      expect(await lineOf(f, sa.address)).toEqual({
        account: sa.address,
        debt: DEBT,
        value: 112_200_000n,
        healthBps: 11_000,
        liquidatable: false,
        openedAt: opened.ts,
      });
      // One open line per account; the pool lends at most its idle funds (900,000,000 now).
      await f.expectCode(open(), 27);
      const other = await borrower(f.ledger, f.stranger, f.payee.address, 200_000_000n);
      await f.expectCode(f.stranger.send('pool.open_line', { account: other.address, limit: '900000001' }), 27);
      await f.expectCode(f.stranger.send('pool.open_line', { account: other.address, limit: '0' }), 27);
      f.h.advance(1);
      // The owner key may also sign as the account itself; 900,000,000 → fee 18,000,000.
      const second = await other.byOwner('pool.open_line', { account: other.address, limit: '900000000' });
      expect(second).toMatchObject({ status: 'SUCCESS', result: { fee: '18000000', debt: '918000000' } });
      const pool = await poolOf(f.ledger);
      expect(pool).toMatchObject({ idle: 0n, lent: A_DEPOSIT, size: A_DEPOSIT, utilizationBps: 10_000 });
      // 1,100,000,000 × 10,000 / 918,000,000 = 11,982.57… → 11,982; lines oldest first.
      expect(pool.lines).toEqual([
        {
          account: sa.address,
          debt: DEBT,
          value: 112_200_000n,
          healthBps: 11_000,
          liquidatable: false,
          openedAt: opened.ts,
        },
        {
          account: other.address,
          debt: 918_000_000n,
          value: 1_100_000_000n,
          healthBps: 11_982,
          liquidatable: false,
          openedAt: second.ts,
        },
      ]);
    });

    it('refuses a line to a plain account (27) or at anyone’s request but the owner’s (26)', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, MIN_COLLATERAL);
      const args = { account: sa.address, limit: LIMIT.toString() };
      await f.expectCode(f.stranger.send('pool.open_line', { ...args, account: f.payee.address }), 27);
      await f.expectCode(f.stranger.send('pool.open_line', { ...args, account: CONTRACTS.channel }), 27);
      await f.expectCode(f.payee.send('pool.open_line', args), 26);
      await f.expectCode(sa.byAgent('pool.open_line', args), 26);
      const elsewhere = await borrower(f.ledger, f.payee, f.payee.address, 0n);
      await f.expectCode(elsewhere.byOwner('pool.open_line', args), 26);
      expect(await poolOf(f.ledger)).toMatchObject({ idle: A_DEPOSIT, lines: [] });
      expect(await sa.balance()).toBe(MIN_COLLATERAL);
    });

    it('close_line repays the whole debt: by the owner, or by the agent within its caps; others 26, no line 27', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, 20_000_000n);
      const close = (by: Actor) => by.send('pool.close_line', { account: sa.address });
      await f.expectCode(close(f.stranger), 27); // no line yet
      await openLine(f.stranger, sa.address, LIMIT);
      await f.expectCode(close(f.payee), 26);
      // The agent repays as the account: the 102,000,000 leaving it is over the per-tx cap of 100,000,000.
      await f.expectCode(sa.byAgent('pool.close_line', { account: sa.address }), 6);
      const closed = await close(f.stranger); // the owner as itself
      expect(poolEvents(closed)).toEqual([
        ['asset.transferred', { asset: ASSET, from: sa.address, to: POOL, amount: '102000000' }],
        [
          'pool.line_closed',
          {
            account: sa.address,
            repaid: '102000000',
            principal: '100000000',
            fee: '2000000',
            size: '1002000000',
            totalShares: '1000000000',
            sharePrice: '10020000',
          },
        ],
      ]);
      expect(await sa.balance()).toBe(18_000_000n);
      await f.expectCode(close(f.stranger), 27);
      // A new, smaller line: 50,000,000 + 1,000,000 fee, repaid by the agent within its caps.
      await openLine(f.stranger, sa.address, 50_000_000n);
      await pay(sa, f.payee.address, 18_000_000n);
      expect((await f.expectCode(sa.byAgent('pool.close_line', { account: sa.address }), 27)).message).toMatch(
        /insufficient balance/,
      );
      await f.ledger.faucet(sa.address, 1_000_000n);
      expect(await sa.byAgent('pool.close_line', { account: sa.address })).toMatchObject({
        status: 'SUCCESS',
        result: { repaid: '51000000' },
      });
      expect(await sa.state()).toMatchObject({ spentToday: 18_000_000n + 51_000_000n });
      // 1,003,000,000 over 10^9 shares.
      expect(await poolOf(f.ledger)).toMatchObject({ size: 1_003_000_000n, lines: [], sharePrice: 10_030_000n });
    });

    it('a line whose account spends its funds becomes liquidatable below 110%; XLM counts at the DEX rate, rounded down', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, 20_000_000n);
      await openLine(f.stranger, sa.address, LIMIT);
      const liquidator = new Actor(f.ledger);
      const liquidate = () => liquidator.send('pool.liquidate', { account: sa.address });
      // 120,000,000 × 10,000 / 102,000,000 = 11,764.7 → 11,764.
      expect(await lineOf(f, sa.address)).toMatchObject({
        value: 120_000_000n,
        healthBps: 11_764,
        liquidatable: false,
      });
      expect((await f.expectCode(liquidate(), 27)).message).toMatch(/healthy/);
      // 10,000,001 USDC → 100,000,010 XLM, then 15 XLM → 1 USDC: 110,000,000 USDC and 99,999,995 XLM,
      // worth 110,000,000 + ⌊99,999,995 / 10⌋ = 119,999,999.
      expect((await swap(sa, ASSET, 10_000_001n)).status).toBe('SUCCESS');
      expect((await swap(sa, XLM, 15n)).status).toBe('SUCCESS');
      expect(await lineOf(f, sa.address)).toMatchObject({ value: 119_999_999n, healthBps: 11_764 });
      // Spend down to 112,200,000: exactly 11,000 bps, not below the threshold.
      await pay(sa, f.payee.address, 7_799_999n);
      expect(await lineOf(f, sa.address)).toMatchObject({
        value: 112_200_000n,
        healthBps: 11_000,
        liquidatable: false,
      });
      await f.expectCode(liquidate(), 27);
      await pay(sa, f.payee.address, 1n);
      expect(await lineOf(f, sa.address)).toMatchObject({ value: 112_199_999n, healthBps: 10_999, liquidatable: true });
      // 40,000,000 USDC and the XLM: 49,999,999 × 10,000 / 102,000,000 = 4,901.96… → 4,901.
      await pay(sa, f.payee.address, 62_200_000n);
      expect(await lineOf(f, sa.address)).toMatchObject({
        debt: DEBT,
        value: 49_999_999n,
        healthBps: 4_901,
        liquidatable: true,
      });
    });

    it('liquidation at a loss: seizes USDC then XLM sold at the rate, the share price falls by the loss over the shares', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, 20_000_000n);
      await openLine(f.stranger, sa.address, LIMIT);
      await swap(sa, ASSET, 10_000_001n);
      await swap(sa, XLM, 15n);
      await pay(sa, f.payee.address, 70_000_000n); // holds 40,000,000 USDC and 99,999,995 XLM
      const before = await poolOf(f.ledger);
      expect(before).toMatchObject({ size: A_DEPOSIT, idle: 900_000_000n, lent: LIMIT, sharePrice: 10_000_000n });
      const liquidator = new Actor(f.ledger);
      const res = await liquidator.send('pool.liquidate', { account: sa.address });
      // Seized: 40,000,000 USDC, then ⌊99,999,995 / 10⌋ = 9,999,999 USDC for 99,999,990 XLM
      // (5 XLM buy nothing and stay): 49,999,999 of a 102,000,000 debt, short 52,000,001.
      expect(res.result).toEqual({ seized: '49999999', shortfall: '52000001' });
      // size = 900,000,000 + 49,999,999 = 949,999,999 over 10^9 shares: 9,499,999.99 → 9,499,999,
      // down 500,001 from 10,000,000 (the principal lost, 50,000,001, over 100 whole shares, rounded down).
      expect(poolEvents(res)).toEqual([
        ['asset.transferred', { asset: ASSET, from: sa.address, to: POOL, amount: '40000000' }],
        ['asset.transferred', { asset: XLM, from: sa.address, to: POOL, amount: '99999990' }],
        ['asset.transferred', { asset: XLM, from: POOL, to: CONTRACTS.dex, amount: '99999990' }],
        ['asset.transferred', { asset: ASSET, from: CONTRACTS.dex, to: POOL, amount: '9999999' }],
        ['dex.swapped', { account: POOL, sold: '99999990', soldAsset: XLM, bought: '9999999', boughtAsset: ASSET }],
        [
          'pool.liquidated',
          {
            account: sa.address,
            liquidator: liquidator.address,
            debt: '102000000',
            principal: '100000000',
            seized: '49999999',
            shortfall: '52000001',
            size: '949999999',
            totalShares: '1000000000',
            sharePrice: '9499999',
          },
        ],
      ]);
      const after = await poolOf(f.ledger);
      expect(after).toMatchObject({
        size: 949_999_999n,
        idle: 949_999_999n,
        lent: 0n,
        totalShares: A_DEPOSIT,
        sharePrice: 9_499_999n,
        lines: [],
      });
      expect(before.sharePrice - after.sharePrice).toBe(500_001n);
      expect(after.positions).toEqual([{ address: f.payer.address, shares: A_DEPOSIT, value: 949_999_999n }]);
      expect(await sa.balance()).toBe(0n);
      expect(await sa.balance(XLM)).toBe(5n);
      expect(await f.ledger.getAccount(POOL)).toMatchObject({
        balances: expect.arrayContaining([
          { asset: ASSET, amount: 949_999_999n },
          { asset: XLM, amount: 0n },
        ]),
      });
      await f.expectCode(liquidator.send('pool.liquidate', { account: sa.address }), 27); // no line any more
      expect((await f.payer.send('pool.withdraw', { shares: A_DEPOSIT.toString() })).result).toEqual({
        amount: '949999999',
      });
    });

    it('liquidation seizes no more than the debt and leaves the rest to the account; a frozen account may be liquidated', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, 20_000_000n);
      await openLine(f.stranger, sa.address, LIMIT);
      // All but 10,000,000 USDC into XLM: 1,100,000,000 XLM worth 110,000,000.
      await swap(sa, ASSET, 100_000_000n);
      await swap(sa, ASSET, 10_000_000n);
      expect((await f.stranger.send('account.freeze', { account: sa.address, frozen: true })).status).toBe('SUCCESS');
      expect(await lineOf(f, sa.address)).toMatchObject({ value: 120_000_000n, liquidatable: false });
      // Its owner moves value out (the freeze binds the agent only) until the line is unhealthy.
      await sa.byOwner('transfer', { to: f.payee.address, amount: '10000000' });
      await sa.byOwner('dex.swap', { sell: XLM, amount: '10' }); // 1,099,999,990 XLM worth 109,999,999
      expect(await lineOf(f, sa.address)).toMatchObject({ value: 110_000_000n, healthBps: 10_784, liquidatable: true });
      const res = await new Actor(f.ledger).send('pool.liquidate', { account: sa.address });
      // Owed 102,000,000: 1 USDC base unit, then 101,999,999 bought with 1,019,999,990 XLM.
      expect(res.result).toEqual({ seized: '102000000', shortfall: '0' });
      expect(await sa.balance()).toBe(0n);
      expect(await sa.balance(XLM)).toBe(1_100_000_000n - 10n - 1_019_999_990n);
      // Repaid in full by the seizure: the fee is the investors' (1,002,000,000 over 10^9 shares).
      expect(await poolOf(f.ledger)).toMatchObject({ size: 1_002_000_000n, sharePrice: 10_020_000n, lines: [] });
    });

    it('conserves each asset across deposits, lines, repayment, swaps, liquidation and withdrawals', async () => {
      const liquidator = new Actor(f.ledger);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, 0n);
      const account = sa.address;
      const parties = [
        f.payer.address,
        f.payee.address,
        f.stranger.address,
        liquidator.address,
        account,
        POOL,
        CONTRACTS.dex,
      ];
      let minted = 0n;
      const mint = async (address: string, amount: bigint) => {
        await f.ledger.faucet(address, amount);
        minted += amount;
      };
      const check = async () => {
        const totals = { usdc: 0n, xlm: 0n };
        for (const address of parties) {
          const { balances } = await f.ledger.getAccount(address);
          totals.usdc += balances.find((b) => b.asset === ASSET)?.amount ?? 0n;
          totals.xlm += balances.find((b) => b.asset === XLM)?.amount ?? 0n;
        }
        expect(totals).toEqual({ usdc: DEX_GENESIS_RESERVES.asset + minted, xlm: DEX_GENESIS_RESERVES.xlm });
        // With no stray gifts, the pool holds exactly its idle funds, and no XLM.
        const pool = await poolOf(f.ledger);
        const held = (await f.ledger.getAccount(POOL)).balances;
        expect(held.find((b) => b.asset === ASSET)?.amount ?? 0n).toBe(pool.idle);
        expect(held.find((b) => b.asset === XLM)?.amount ?? 0n).toBe(0n);
        expect(pool.size).toBe(pool.idle + pool.lent);
      };
      await mint(f.payer.address, A_DEPOSIT);
      await mint(f.payee.address, 300_000_000n);
      await mint(account, 30_000_000n);
      const steps: Array<() => Promise<TxResult>> = [
        () => f.payer.send('pool.deposit', { amount: A_DEPOSIT.toString() }),
        () => f.stranger.send('pool.open_line', { account, limit: '200000000' }),
        () => f.payee.send('pool.deposit', { amount: '300000000' }),
        () => f.stranger.send('pool.close_line', { account }),
        () => f.payee.send('pool.withdraw', { shares: '100000000' }),
        () => f.stranger.send('pool.open_line', { account, limit: '150000000' }),
        () => swap(sa, ASSET, 50_000_000n),
        () => pay(sa, f.payee.address, 100_000_000n),
        () => liquidator.send('pool.liquidate', { account }),
        () => f.payer.send('pool.withdraw', { shares: '500000000' }),
        () => f.payee.send('pool.withdraw', { shares: '100000000' }),
      ];
      const statuses: string[] = [];
      await check();
      for (const step of steps) {
        statuses.push((await step()).status);
        await check();
      }
      expect(statuses).toEqual(Array(steps.length).fill('SUCCESS'));

      // The event log tells the same story: every pool op in order, and the asset.* events replay
      // to every balance (the DEX's genesis reserves aside, which no tx records).
      const events = await allEvents(f.ledger);
      expect(events.filter((e) => e.type.startsWith('pool.')).map((e) => e.type)).toEqual([
        'pool.deposited',
        'pool.line_opened',
        'pool.deposited',
        'pool.line_closed',
        'pool.withdrawn',
        'pool.line_opened',
        'pool.liquidated',
        'pool.withdrawn',
        'pool.withdrawn',
      ]);
      const replayed = new Map<string, bigint>();
      const add = (who: unknown, asset: unknown, amount: bigint) =>
        replayed.set(
          `${String(who)} ${String(asset)}`,
          (replayed.get(`${String(who)} ${String(asset)}`) ?? 0n) + amount,
        );
      for (const e of events.filter((ev) => ev.type.startsWith('asset.'))) {
        const amount = BigInt(String(e.data['amount']));
        add(e.data['to'], e.data['asset'], amount);
        if (e.type === 'asset.transferred') add(e.data['from'], e.data['asset'], -amount);
      }
      for (const address of parties) {
        const { balances } = await f.ledger.getAccount(address);
        for (const [asset, genesis] of [
          [ASSET, DEX_GENESIS_RESERVES.asset],
          [XLM, DEX_GENESIS_RESERVES.xlm],
        ] as const) {
          const held = balances.find((b) => b.asset === asset)?.amount ?? 0n;
          expect(replayed.get(`${address} ${asset}`) ?? 0n, `${address} ${asset}`).toBe(
            held - (address === CONTRACTS.dex ? genesis : 0n),
          );
        }
      }
    });
  });
}
