// Ledger contract cases: the channel contract: open, top_up, claim, close (claim_many and refund:
// channel-batches.ts).
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519 } from '@noble/curves/ed25519.js';
import { channelIdOf, concatBytes, fromHex, randomKeypair, SMALL_ORDER_ENCODINGS, toHex } from '@svc/core';
import { allEvents, ASSET, balanceOf, CONTRACTS, voucher } from '../helpers/actors.js';
import { forgeVoucher, MIXED_ORDER_KEY, MIXED_ORDER_KEY_HEX } from '../helpers/forged-voucher.js';
import type { ContractFixture } from './fixture.js';

const GRANT = 100_000_000_000n;

export function channelCases(f: ContractFixture): void {
  describe('channel.open', () => {
    it('moves the deposit into the contract and records the channel under the id its voucher key derives', async () => {
      await f.ledger.faucet(f.payer.address);
      const info = await f.ledger.info();
      const latest = await f.ledger.latestLedger();
      const id = channelIdOf(info.passphrase, info.contracts.channel, f.voucherKeys.publicKey);
      const res = await f.payer.send('channel.open', {
        payee: f.payee.address,
        deposit: '1000000',
        voucherKey: f.voucherKeys.publicKeyHex.toUpperCase(),
        expiryLedger: latest + 500,
      });
      expect(res).toMatchObject({ status: 'SUCCESS', result: { channelId: id.toString() } });
      expect(res.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: f.payer.address, to: CONTRACTS.channel, amount: '1000000' }],
        [
          'channel.opened',
          {
            channelId: id.toString(),
            payer: f.payer.address,
            payee: f.payee.address,
            asset: ASSET,
            deposit: '1000000',
            expiryLedger: latest + 500,
            voucherKey: f.voucherKeys.publicKeyHex,
            receiverAuthorizer: null,
          },
        ],
      ]);
      expect(await f.ledger.getChannel(id)).toEqual({
        id,
        payer: f.payer.address,
        payee: f.payee.address,
        asset: ASSET,
        deposit: 1_000_000n,
        claimed: 0n,
        voucherKey: f.voucherKeys.publicKeyHex,
        receiverAuthorizer: null,
        expiryLedger: latest + 500,
        refundNonce: 0n,
        open: true,
      });
      expect(await f.payer.balance()).toBe(GRANT - 1_000_000n);
      expect(await balanceOf(f.ledger, CONTRACTS.channel)).toBe(1_000_000n);
      const other = randomKeypair();
      expect(await f.openChannel(5n, 1000, other)).toBe(
        channelIdOf(info.passphrase, info.contracts.channel, other.publicKey),
      );
    });

    it('refuses a voucher key already used with 27, whoever opens, and moves nothing', async () => {
      const id = await f.openChannel(1000n, 1000, f.voucherKeys);
      await f.ledger.faucet(f.stranger.address);
      const latest = await f.ledger.latestLedger();
      const again = {
        payee: f.stranger.address,
        deposit: '10',
        voucherKey: f.voucherKeys.publicKeyHex,
        expiryLedger: latest + 10,
      };
      for (const who of [f.payer, f.stranger]) {
        const res = await f.expectCode(who.send('channel.open', again), 27);
        expect(res.message).toBe('voucher key already used: open the channel with a new voucher key');
      }
      // Closing the channel does not free its key: the id stays its.
      await f.payee.send('channel.close', { channelId: id.toString() });
      await f.expectCode(f.payer.send('channel.open', again), 27);
      expect(await f.stranger.balance()).toBe(GRANT);
      expect(await f.ledger.getChannel(id)).toMatchObject({ payee: f.payee.address, deposit: 1000n, open: false });
    });

    it('records the receiver authorizer the payer names, and emits it', async () => {
      const authorizer = randomKeypair().address;
      const id = await f.openChannel(1000n, 1000, randomKeypair(), authorizer);
      expect(await f.ledger.getChannel(id)).toMatchObject({ receiverAuthorizer: authorizer, refundNonce: 0n });
      const opened = (await allEvents(f.ledger)).filter((e) => e.type === 'channel.opened');
      expect(opened.at(-1)?.data).toMatchObject({ channelId: id.toString(), receiverAuthorizer: authorizer });
    });

    it('refuses every small-order or non-canonical voucher key with 27', async () => {
      await f.ledger.faucet(f.payer.address);
      const p = 2n ** 255n - 19n;
      const aboveP = toHex(Uint8Array.from({ length: 32 }, (_, i) => Number(((p + 2n) >> BigInt(8 * i)) & 0xffn)));
      const keys = [...SMALL_ORDER_ENCODINGS.map(toHex), aboveP];
      expect(keys[0]).toBe('01' + '00'.repeat(31)); // the identity point
      for (const key of keys) {
        const res = await f.expectCode(
          f.payer.send('channel.open', { payee: f.payee.address, deposit: '10', voucherKey: key, expiryLedger: 1000 }),
          27,
        );
        expect(res.message).toMatch(/voucherKey/);
      }
      expect(await f.payer.balance()).toBe(GRANT);
      const info = await f.ledger.info();
      for (const key of keys)
        expect(
          await f.ledger.getChannel(channelIdOf(info.passphrase, info.contracts.channel, fromHex(key))),
        ).toBeNull();
      expect(await f.payer.seq()).toBe(keys.length);
    });

    it('fails with 27 for an expiry not in the future, a deposit ≤ 0 or above the balance', async () => {
      await f.ledger.faucet(f.payer.address, 1000n);
      f.h.advance(10);
      const latest = await f.ledger.latestLedger();
      const args = {
        payee: f.payee.address,
        deposit: '10',
        voucherKey: f.voucherKeys.publicKeyHex,
        expiryLedger: latest + 10,
      };
      await f.expectCode(f.payer.send('channel.open', { ...args, expiryLedger: latest }), 27);
      await f.expectCode(f.payer.send('channel.open', { ...args, expiryLedger: latest - 5 }), 27);
      await f.expectCode(f.payer.send('channel.open', { ...args, deposit: '0' }), 27);
      await f.expectCode(f.payer.send('channel.open', { ...args, deposit: '-10' }), 27);
      const poor = await f.expectCode(f.payer.send('channel.open', { ...args, deposit: '1001' }), 27);
      expect(poor.message).toMatch(/insufficient balance/);
      expect(await f.payer.balance()).toBe(1000n);
      expect((await f.payer.send('channel.open', { ...args, deposit: '1000', expiryLedger: latest + 1 })).status).toBe(
        'SUCCESS',
      );
    });
  });

  describe('channel.top_up', () => {
    it('the f.payer adds to the deposit and may extend the expiry', async () => {
      const id = await f.openChannel(1000n, 100);
      const { expiryLedger } = (await f.ledger.getChannel(id))!;
      const res = await f.payer.send('channel.top_up', { channelId: id.toString(), amount: '500' });
      expect(res.result).toEqual({ deposit: '1500', expiryLedger });
      const ext = await f.payer.send('channel.top_up', {
        channelId: id.toString(),
        amount: '1',
        expiryLedger: expiryLedger + 50,
      });
      expect(ext.result).toEqual({ deposit: '1501', expiryLedger: expiryLedger + 50 });
      expect(ext.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: f.payer.address, to: CONTRACTS.channel, amount: '1' }],
        [
          'channel.topped_up',
          { channelId: id.toString(), amount: '1', deposit: '1501', expiryLedger: expiryLedger + 50 },
        ],
      ]);
      expect(await f.ledger.getChannel(id)).toMatchObject({ deposit: 1501n, expiryLedger: expiryLedger + 50 });
      expect(await balanceOf(f.ledger, CONTRACTS.channel)).toBe(1501n);
    });

    it('fails with 26 for anyone but the f.payer, 27 for a shorter expiry or amount ≤ 0, 20 unknown, 21 closed', async () => {
      const id = await f.openChannel(1000n, 100);
      const { expiryLedger } = (await f.ledger.getChannel(id))!;
      await f.ledger.faucet(f.payee.address);
      await f.expectCode(f.payee.send('channel.top_up', { channelId: id.toString(), amount: '5' }), 26);
      await f.expectCode(
        f.payer.send('channel.top_up', { channelId: id.toString(), amount: '5', expiryLedger: expiryLedger - 1 }),
        27,
      );
      await f.expectCode(f.payer.send('channel.top_up', { channelId: id.toString(), amount: '0' }), 27);
      await f.expectCode(f.payer.send('channel.top_up', { channelId: '99', amount: '5' }), 20);
      await f.payee.send('channel.close', { channelId: id.toString() });
      await f.expectCode(f.payer.send('channel.top_up', { channelId: id.toString(), amount: '5' }), 21);
      expect(await f.ledger.getChannel(id)).toMatchObject({ deposit: 1000n, expiryLedger, open: false });
    });
  });

  describe('channel.claim', () => {
    it('anyone may submit it; it pays the f.payee exactly cumulative − claimed', async () => {
      const id = await f.openChannel(100_000n);
      const payerBefore = await f.payer.balance();
      const first = await f.claim(f.stranger, id, 5000n);
      expect(first.result).toEqual({ amount: '5000' });
      expect(first.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: CONTRACTS.channel, to: f.payee.address, amount: '5000' }],
        ['channel.claimed', { channelId: id.toString(), payee: f.payee.address, amount: '5000', cumulative: '5000' }],
      ]);
      const second = await f.claim(f.payer, id, 12_000n);
      expect(second.result).toEqual({ amount: '7000' });
      expect(await f.payee.balance()).toBe(12_000n);
      expect(await f.stranger.balance()).toBe(0n);
      expect(await f.payer.balance()).toBe(payerBefore);
      expect(await f.ledger.getChannel(id)).toMatchObject({ claimed: 12_000n, deposit: 100_000n, open: true });
      expect(await balanceOf(f.ledger, CONTRACTS.channel)).toBe(88_000n);
    });

    it('fails with 22 for a wrong key or channel, 23 when not increasing, 24 above the deposit', async () => {
      const id = await f.openChannel(10_000n);
      const other = await f.openChannel(10_000n);
      await f.expectCode(f.claim(f.payee, id, 100n, voucher(randomKeypair(), id, 100n)), 22);
      await f.expectCode(f.claim(f.payee, id, 100n, voucher(f.keyOf(id), other, 100n)), 22);
      await f.expectCode(f.claim(f.payee, id, 100n, voucher(f.keyOf(other), id, 100n)), 22);
      await f.expectCode(f.claim(f.payee, id, 101n, voucher(f.keyOf(id), id, 100n)), 22);
      await f.expectCode(f.claim(f.payee, id, 0n), 23);
      await f.claim(f.payee, id, 500n);
      await f.expectCode(f.claim(f.payee, id, 500n), 23);
      await f.expectCode(f.claim(f.payee, id, 499n), 23);
      await f.expectCode(f.claim(f.payee, id, -1n), 23);
      await f.expectCode(f.claim(f.payee, id, 10_001n), 24);
      await f.expectCode(f.claim(f.payee, 77n, 1n), 20);
      expect(await f.ledger.getChannel(id)).toMatchObject({ claimed: 500n });
      expect(await f.payee.balance()).toBe(500n);
      expect((await f.claim(f.payee, id, 10_000n)).result).toEqual({ amount: '9500' });
    });

    it('refuses an identity-R, zero-S forged voucher with 22', async () => {
      const id = await f.openChannel(10_000n);
      const forged = toHex(concatBytes(fromHex('01' + '00'.repeat(31)), new Uint8Array(32)));
      await f.expectCode(f.claim(f.stranger, id, 10_000n, forged), 22);
      expect(await f.payee.balance()).toBe(0n);
    });

    it('refuses a small-order-R voucher that node:crypto accepts under a mixed-order key, with 22', async () => {
      const id = await f.openChannel(1_000_000n, 1000, MIXED_ORDER_KEY_HEX);
      const forged = forgeVoucher(id);
      // The hazard is real: lax verifiers take this signature.
      expect(ed25519.verify(forged.signature, forged.hash, MIXED_ORDER_KEY, { zip215: true })).toBe(true);
      const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), MIXED_ORDER_KEY]);
      expect(
        crypto.verify(
          null,
          forged.hash,
          crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' }),
          forged.signature,
        ),
      ).toBe(true);
      await f.expectCode(f.claim(f.stranger, id, forged.cumulative, toHex(forged.signature)), 22);
      expect(await f.ledger.getChannel(id)).toMatchObject({ claimed: 0n });
    });

    it('works after expiry until the channel is closed, then fails with 21', async () => {
      const id = await f.openChannel(10_000n, 5);
      f.h.advance(200);
      expect((await f.claim(f.stranger, id, 300n)).result).toEqual({ amount: '300' });
      await f.payee.send('channel.close', { channelId: id.toString() });
      await f.expectCode(f.claim(f.stranger, id, 400n), 21);
      expect(await f.payee.balance()).toBe(300n);
    });
  });

  describe('channel.close', () => {
    it('the f.payee may close at any time; deposit − claimed goes back to the payer', async () => {
      const id = await f.openChannel(10_000n);
      await f.claim(f.payee, id, 2500n);
      const payerBefore = await f.payer.balance();
      const res = await f.payee.send('channel.close', { channelId: id.toString() });
      expect(res.result).toEqual({ refunded: '7500' });
      expect(res.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: CONTRACTS.channel, to: f.payer.address, amount: '7500' }],
        ['channel.closed', { channelId: id.toString(), refunded: '7500', claimed: '2500' }],
      ]);
      expect(await f.payer.balance()).toBe(payerBefore + 7500n);
      expect(await f.payee.balance()).toBe(2500n);
      expect(await f.ledger.getChannel(id)).toMatchObject({ open: false, claimed: 2500n, deposit: 10_000n });
      expect(await balanceOf(f.ledger, CONTRACTS.channel)).toBe(0n);
      await f.expectCode(f.payee.send('channel.close', { channelId: id.toString() }), 21);
    });

    it('the f.payer may close only from expiry + 120 ledgers (25 before)', async () => {
      const id = await f.openChannel(10_000n, 10);
      const { expiryLedger } = (await f.ledger.getChannel(id))!;
      const latest = await f.ledger.latestLedger();
      f.h.advance(expiryLedger + 119 - latest);
      const early = await f.expectCode(f.payer.send('channel.close', { channelId: id.toString() }), 25);
      expect(early.ledger).toBe(expiryLedger + 119);
      f.h.advance(1);
      const payerBefore = await f.payer.balance();
      const res = await f.payer.send('channel.close', { channelId: id.toString() });
      expect(res).toMatchObject({ status: 'SUCCESS', ledger: expiryLedger + 120, result: { refunded: '10000' } });
      expect(await f.payer.balance()).toBe(payerBefore + 10_000n);
    });

    it('anyone else gets 26, an unknown channel 20', async () => {
      const id = await f.openChannel(10_000n);
      f.h.advance(5000);
      await f.expectCode(f.stranger.send('channel.close', { channelId: id.toString() }), 26);
      await f.expectCode(f.stranger.send('channel.close', { channelId: '12345' }), 20);
      expect(await f.ledger.getChannel(id)).toMatchObject({ open: true });
    });
  });
}
