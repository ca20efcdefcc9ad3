// Ledger contract cases: the channel contract v2's claim_many (many channels claimed in one
// transaction, all or none, below a voucher's amount only for the channel's receiver authorizer)
// and refund (the unclaimed deposit back to the payer under the channel's refund nonce).
import { describe, expect, it } from 'vitest';
import { LedgerClaimManyResultSchema, randomKeypair } from '@svc/core';
import { MAX_CLAIMS_PER_TX } from '../../src/index.js';
import type { ClaimRow } from '../../src/index.js';
import { ASSET, balanceOf, CONTRACTS, snapshot, voucher } from '../helpers/actors.js';
import type { Actor } from '../helpers/actors.js';
import type { ContractFixture } from './fixture.js';

export function channelBatchCases(f: ContractFixture): void {
  /** A row claiming `total` under the channel's voucher for `max` (signed with its key). */
  const row = (id: bigint, max: bigint, total = max): ClaimRow => ({
    channelId: id,
    maxClaimable: max,
    signature: voucher(f.keyOf(id), id, max),
    total,
  });
  const wire = (rows: ClaimRow[]) =>
    rows.map((r) => ({
      channelId: r.channelId.toString(),
      maxClaimable: r.maxClaimable.toString(),
      signature: r.signature,
      total: r.total.toString(),
    }));
  const claimMany = (by: Actor, rows: ClaimRow[]) => by.send('channel.claim_many', { claims: wire(rows) });
  const refund = (by: Actor, id: bigint, amount: bigint, nonce: bigint) =>
    by.send('channel.refund', { channelId: id.toString(), amount: amount.toString(), nonce: nonce.toString() });
  /** A channel payer → payee whose receiver authorizer is the stranger (standing in for the facilitator). */
  const authorized = (deposit = 100_000n) => f.openChannel(deposit, 1000, randomKeypair(), f.stranger.address);

  describe('channel.claim_many', () => {
    it('pays each row total − claimed in order, one claimed event per row; anyone may claim whole vouchers', async () => {
      const a = await f.openChannel(100_000n);
      const b = await f.openChannel(50_000n);
      await f.claim(f.payee, b, 1_000n);
      const before = await f.payee.balance();
      const res = await claimMany(f.payer, [row(a, 30_000n), row(b, 4_000n)]);
      expect(res).toMatchObject({
        status: 'SUCCESS',
        op: 'channel.claim_many',
        result: { amounts: ['30000', '3000'] },
      });
      expect(LedgerClaimManyResultSchema.parse(res.result).amounts).toEqual([30_000n, 3_000n]);
      expect(res.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: CONTRACTS.channel, to: f.payee.address, amount: '30000' }],
        ['channel.claimed', { channelId: a.toString(), payee: f.payee.address, amount: '30000', cumulative: '30000' }],
        ['asset.transferred', { asset: ASSET, from: CONTRACTS.channel, to: f.payee.address, amount: '3000' }],
        ['channel.claimed', { channelId: b.toString(), payee: f.payee.address, amount: '3000', cumulative: '4000' }],
      ]);
      expect(await f.payee.balance()).toBe(before + 33_000n);
      expect(await f.ledger.getChannel(a)).toMatchObject({ claimed: 30_000n, deposit: 100_000n });
      expect(await f.ledger.getChannel(b)).toMatchObject({ claimed: 4_000n });
    });

    it('claims below a voucher’s amount only for the channel’s receiver authorizer (26 for anyone else)', async () => {
      const id = await authorized();
      const plain = await f.openChannel(100_000n);
      for (const who of [f.payer, f.payee]) await f.expectCode(claimMany(who, [row(id, 9_000n, 5_000n)]), 26);
      // A channel that names no authorizer: nobody may claim below its vouchers.
      await f.expectCode(claimMany(f.stranger, [row(plain, 9_000n, 5_000n)]), 26);
      const res = await claimMany(f.stranger, [row(id, 9_000n, 5_000n), row(plain, 2_000n)]);
      expect(res).toMatchObject({ status: 'SUCCESS', result: { amounts: ['5000', '2000'] } });
      // The same voucher again, for more of it: the ceiling still holds.
      expect(await claimMany(f.stranger, [row(id, 9_000n, 9_000n)])).toMatchObject({ result: { amounts: ['4000'] } });
      await f.expectCode(claimMany(f.stranger, [row(id, 9_000n, 9_001n)]), 24);
      expect(await f.ledger.getChannel(id)).toMatchObject({ claimed: 9_000n });
      expect(await f.payee.balance()).toBe(11_000n);
      expect(await f.stranger.balance()).toBe(0n);
    });

    it('fails with each row’s code in the contract’s order: 20, 21, 22, 23, 24 (voucher, then deposit), 26', async () => {
      const id = await authorized(10_000n);
      const closed = await f.openChannel(10_000n);
      await f.payee.send('channel.close', { channelId: closed.toString() });
      await f.claim(f.payee, id, 500n);
      const by = f.payer;
      await f.expectCode(claimMany(by, [{ ...row(id, 600n), channelId: 424_242n }]), 20);
      await f.expectCode(claimMany(by, [row(closed, 600n)]), 21);
      await f.expectCode(claimMany(by, [{ ...row(id, 600n), maxClaimable: 601n }]), 22);
      await f.expectCode(claimMany(by, [{ ...row(id, 600n), signature: voucher(randomKeypair(), id, 600n) }]), 22);
      // 23 before 26: a total not above the claimed, by someone who is not the authorizer either.
      await f.expectCode(claimMany(by, [row(id, 600n, 500n)]), 23);
      await f.expectCode(claimMany(by, [row(id, 600n, 601n)]), 24);
      await f.expectCode(claimMany(f.stranger, [row(id, 10_001n)]), 24);
      await f.expectCode(claimMany(by, [row(id, 600n, 550n)]), 26);
      const failed = await f.expectCode(claimMany(by, [row(id, 600n), row(closed, 600n)]), 21);
      expect(failed.message).toMatch(/^claims\[1\]: /);
      expect(await f.ledger.getChannel(id)).toMatchObject({ claimed: 500n });
    });

    it('is all or none: a failing row undoes the rows before it, and the seq is consumed', async () => {
      const a = await f.openChannel(100_000n);
      const b = await f.openChannel(100_000n);
      const before = await snapshot(f.ledger, [f.payee.address, CONTRACTS.channel]);
      const failed = await f.expectCode(claimMany(f.stranger, [row(a, 7_000n), row(b, 200_000n)]), 24);
      expect(failed.message).toMatch(/^claims\[1\]: .*deposit/);
      expect(await snapshot(f.ledger, [f.payee.address, CONTRACTS.channel])).toEqual(before);
      expect(await f.ledger.getChannel(a)).toMatchObject({ claimed: 0n });
      expect(await f.stranger.seq()).toBe(1);
    });

    it('takes rows of one channel in order, each against the claimed the one before left', async () => {
      const id = await f.openChannel(100_000n);
      const res = await claimMany(f.payee, [row(id, 1_000n), row(id, 3_000n)]);
      expect(res).toMatchObject({ status: 'SUCCESS', result: { amounts: ['1000', '2000'] } });
      await f.expectCode(claimMany(f.payee, [row(id, 4_000n), row(id, 4_000n)]), 23);
      expect(await f.ledger.getChannel(id)).toMatchObject({ claimed: 3_000n });
    });

    it(`refuses an empty batch and one above MAX_CLAIMS_PER_TX (${MAX_CLAIMS_PER_TX}) with 27; takes exactly that many`, async () => {
      await f.expectCode(claimMany(f.payee, []), 27);
      const ids: bigint[] = [];
      for (let i = 0; i < MAX_CLAIMS_PER_TX; i++) ids.push(await f.openChannel(1_000n));
      const rows = ids.map((id) => row(id, 10n));
      const over = await f.expectCode(claimMany(f.payee, [...rows, row(ids[0]!, 20n)]), 27);
      expect(over.message).toContain(`at most ${MAX_CLAIMS_PER_TX}`);
      const res = await claimMany(f.payee, rows);
      expect(res.status).toBe('SUCCESS');
      expect(res.result?.['amounts']).toEqual(rows.map(() => '10'));
      expect(await f.payee.balance()).toBe(10n * BigInt(MAX_CLAIMS_PER_TX));
    });

    it('claimMany(rows, signer) is a transaction of the signer, the caller whose authority counts', async () => {
      const id = await authorized();
      const before = (await f.ledger.getAccount(f.stranger.address)).seq;
      const res = await f.ledger.claimMany([row(id, 8_000n, 6_000n)], f.stranger.keys);
      expect(res).toMatchObject({
        status: 'SUCCESS',
        op: 'channel.claim_many',
        source: f.stranger.address,
        result: { amounts: ['6000'] },
      });
      expect((await f.ledger.getAccount(f.stranger.address)).seq).toBe(before + 1);
      expect(await f.ledger.claimMany([row(id, 8_000n, 7_000n)], f.payee.keys)).toMatchObject({
        status: 'FAILED',
        code: 26,
      });
      // Two at once from one signer: each takes its own sequence number.
      const both = await Promise.all(
        [7_000n, 8_000n].map((total) => f.ledger.claimMany([row(id, total)], f.payer.keys)),
      );
      expect(both.map((r) => r.status)).toEqual(['SUCCESS', 'SUCCESS']);
      expect(await f.ledger.getChannel(id)).toMatchObject({ claimed: 8_000n });
    });
  });

  describe('channel.refund', () => {
    it('the receiver authorizer returns up to the unclaimed deposit to the payer; the nonce moves by one', async () => {
      const id = await authorized(10_000n);
      await f.claim(f.payee, id, 2_500n);
      const payerBefore = await f.payer.balance();
      const res = await refund(f.stranger, id, 3_000n, 0n);
      expect(res).toMatchObject({ status: 'SUCCESS', op: 'channel.refund', result: { refunded: '3000' } });
      expect(res.events.map((e) => [e.type, e.data])).toEqual([
        ['asset.transferred', { asset: ASSET, from: CONTRACTS.channel, to: f.payer.address, amount: '3000' }],
        ['channel.refunded', { channelId: id.toString(), amount: '3000', deposit: '7000', refundNonce: '1' }],
      ]);
      expect(await f.ledger.getChannel(id)).toMatchObject({
        deposit: 7_000n,
        claimed: 2_500n,
        refundNonce: 1n,
        open: true,
      });
      expect(await f.payer.balance()).toBe(payerBefore + 3_000n);
      // More than is left: only what is left (deposit − claimed) moves.
      const rest = await refund(f.stranger, id, 1_000_000n, 1n);
      expect(rest.result).toEqual({ refunded: '4500' });
      expect(await f.ledger.getChannel(id)).toMatchObject({ deposit: 2_500n, refundNonce: 2n });
      expect(await balanceOf(f.ledger, CONTRACTS.channel)).toBe(0n);
      // Nothing left: the refund moves 0, and still spends its nonce.
      const none = await refund(f.stranger, id, 5n, 2n);
      expect(none.result).toEqual({ refunded: '0' });
      expect(none.events.map((e) => e.type)).toEqual(['channel.refunded']);
      expect(await f.ledger.getChannel(id)).toMatchObject({ deposit: 2_500n, refundNonce: 3n });
      await f.expectCode(f.claim(f.payee, id, 2_501n), 24);
    });

    it('the payee may refund too; the payer and anyone else get 26', async () => {
      const plain = await f.openChannel(10_000n);
      expect((await refund(f.payee, plain, 1_000n, 0n)).result).toEqual({ refunded: '1000' });
      await f.expectCode(refund(f.payer, plain, 1_000n, 1n), 26);
      await f.expectCode(refund(f.stranger, plain, 1_000n, 1n), 26);
      expect(await f.ledger.getChannel(plain)).toMatchObject({ deposit: 9_000n, refundNonce: 1n });
    });

    it('fails with 20 unknown, 21 closed, 26 before 27, and 27 for an amount ≤ 0 or any nonce but the current one', async () => {
      const id = await authorized(10_000n);
      await f.expectCode(refund(f.stranger, 424_242n, 1n, 0n), 20);
      await f.expectCode(refund(f.payer, id, 0n, 5n), 26);
      await f.expectCode(refund(f.stranger, id, 0n, 0n), 27);
      await f.expectCode(refund(f.stranger, id, -1n, 0n), 27);
      const wrong = await f.expectCode(refund(f.stranger, id, 1n, 1n), 27);
      expect(wrong.message).toMatch(/nonce/);
      expect((await refund(f.stranger, id, 1n, 0n)).status).toBe('SUCCESS');
      // The same refund again (a replay) finds the nonce spent.
      await f.expectCode(refund(f.stranger, id, 1n, 0n), 27);
      await f.payee.send('channel.close', { channelId: id.toString() });
      await f.expectCode(refund(f.stranger, id, 1n, 1n), 21);
      expect(await f.ledger.getChannel(id)).toMatchObject({ deposit: 9_999n, refundNonce: 1n, open: false });
    });

    it('close after a refund returns what is left of the reduced deposit', async () => {
      const id = await authorized(10_000n);
      await f.claim(f.payee, id, 1_000n);
      await refund(f.stranger, id, 4_000n, 0n);
      const res = await f.payee.send('channel.close', { channelId: id.toString() });
      expect(res.result).toEqual({ refunded: '5000' });
      expect(await balanceOf(f.ledger, CONTRACTS.channel)).toBe(0n);
    });

    it('refund(args, signer) is a transaction of the signer', async () => {
      const id = await authorized(10_000n);
      const res = await f.ledger.refund({ channelId: id, amount: 600n, nonce: 0n }, f.stranger.keys);
      expect(res).toMatchObject({ status: 'SUCCESS', source: f.stranger.address, result: { refunded: '600' } });
      expect(res.events.find((e) => e.type === 'channel.refunded')?.data).toEqual({
        channelId: id.toString(),
        amount: '600',
        deposit: '9400',
        refundNonce: '1',
      });
      expect(await f.ledger.refund({ channelId: id, amount: 600n, nonce: 0n }, f.stranger.keys)).toMatchObject({
        status: 'FAILED',
        code: 27,
      });
    });
  });
}
