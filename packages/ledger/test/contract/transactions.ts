// Ledger contract cases: transactions: refusals, failures, seq.
import { describe, expect, it } from 'vitest';
import { NETWORKS, signLedgerTx, txHash } from '@svc/core';
import { LedgerTxRefused } from '../../src/index.js';
import { ASSET, CONTRACTS, PASS, snapshot } from '../helpers/actors.js';
import type { ContractFixture } from './fixture.js';

const GRANT = 100_000_000_000n;

export function transactionCases(f: ContractFixture): void {
  describe('transactions', () => {
    it('a transfer moves funds, consumes the seq and is retrievable by hash', async () => {
      await f.ledger.faucet(f.payer.address);
      const res = await f.payer.send('transfer', { to: f.payee.address, amount: '250' });
      expect(res).toMatchObject({ status: 'SUCCESS', source: f.payer.address, op: 'transfer' });
      expect(res.result).toBeUndefined();
      expect(res.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: f.payer.address, to: f.payee.address, amount: '250' }],
      ]);
      expect(await f.payer.seq()).toBe(1);
      expect(await f.payer.balance()).toBe(GRANT - 250n);
      expect(await f.payee.balance()).toBe(250n);
      expect(await f.ledger.getTx(res.hash)).toEqual(res);
      expect(await f.ledger.getTx(res.hash.toUpperCase())).toEqual(res);
    });

    it('refuses a bad signature with no effect', async () => {
      await f.ledger.faucet(f.payer.address);
      const before = await snapshot(f.ledger, [f.payer.address, f.payee.address]);
      const body = { source: f.payer.address, seq: 1, op: 'transfer', args: { to: f.payee.address, amount: '1' } };
      const forgedBy = signLedgerTx(f.stranger.keys, PASS, body);
      const otherNetwork = signLedgerTx(f.payer.keys, NETWORKS['stellar:testnet'].passphrase, body);
      const good = signLedgerTx(f.payer.keys, PASS, body);
      const flipped = { ...good, signature: (good.signature[0] === '0' ? '1' : '0') + good.signature.slice(1) };
      const identity = { ...good, signature: '01' + '00'.repeat(63) };
      for (const tx of [forgedBy, otherNetwork, flipped, identity])
        await expect(f.ledger.submit(tx)).rejects.toBeInstanceOf(LedgerTxRefused);
      expect(await snapshot(f.ledger, [f.payer.address, f.payee.address])).toEqual(before);
      expect(await f.ledger.getTx(txHash(PASS, body))).toBeNull();
    });

    it('refuses a replayed tx (same seq) with no effect', async () => {
      await f.ledger.faucet(f.payer.address);
      const tx = await f.payer.sign('transfer', { to: f.payee.address, amount: '10' });
      await f.ledger.submit(tx);
      const before = await snapshot(f.ledger, [f.payer.address, f.payee.address]);
      await expect(f.ledger.submit(tx)).rejects.toBeInstanceOf(LedgerTxRefused);
      await expect(
        f.ledger.submit(await f.payer.sign('transfer', { to: f.payee.address, amount: '11' }, 1)),
      ).rejects.toBeInstanceOf(LedgerTxRefused);
      expect(await snapshot(f.ledger, [f.payer.address, f.payee.address])).toEqual(before);
      expect(await f.payee.balance()).toBe(10n);
    });

    it('refuses a seq that skips ahead, or is not a positive integer', async () => {
      await f.ledger.faucet(f.payer.address);
      const before = await snapshot(f.ledger, [f.payer.address]);
      await expect(
        f.ledger.submit(await f.payer.sign('transfer', { to: f.payee.address, amount: '1' }, 2)),
      ).rejects.toThrow(/seq/);
      await expect(
        f.ledger.submit(await f.payer.sign('transfer', { to: f.payee.address, amount: '1' }, 0)),
      ).rejects.toBeInstanceOf(LedgerTxRefused);
      await expect(
        f.ledger.submit(await f.payer.sign('transfer', { to: f.payee.address, amount: '1' }, 1.5)),
      ).rejects.toBeInstanceOf(LedgerTxRefused);
      expect(await snapshot(f.ledger, [f.payer.address])).toEqual(before);
    });

    it('refuses an unknown op and args of the wrong shape, with no effect and no seq consumed', async () => {
      await f.ledger.faucet(f.payer.address);
      const before = await snapshot(f.ledger, [f.payer.address, f.payee.address]);
      const key = f.voucherKeys.publicKeyHex;
      const open = { payee: f.payee.address, deposit: '100', voucherKey: key, expiryLedger: 500 };
      const bad: Array<[string, Record<string, unknown>]> = [
        ['account.create', { owner: f.payer.address }],
        ['pool.borrow', { amount: '1' }],
        ['pool.deposit', { amount: 1 }],
        ['pool.withdraw', { shares: '1', memo: 'x' }],
        ['pool.open_line', { account: 'CNOTANADDRESS', limit: '1' }],
        ['pool.close_line', {}],
        ['transfer', { to: f.payee.address, amount: 5 }],
        ['transfer', { to: f.payee.address, amount: '1.5' }],
        ['transfer', { to: f.payee.address, amount: 'abc' }],
        ['transfer', { to: f.payee.address, amount: (1n << 127n).toString() }],
        ['transfer', { to: 'GBADADDRESS', amount: '1' }],
        ['transfer', { to: f.payee.address }],
        ['transfer', { to: f.payee.address, amount: '1', memo: 'x' }],
        ['channel.open', { ...open, voucherKey: key.slice(2) }],
        ['channel.open', { ...open, voucherKey: 'zz' + key.slice(2) }],
        ['channel.open', { ...open, expiryLedger: '500' }],
        ['channel.open', { ...open, expiryLedger: -1 }],
        ['channel.open', { ...open, expiryLedger: 2 ** 32 }],
        ['channel.top_up', { channelId: '-1', amount: '1' }],
        ['channel.open', { ...open, receiverAuthorizer: CONTRACTS.channel }],
        ['channel.open', { ...open, receiverAuthorizer: null }],
        ['channel.claim', { channelId: '1', cumulative: '1', signature: 'ab' }],
        ['channel.claim_many', { claims: {} }],
        ['channel.claim_many', { claims: [{ channelId: '1', maxClaimable: '1', signature: 'ab', total: '1' }] }],
        ['channel.claim_many', { claims: [{ channelId: '1', maxClaimable: '1', signature: 'ab'.repeat(64) }] }],
        ['channel.refund', { channelId: '1', amount: '1', nonce: 0 }],
        ['channel.refund', { channelId: '1', amount: '1', nonce: (1n << 64n).toString() }],
        ['channel.close', { channelId: (1n << 64n).toString() }],
        ['channel.close', { channelId: 1 }],
      ];
      for (const [op, args] of bad) {
        await expect(
          f.ledger.submit(await f.payer.sign(op, args, 1)),
          `${op} ${JSON.stringify(args)}`,
        ).rejects.toBeInstanceOf(LedgerTxRefused);
      }
      expect(await snapshot(f.ledger, [f.payer.address, f.payee.address])).toEqual(before);
    });

    it('a FAILED tx consumes its seq, is recorded with its code, and has no other effect', async () => {
      await f.ledger.faucet(f.payer.address, 100n);
      const before = await snapshot(f.ledger, [f.payer.address, f.payee.address]);
      const tx = await f.payer.sign('transfer', { to: f.payee.address, amount: '101' });
      const res = await f.expectCode(f.ledger.submit(tx), 27);
      expect(res.message).toMatch(/insufficient balance/);
      expect(await f.ledger.getTx(res.hash)).toEqual(res);
      const after = await snapshot(f.ledger, [f.payer.address, f.payee.address]);
      expect(after.accounts[0]!.seq).toBe(1);
      expect({ ...after, accounts: after.accounts.map((a) => ({ ...a, seq: 0 })) }).toEqual(before);
      await expect(f.ledger.submit(tx)).rejects.toBeInstanceOf(LedgerTxRefused);
      expect((await f.payer.send('transfer', { to: f.payee.address, amount: '100' })).status).toBe('SUCCESS');
    });

    it('a transfer of zero or a negative amount fails with 27', async () => {
      await f.ledger.faucet(f.payer.address);
      await f.expectCode(f.payer.send('transfer', { to: f.payee.address, amount: '0' }), 27);
      await f.expectCode(f.payer.send('transfer', { to: f.payee.address, amount: '-5' }), 27);
      expect(await f.payer.balance()).toBe(GRANT);
      expect(await f.payer.seq()).toBe(2);
    });
  });
}
