// Ledger contract cases: network, clock, accounts and faucet.
import { describe, expect, it } from 'vitest';
import { isContractAddress, NETWORKS, randomKeypair } from '@svc/core';
import { ASSET, balanceOf, CONTRACTS } from '../helpers/actors.js';
import type { ContractFixture } from './fixture.js';

const GRANT = 100_000_000_000n;
const LEDGER_SECONDS = 5;

export function accountCases(f: ContractFixture): void {
  describe('network and clock', () => {
    it('describes stellar:local, its derived contracts and the USDC asset', async () => {
      const info = await f.ledger.info();
      expect(info).toMatchObject({
        network: 'stellar:local',
        passphrase: NETWORKS['stellar:local'].passphrase,
        ledgerSeconds: LEDGER_SECONDS,
        asset: { code: 'USDC', decimals: 7 },
      });
      expect(info.contracts).toEqual(CONTRACTS);
      const addresses = [info.contracts.channel, info.contracts.asset, info.contracts.creditPool];
      expect(addresses.every(isContractAddress)).toBe(true);
      expect(new Set(addresses).size).toBe(3);
    });

    it('closes a f.ledger every ledgerSeconds of the clock and stamps txs with it', async () => {
      const start = await f.ledger.latestLedger();
      f.h.advance(3);
      expect(await f.ledger.latestLedger()).toBe(start + 3);
      expect((await f.ledger.info()).latestLedger).toBe(start + 3);
      const grant = await f.ledger.faucet(f.payer.address);
      expect(grant.ledger).toBe(start + 3);
      expect(grant.events[0]!.ledger).toBe(start + 3);
      expect(Number.isNaN(Date.parse(grant.ts))).toBe(false);
    });
  });

  describe('accounts and faucet', () => {
    it('every address exists implicitly with seq 0 and no balances; a bad address is BAD_REQUEST', async () => {
      expect(await f.ledger.getAccount(f.payer.address)).toEqual({ address: f.payer.address, seq: 0, balances: [] });
      expect(await f.ledger.getAccount(CONTRACTS.creditPool)).toEqual({
        address: CONTRACTS.creditPool,
        seq: 0,
        balances: [],
      });
      await expect(f.ledger.getAccount('GNOTANADDRESS')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });

    it('the faucet mints 10,000 units by default, as a tx with an asset.minted event', async () => {
      const grant = await f.ledger.faucet(f.payer.address);
      expect(grant).toMatchObject({
        status: 'SUCCESS',
        op: 'faucet',
        source: ASSET,
        result: { amount: GRANT.toString() },
      });
      expect(grant.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(grant.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.minted', { asset: ASSET, to: f.payer.address, amount: GRANT.toString() }],
      ]);
      expect(await f.ledger.getTx(grant.hash)).toEqual(grant);
      expect(await f.ledger.getAccount(f.payer.address)).toEqual({
        address: f.payer.address,
        seq: 0,
        balances: [{ asset: ASSET, amount: GRANT }],
      });
    });

    it('the faucet grants an explicit amount up to its maximum and refuses more, zero or a bad address', async () => {
      await f.ledger.faucet(f.payer.address, 5n);
      expect(await f.payer.balance()).toBe(5n);
      await expect(f.ledger.faucet(f.payer.address, GRANT + 1n)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(f.ledger.faucet(f.payer.address, 0n)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(f.ledger.faucet('nope')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      expect(await f.payer.balance()).toBe(5n);
    });

    it('the faucet limits grants per address and in total per hour, with Retry-After in whole seconds', async () => {
      await f.tearDown();
      await f.setUp({ faucet: { perAddressPerHour: 2, totalPerHour: 3 } });
      const [a, b, c] = [randomKeypair().address, randomKeypair().address, randomKeypair().address];
      await f.ledger.faucet(a);
      f.h.advance(10); // 50 s later
      await f.ledger.faucet(a);
      await expect(f.ledger.faucet(a)).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfter: 3550 });
      await f.ledger.faucet(b);
      await expect(f.ledger.faucet(c)).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfter: 3550 });
      expect(await balanceOf(f.ledger, c)).toBe(0n);
      f.h.advance(710); // the first grant leaves the hour's window
      await f.ledger.faucet(c);
      await expect(f.ledger.faucet(a)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
      expect(await balanceOf(f.ledger, a)).toBe(2n * GRANT);
    });
  });
}
