// Ledger contract cases: conservation of money and the event log.
import { describe, expect, it } from 'vitest';
import type { TxResult } from '../../src/index.js';
import { allEvents, balanceOf, CONTRACTS, voucher } from '../helpers/actors.js';
import type { ContractFixture } from './fixture.js';

export function moneyAndEventCases(f: ContractFixture): void {
  describe('money and events', () => {
    it('conserves money: balances plus contract-held deposits change only through the faucet', async () => {
      const parties = [f.payer, f.payee, f.stranger];
      let minted = 0n;
      const check = async () => {
        let total = await balanceOf(f.ledger, CONTRACTS.channel);
        for (const p of parties) total += await p.balance();
        expect(total).toBe(minted);
        let held = 0n;
        for (const id of f.channelKeys.keys()) {
          const ch = await f.ledger.getChannel(id);
          if (ch?.open) held += ch.deposit - ch.claimed;
        }
        expect(await balanceOf(f.ledger, CONTRACTS.channel)).toBe(held);
      };
      for (const p of [f.payer, f.stranger])
        minted += BigInt(String((await f.ledger.faucet(p.address, 1_000_000n)).result?.['amount']));
      await check();
      const a = await f.openChannel(400_000n);
      await check();
      const b = await f.openChannel(300_000n, 3);
      const steps: Array<() => Promise<unknown>> = [
        () => f.claim(f.stranger, a, 1000n),
        () => f.claim(f.stranger, a, 999n),
        () => f.payer.send('channel.top_up', { channelId: a.toString(), amount: '50000' }),
        () => f.claim(f.payee, a, 450_000n),
        () => f.claim(f.payee, a, 450_001n),
        () => f.payee.send('channel.refund', { channelId: b.toString(), amount: '10000', nonce: '0' }),
        () => f.stranger.send('transfer', { to: f.payee.address, amount: '777' }),
        () => f.payee.send('transfer', { to: f.payer.address, amount: '99999999' }),
        () => f.claim(f.payee, b, 250_000n),
        () =>
          f.ledger.claimMany(
            [{ channelId: b, maxClaimable: 260_000n, signature: voucher(f.keyOf(b), b, 260_000n), total: 260_000n }],
            f.stranger.keys,
          ),
        () => f.payer.send('channel.close', { channelId: b.toString() }),
        () => Promise.resolve(f.h.advance(200)),
        () => f.payer.send('channel.close', { channelId: b.toString() }),
        () => f.payee.send('channel.close', { channelId: a.toString() }),
      ];
      for (const step of steps) {
        await step();
        await check();
      }
      expect(await f.ledger.getChannel(a)).toMatchObject({ open: false, claimed: 450_000n });
      expect(await f.ledger.getChannel(b)).toMatchObject({ open: false, claimed: 260_000n, deposit: 290_000n });
      expect(await f.payee.balance()).toBe(450_000n + 260_000n + 777n);
    });

    it('events are strictly increasing, carry f.ledger, tx and ts, match their txs and replay to the balances', async () => {
      const txs: TxResult[] = [
        await f.ledger.faucet(f.payer.address),
        await f.ledger.faucet(f.stranger.address, 1234n),
      ];
      const id = await f.openChannel(50_000n);
      f.h.advance(3);
      txs.push(await f.claim(f.stranger, id, 20_000n));
      txs.push(await f.expectCode(f.claim(f.stranger, id, 20_000n), 23));
      txs.push(await f.payer.send('channel.top_up', { channelId: id.toString(), amount: '10' }));
      txs.push(await f.stranger.send('transfer', { to: f.payee.address, amount: '34' }));
      txs.push(await f.payee.send('channel.close', { channelId: id.toString() }));

      const paged = await allEvents(f.ledger, 3);
      expect(paged).toEqual(await allEvents(f.ledger));
      for (let i = 1; i < paged.length; i++) expect(Number(paged[i]!.id)).toBeGreaterThan(Number(paged[i - 1]!.id));
      for (const e of paged) {
        expect(e.tx).toMatch(/^[0-9a-f]{64}$/);
        expect(Number.isInteger(e.ledger) && e.ledger >= 1).toBe(true);
        expect(Number.isNaN(Date.parse(e.ts))).toBe(false);
      }
      for (const tx of txs) expect(paged.filter((e) => e.tx === tx.hash)).toEqual(tx.events);
      expect(paged.map((e) => e.type)).toEqual([
        'asset.minted',
        'asset.minted',
        'asset.transferred',
        'channel.opened',
        'asset.transferred',
        'channel.claimed',
        'asset.transferred',
        'channel.topped_up',
        'asset.transferred',
        'asset.transferred',
        'channel.closed',
      ]);

      const replayed = new Map<string, bigint>();
      const add = (who: string, amount: bigint) => replayed.set(who, (replayed.get(who) ?? 0n) + amount);
      for (const e of paged) {
        const amount = BigInt(typeof e.data['amount'] === 'string' ? e.data['amount'] : '0');
        if (e.type === 'asset.minted') add(String(e.data['to']), amount);
        if (e.type === 'asset.transferred') {
          add(String(e.data['from']), -amount);
          add(String(e.data['to']), amount);
        }
      }
      for (const who of [f.payer.address, f.payee.address, f.stranger.address, CONTRACTS.channel]) {
        expect(replayed.get(who) ?? 0n).toBe(await balanceOf(f.ledger, who));
      }
    });

    it('events(cursor, limit) pages from a cursor and honours the limit', async () => {
      await f.ledger.faucet(f.payer.address);
      await f.ledger.faucet(f.payee.address);
      await f.ledger.faucet(f.stranger.address);
      const all = (await f.ledger.events(null, 100)).events;
      expect(all).toHaveLength(3);
      expect(await f.ledger.events(null, 2)).toEqual({ events: all.slice(0, 2), cursor: all[1]!.id });
      expect(await f.ledger.events(all[1]!.id, 100)).toEqual({ events: all.slice(2), cursor: all[2]!.id });
      // An empty page keeps the cursor where it was.
      expect(await f.ledger.events(all[2]!.id, 100)).toEqual({ events: [], cursor: all[2]!.id });
      expect(await f.ledger.events(null, 0)).toEqual({ events: [], cursor: null });
    });

    it('claim(args, signer) claims with the payer’s voucher, taking the signer’s sequence number', async () => {
      const id = await f.openChannel();
      const cumulative = 70n;
      const signature = voucher(f.keyOf(id), id, cumulative);
      const before = (await f.ledger.getAccount(f.stranger.address)).seq;
      const res = await f.ledger.claim({ channelId: id, cumulative, signature }, f.stranger.keys);
      expect(res).toMatchObject({
        status: 'SUCCESS',
        op: 'channel.claim',
        source: f.stranger.address,
        result: { amount: '70' },
      });
      expect((await f.ledger.getAccount(f.stranger.address)).seq).toBe(before + 1);
      const again = await f.ledger.claim({ channelId: id, cumulative, signature }, f.stranger.keys);
      expect(again).toMatchObject({ status: 'FAILED', code: 23 });
      const both = await Promise.all(
        [1n, 2n].map((extra) =>
          f.ledger.claim(
            {
              channelId: id,
              cumulative: cumulative + extra,
              signature: voucher(f.keyOf(id), id, cumulative + extra),
            },
            f.stranger.keys,
          ),
        ),
      );
      expect(both.map((r) => r.status)).toEqual(['SUCCESS', 'SUCCESS']);
    });

    it('unknown channels and transactions are null', async () => {
      expect(await f.ledger.getChannel(1n)).toBeNull();
      expect(await f.ledger.getChannel(0n)).toBeNull();
      expect(await f.ledger.getChannel(-1n)).toBeNull();
      expect(await f.ledger.getChannel((1n << 64n) - 1n)).toBeNull();
      expect(await f.ledger.getChannel(1n << 64n)).toBeNull();
      expect(await f.ledger.getTx('ab'.repeat(32))).toBeNull();
      expect(await f.ledger.getTx('not a hash')).toBeNull();
    });
  });
}
