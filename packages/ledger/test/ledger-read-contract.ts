// The read side of the Ledger contract (docs/architecture.md#one-contract-suite-per-port), which every adapter passes, a network's as
// well as the local ledger's: network facts, the channel contract's own records, accounts, a
// transaction by hash, and the ordered event log with its cursor. The full runLedgerContract also
// submits local-ledger transactions, uses the faucet and moves a fake clock, none of which a real
// network adapter can do; so the write side of StellarLedger (claim) is pinned by its own tests
// against recorded RPC exchanges (stellar-claim.test.ts).
//
//   runLedgerReadContract({ name: 'LocalLedger', create: async () => ({ ledger, seed, close }) });
//
// The seeded state: channel `seed.channel` opened by its payer (deposit `openDeposit`) in tx
// `openTx`, then topped up by `topUp`; nothing else happened to it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isContractAddress, networkOfPassphrase } from '@svc/core';
import type { Ledger, LedgerChannel, LedgerEvent } from '../src/index.js';

export interface ReadSeed {
  channel: LedgerChannel;
  openDeposit: bigint;
  topUp: bigint;
  openTx: string;
  missingChannelId: bigint;
  payerBalance: bigint;
  /** A well-formed hash of no transaction. */
  unknownTx: string;
}

export interface ReadHarness {
  ledger: Ledger;
  seed: ReadSeed;
  close(): Promise<void>;
}

const channelEvents = (events: LedgerEvent[], id: bigint) =>
  events.filter((e) => e.type.startsWith('channel.') && e.data['channelId'] === id.toString());

export function runLedgerReadContract({ name, create }: { name: string; create: () => Promise<ReadHarness> }): void {
  describe(`Ledger read contract: ${name}`, () => {
    let h: ReadHarness;
    beforeEach(async () => {
      h = await create();
    });
    afterEach(() => h.close());

    it('info names a test network, its contracts and the 7-decimal asset; latestLedger agrees', async () => {
      const info = await h.ledger.info();
      expect(networkOfPassphrase(info.passphrase)).toBe(info.network);
      expect(isContractAddress(info.contracts.channel) && isContractAddress(info.contracts.asset)).toBe(true);
      expect(info.contracts.asset).toBe(h.seed.channel.asset);
      expect(info).toMatchObject({ ledgerSeconds: 5, asset: { decimals: 7 } });
      expect(Number.isSafeInteger(info.latestLedger) && info.latestLedger >= 1).toBe(true);
      expect(await h.ledger.latestLedger()).toBe(info.latestLedger);
    });

    it('getChannel returns the contract’s own record, amounts as bigint and the key as lowercase hex', async () => {
      const channel = await h.ledger.getChannel(h.seed.channel.id);
      expect(channel).toEqual(h.seed.channel);
      expect(channel?.voucherKey).toMatch(/^[0-9a-f]{64}$/);
    });

    it('an unknown or impossible channel id is null', async () => {
      expect(await h.ledger.getChannel(h.seed.missingChannelId)).toBeNull();
      for (const id of [0n, -1n, 1n << 64n]) expect(await h.ledger.getChannel(id)).toBeNull();
    });

    it('getAccount reports the payer’s balance of the asset', async () => {
      const account = await h.ledger.getAccount(h.seed.channel.payer);
      expect(account.address).toBe(h.seed.channel.payer);
      expect(Number.isSafeInteger(account.seq) && account.seq >= 1).toBe(true);
      expect(account.balances).toEqual([{ asset: h.seed.channel.asset, amount: h.seed.payerBalance }]);
      await expect(h.ledger.getAccount('GNOTANADDRESS')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });

    it('getTx finds the opening transaction with its result and event; unknown or malformed hashes are null', async () => {
      const tx = await h.ledger.getTx(h.seed.openTx.toUpperCase());
      expect(tx).toMatchObject({
        hash: h.seed.openTx,
        status: 'SUCCESS',
        op: 'channel.open',
        source: h.seed.channel.payer,
        result: { channelId: h.seed.channel.id.toString() },
      });
      expect(channelEvents(tx!.events, h.seed.channel.id).map((e) => e.type)).toEqual(['channel.opened']);
      expect(Number.isNaN(Date.parse(tx!.ts))).toBe(false);
      expect(await h.ledger.getTx(h.seed.unknownTx)).toBeNull();
      expect(await h.ledger.getTx('not a hash')).toBeNull();
    });

    it('events from the beginning carry the opening and the top-up in the port’s shape', async () => {
      const { events, cursor } = await h.ledger.events(null, 100);
      const ours = channelEvents(events, h.seed.channel.id);
      const { id, payer, payee, asset, voucherKey, expiryLedger, receiverAuthorizer } = h.seed.channel;
      expect(ours.map((e) => [e.type, e.data])).toEqual([
        [
          'channel.opened',
          {
            channelId: id.toString(),
            payer,
            payee,
            asset,
            deposit: h.seed.openDeposit.toString(),
            expiryLedger,
            voucherKey,
            receiverAuthorizer,
          },
        ],
        [
          'channel.topped_up',
          {
            channelId: id.toString(),
            amount: h.seed.topUp.toString(),
            deposit: (h.seed.openDeposit + h.seed.topUp).toString(),
            expiryLedger,
          },
        ],
      ]);
      expect(ours[0]!.tx).toBe(h.seed.openTx);
      for (const e of events) {
        expect(typeof e.id).toBe('string');
        expect(e.tx).toMatch(/^[0-9a-f]{64}$/);
        expect(Number.isSafeInteger(e.ledger)).toBe(true);
        expect(new Date(e.ts).toISOString()).toBe(e.ts);
      }
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
      expect(typeof cursor).toBe('string');
    });

    it('events page from a cursor, honour the limit, and a zero limit asks nothing', async () => {
      const all = (await h.ledger.events(null, 100)).events;
      const first = await h.ledger.events(null, 1);
      expect(first.events).toEqual(all.slice(0, 1));
      expect(first.cursor).not.toBeNull();
      const rest = await h.ledger.events(first.cursor, 100);
      expect(rest.events).toEqual(all.slice(1));
      const after = await h.ledger.events(rest.cursor, 100);
      expect(after.events).toEqual([]);
      expect(typeof after.cursor).toBe('string');
      expect(await h.ledger.events(null, 0)).toEqual({ events: [], cursor: null });
    });
  });
}
