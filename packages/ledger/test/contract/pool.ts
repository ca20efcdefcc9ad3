// Ledger contract cases: the credit pool's investors (docs/protocol.md#the-local-ledger pool.deposit, pool.withdraw):
// the first deposit at 1.0, the share price after a profitable line, a later deposit minting fewer
// shares, withdrawals limited by idle funds, and the 27s. Every expected number is worked out by
// hand in the comments next to it.
import { describe, expect, it } from 'vitest';
import { ASSET_UNIT, POOL_LIQUIDATION_THRESHOLD_BPS } from '../../src/index.js';
import { Actor, ASSET } from '../helpers/actors.js';
import { borrower, deposit, openLine, POOL, poolEvents, poolOf } from '../helpers/pool.js';
import type { ContractFixture } from './fixture.js';

const A_DEPOSIT = 1_000_000_000n; // 100 USDC
const LIMIT = 100_000_000n; // 10 USDC
const FEE = 2_000_000n; // 2% of the limit
const COLLATERAL = 20_000_000n;

export function poolInvestorCases(f: ContractFixture): void {
  describe('credit pool: investors', () => {
    it('starts empty at a share price of 1.0; the first deposit mints shares 1:1 (pool.deposited)', async () => {
      expect(await poolOf(f.ledger)).toEqual({
        address: POOL,
        size: 0n,
        idle: 0n,
        lent: 0n,
        totalShares: 0n,
        sharePrice: ASSET_UNIT,
        utilizationBps: 0,
        liquidationThresholdBps: Number(POOL_LIQUIDATION_THRESHOLD_BPS),
        lines: [],
        positions: [],
      });
      expect(ASSET_UNIT).toBe(10_000_000n);
      const res = await deposit(f.ledger, f.payer, A_DEPOSIT);
      expect(res.result).toEqual({ shares: '1000000000' });
      expect(poolEvents(res)).toEqual([
        ['asset.transferred', { asset: ASSET, from: f.payer.address, to: POOL, amount: '1000000000' }],
        [
          'pool.deposited',
          {
            investor: f.payer.address,
            amount: '1000000000',
            shares: '1000000000',
            size: '1000000000',
            totalShares: '1000000000',
            sharePrice: '10000000',
          },
        ],
      ]);
      expect(await f.ledger.getTx(res.hash)).toEqual(res);
      expect(await poolOf(f.ledger)).toMatchObject({
        size: A_DEPOSIT,
        idle: A_DEPOSIT,
        totalShares: A_DEPOSIT,
        sharePrice: 10_000_000n,
        positions: [{ address: f.payer.address, shares: A_DEPOSIT, value: A_DEPOSIT }],
      });
      expect(await f.payer.balance()).toBe(0n);
    });

    it('a repaid line raises the share price by fee × 10^7 / shares; a later deposit mints fewer shares, rounded down', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, COLLATERAL);
      await openLine(f.stranger, sa.address, LIMIT);
      // Lending moves money but not the price: size = idle 900,000,000 + lent 100,000,000.
      expect(await poolOf(f.ledger)).toMatchObject({
        size: A_DEPOSIT,
        idle: A_DEPOSIT - LIMIT,
        lent: LIMIT,
        sharePrice: 10_000_000n,
        utilizationBps: 1_000,
      });
      const closed = await sa.byOwner('pool.close_line', { account: sa.address });
      expect(closed.result).toEqual({ repaid: '102000000' });
      // size 1,002,000,000 over 1,000,000,000 shares: 1,002,000,000 × 10^7 / 10^9 = 10,020,000,
      // i.e. up by 2,000,000 × 10^7 / 10^9 = 20,000 base units per share.
      const afterClose = await poolOf(f.ledger);
      expect(afterClose).toMatchObject({
        size: 1_002_000_000n,
        idle: 1_002_000_000n,
        lent: 0n,
        totalShares: A_DEPOSIT,
        sharePrice: 10_020_000n,
        utilizationBps: 0,
        lines: [],
      });
      expect(afterClose.sharePrice - 10_000_000n).toBe(20_000n);
      expect(afterClose.positions).toEqual([{ address: f.payer.address, shares: A_DEPOSIT, value: 1_002_000_000n }]);

      // 100,000,001 × 10^9 / 1,002,000,000 = 99,800,400.1996… → 99,800,400 shares.
      const second = await deposit(f.ledger, f.payee, 100_000_001n);
      expect(second.result).toEqual({ shares: '99800400' });
      expect(second.events.at(-1)?.data).toEqual({
        investor: f.payee.address,
        amount: '100000001',
        shares: '99800400',
        size: '1102000001',
        totalShares: '1099800400',
        sharePrice: '10020000',
      });
      // Values: ⌊shares × 1,102,000,001 / 1,099,800,400⌋: the payee's 99,800,400 shares are worth
      // 100,000,000 (the base unit lost to rounding stays with the pool), the payer's 1,002,000,000.
      const pool = await poolOf(f.ledger);
      expect(pool).toMatchObject({ size: 1_102_000_001n, totalShares: 1_099_800_400n, sharePrice: 10_020_000n });
      expect(new Map(pool.positions.map((p) => [p.address, [p.shares, p.value]]))).toEqual(
        new Map([
          [f.payer.address, [A_DEPOSIT, 1_002_000_000n]],
          [f.payee.address, [99_800_400n, 100_000_000n]],
        ]),
      );
      const out = await f.payee.send('pool.withdraw', { shares: '99800400' });
      expect(out.result).toEqual({ amount: '100000000' });
      expect(await f.payee.balance()).toBe(100_000_000n);
      expect(await poolOf(f.ledger)).toMatchObject({
        size: 1_002_000_001n,
        totalShares: A_DEPOSIT,
        sharePrice: 10_020_000n,
      });
    });

    it('withdrawals are limited by idle funds (27) and pay shares × size / totalShares (pool.withdrawn)', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, COLLATERAL);
      await openLine(f.stranger, sa.address, LIMIT);
      const withdraw = (shares: bigint) => f.payer.send('pool.withdraw', { shares: shares.toString() });
      expect((await f.expectCode(withdraw(A_DEPOSIT), 27)).message).toMatch(/idle/);
      await f.expectCode(withdraw(A_DEPOSIT + 1n), 27);
      await f.expectCode(withdraw(0n), 27);
      await f.expectCode(withdraw(-1n), 27);
      await f.expectCode(f.payee.send('pool.withdraw', { shares: '1' }), 27); // holds none
      const out = await withdraw(900_000_000n);
      expect(out.result).toEqual({ amount: '900000000' });
      expect(poolEvents(out)).toEqual([
        ['asset.transferred', { asset: ASSET, from: POOL, to: f.payer.address, amount: '900000000' }],
        [
          'pool.withdrawn',
          {
            investor: f.payer.address,
            shares: '900000000',
            amount: '900000000',
            size: '100000000',
            totalShares: '100000000',
            sharePrice: '10000000',
          },
        ],
      ]);
      expect(await poolOf(f.ledger)).toMatchObject({ idle: 0n, lent: LIMIT, size: LIMIT, utilizationBps: 10_000 });
      await f.expectCode(withdraw(1n), 27);
      // The line repaid: 102,000,000 over 100,000,000 shares = 10,200,000 per share; all of it comes out.
      expect((await f.stranger.send('pool.close_line', { account: sa.address })).status).toBe('SUCCESS');
      expect((await poolOf(f.ledger)).sharePrice).toBe(10_200_000n);
      expect((await withdraw(100_000_000n)).result).toEqual({ amount: '102000000' });
      expect(await f.payer.balance()).toBe(A_DEPOSIT + FEE);
      expect(await poolOf(f.ledger)).toMatchObject({
        size: 0n,
        idle: 0n,
        totalShares: 0n,
        sharePrice: ASSET_UNIT,
        positions: [],
      });
      expect(await f.ledger.getAccount(POOL)).toMatchObject({ balances: [{ asset: ASSET, amount: 0n }] });
      expect(await f.payer.seq()).toBe(8);
    });

    it('a deposit fails with 27 for an amount ≤ 0, one that buys no share, or more than the balance', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, COLLATERAL);
      await openLine(f.stranger, sa.address, LIMIT);
      expect((await sa.byOwner('pool.close_line', { account: sa.address })).status).toBe('SUCCESS');
      await f.ledger.faucet(f.payee.address, 10n);
      const put = (amount: string) => f.payee.send('pool.deposit', { amount });
      await f.expectCode(put('0'), 27);
      await f.expectCode(put('-10'), 27);
      // At 10,020,000 per share, 1 base unit buys ⌊1 × 10^9 / 1,002,000,000⌋ = 0 shares.
      expect((await f.expectCode(put('1'), 27)).message).toMatch(/no share/);
      expect((await f.expectCode(put('11'), 27)).message).toMatch(/insufficient balance/);
      expect((await put('10')).result).toEqual({ shares: '9' }); // ⌊10 × 10^9 / 1,002,000,000⌋
      expect(await f.payee.balance()).toBe(0n);
    });

    it('a transfer straight to the pool is no deposit: it mints no share and moves no price', async () => {
      await deposit(f.ledger, f.payer, A_DEPOSIT);
      await f.ledger.faucet(f.stranger.address, 5_000n);
      expect((await f.stranger.send('transfer', { to: POOL, amount: '5000' })).status).toBe('SUCCESS');
      expect(await poolOf(f.ledger)).toMatchObject({
        size: A_DEPOSIT,
        idle: A_DEPOSIT,
        totalShares: A_DEPOSIT,
        sharePrice: 10_000_000n,
        positions: [{ address: f.payer.address }],
      });
      expect((await f.payer.send('pool.withdraw', { shares: A_DEPOSIT.toString() })).result).toEqual({
        amount: A_DEPOSIT.toString(),
      });
      expect(await f.ledger.getAccount(POOL)).toMatchObject({ balances: [{ asset: ASSET, amount: 5_000n }] });
    });

    it('a smart account invests: its agent’s deposit counts against the caps, the shares are the account’s', async () => {
      const sa = await borrower(f.ledger, f.stranger, f.payee.address, 300_000_000n);
      await f.expectCode(sa.byAgent('pool.deposit', { amount: '100000001' }), 6); // perTxCap 100,000,000
      expect((await sa.byAgent('pool.deposit', { amount: '100000000' })).result).toEqual({ shares: '100000000' });
      expect(await sa.state()).toMatchObject({ spentToday: 100_000_000n });
      expect((await poolOf(f.ledger)).positions).toEqual([
        { address: sa.address, shares: 100_000_000n, value: 100_000_000n },
      ]);
      expect((await sa.byAgent('pool.withdraw', { shares: '40000000' })).result).toEqual({ amount: '40000000' });
      expect(await sa.balance()).toBe(240_000_000n);
      const investor = new Actor(f.ledger);
      await f.expectCode(investor.send('pool.withdraw', { shares: '1' }), 27);
    });
  });
}
