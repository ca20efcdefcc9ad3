// Ledger contract cases: the smart account (docs/protocol.md#channels-and-records and #the-local-ledger): create, who signs, the policy
// codes of the agent (1, 2, 3, 5, 6, 7), the owner unlimited, the day boundary, set_policy and
// freeze with their events, exact bigints back through the port.
import { describe, expect, it } from 'vitest';
import { isContractAddress, NETWORKS, randomKeypair, signLedgerTx, txHash } from '@svc/core';
import { LedgerTxRefused, smartAccountAddress } from '../../src/index.js';
import { Actor, allEvents, ASSET, CONTRACTS, PASS, snapshot } from '../helpers/actors.js';
import { T0 } from '../helpers/fake-clock.js';
import { SmartActor } from '../helpers/smart-account.js';
import type { PolicyArgs } from '../helpers/smart-account.js';
import type { ContractFixture } from './fixture.js';

const FUND = 1_000_000n;
const PER_TX = 1_000n;
const DAILY = 2_500n;
const DAY = new Date(T0).toISOString().slice(0, 10);
const NEXT_DAY = new Date(T0 + 86_400_000).toISOString().slice(0, 10);
/** T0 is 10:00 UTC and ledgers close every 5 s: this many ledgers reach the next midnight. */
const LEDGERS_TO_MIDNIGHT = (14 * 3600) / 5;

/** A funded account of f.payer (the owner) whose agent may pay f.payee: 1,000 per tx, 2,500 a day. */
async function funded(f: ContractFixture, overrides: Partial<PolicyArgs> = {}): Promise<SmartActor> {
  const latest = await f.ledger.latestLedger();
  const policy = (agent: { address: string }): PolicyArgs => ({
    agentKey: agent.address,
    perTxCap: PER_TX.toString(),
    dailyCap: DAILY.toString(),
    payees: [f.payee.address],
    expiresLedger: latest + 100_000,
    ...overrides,
  });
  const sa = await SmartActor.create(f.ledger, f.payer, policy);
  await f.ledger.faucet(sa.address, FUND);
  return sa;
}

const pay = (sa: SmartActor, to: string, amount: bigint | number) =>
  sa.byAgent('transfer', { to, amount: amount.toString() });

export function smartAccountCases(f: ContractFixture): void {
  describe('smart accounts: create and sign', () => {
    it('account.create makes a C… account derived from owner and tx, with its own seq, balances and state', async () => {
      const latest = await f.ledger.latestLedger();
      const agent = randomKeypair();
      const policy = {
        agentKey: agent.address,
        perTxCap: '1000',
        dailyCap: '2500',
        payees: [f.payee.address, f.payee.address],
        expiresLedger: latest + 500,
      };
      const res = await f.payer.send('account.create', { owner: f.payer.address, policy });
      expect(res.status).toBe('SUCCESS');
      const address = String(res.result?.['address']);
      expect(isContractAddress(address)).toBe(true);
      expect(address).toBe(smartAccountAddress(f.payer.address, res.hash));
      const wire = { ...policy, payees: [f.payee.address] }; // duplicates are dropped
      expect(res.events.map((e) => [e.type, e.data])).toEqual([
        ['account.created', { account: address, owner: f.payer.address, policy: wire }],
      ]);
      expect(await f.ledger.getTx(res.hash)).toEqual(res);
      expect(await f.ledger.getAccount(address)).toEqual({
        address,
        seq: 0,
        balances: [],
        account: {
          owner: f.payer.address,
          policy: { ...wire, perTxCap: 1000n, dailyCap: 2500n },
          frozen: false,
          spentToday: 0n,
          day: DAY,
        },
      });
      await f.ledger.faucet(address, 5_000n);
      expect((await f.ledger.getAccount(address)).balances).toEqual([{ asset: ASSET, amount: 5_000n }]);
      // Anyone may create an account for an owner; each create names a new address.
      const other = await f.stranger.send('account.create', { owner: f.payer.address, policy: null });
      const otherAddress = String(other.result?.['address']);
      expect(otherAddress).not.toBe(address);
      expect((await f.ledger.getAccount(otherAddress)).account).toEqual({
        owner: f.payer.address,
        policy: null,
        frozen: false,
        spentToday: 0n,
        day: DAY,
      });
      expect((await f.ledger.getAccount(f.payer.address)).account).toBeUndefined();
    });

    it('the owner or the agent key signs as the account; any other signature is refused with no effect', async () => {
      const sa = await funded(f);
      const args = { to: f.payee.address, amount: '10' };
      const before = await snapshot(f.ledger, [sa.address, f.payee.address]);
      const byStranger = await sa.sign(f.stranger.keys, 'transfer', args);
      const otherNetwork = signLedgerTx(sa.agent, NETWORKS['stellar:testnet'].passphrase, {
        source: sa.address,
        seq: 1,
        op: 'transfer',
        args,
      });
      const ownerOnOtherNetwork = signLedgerTx(f.payer.keys, NETWORKS['stellar:testnet'].passphrase, {
        source: sa.address,
        seq: 1,
        op: 'transfer',
        args,
      });
      for (const tx of [byStranger, otherNetwork, ownerOnOtherNetwork])
        await expect(f.ledger.submit(tx)).rejects.toBeInstanceOf(LedgerTxRefused);
      // A C… address that is not a smart account has no key at all.
      const channelAsSource = signLedgerTx(f.payer.keys, PASS, {
        source: CONTRACTS.channel,
        seq: 1,
        op: 'transfer',
        args,
      });
      await expect(f.ledger.submit(channelAsSource)).rejects.toThrow(/not a smart account/);
      expect(await snapshot(f.ledger, [sa.address, f.payee.address])).toEqual(before);
      expect(await f.ledger.getTx(txHash(PASS, byStranger))).toBeNull();

      const byAgent = await sa.byAgent('transfer', args);
      expect(byAgent).toMatchObject({ status: 'SUCCESS', source: sa.address });
      expect(byAgent.events.map((e) => e.data)).toEqual([
        { asset: ASSET, from: sa.address, to: f.payee.address, amount: '10' },
      ]);
      expect((await sa.byOwner('transfer', args)).status).toBe('SUCCESS');
      expect(await sa.seq()).toBe(2);
      expect(await f.payer.seq()).toBe(1); // the owner's own account only made the create
      expect(await f.payee.balance()).toBe(20n);
      // Once the owner removes the policy, the old agent key is a stranger's.
      expect((await f.payer.send('account.set_policy', { account: sa.address, policy: null })).status).toBe('SUCCESS');
      await expect(pay(sa, f.payee.address, 1)).rejects.toBeInstanceOf(LedgerTxRefused);
      expect(await sa.seq()).toBe(2);
    });
  });

  describe('smart accounts: the agent under its policy', () => {
    it('an agent transfer fails with 5 to a non-payee, 6 over the per-tx cap, 7 over the daily cap; each consumes the seq', async () => {
      const sa = await funded(f);
      const r5 = await f.expectCode(pay(sa, f.stranger.address, 1), 5);
      expect(r5.message).toMatch(/not a payee/);
      const r6 = await f.expectCode(pay(sa, f.payee.address, PER_TX + 1n), 6);
      expect(r6.message).toMatch(/per-transaction cap/);
      expect((await pay(sa, f.payee.address, PER_TX)).status).toBe('SUCCESS');
      expect((await pay(sa, f.payee.address, PER_TX)).status).toBe('SUCCESS');
      const r7 = await f.expectCode(pay(sa, f.payee.address, 501), 7);
      expect(r7.message).toMatch(/daily cap/);
      expect(await f.ledger.getTx(r7.hash)).toEqual(r7);
      expect((await pay(sa, f.payee.address, 500)).status).toBe('SUCCESS');
      await f.expectCode(pay(sa, f.payee.address, 1), 7);
      expect(await sa.seq()).toBe(7);
      expect(await f.payee.balance()).toBe(DAILY);
      expect(await f.stranger.balance()).toBe(0n);
      expect(await sa.balance()).toBe(FUND - DAILY);
      expect(await sa.state()).toMatchObject({ spentToday: DAILY, day: DAY });
    });

    it('checks in a fixed order: arguments (27), payee (5), per-tx cap (6), daily cap (7), balance (27)', async () => {
      const sa = await funded(f, { perTxCap: '5000000', dailyCap: '10000000' });
      await f.expectCode(pay(sa, f.stranger.address, 0), 27);
      await f.expectCode(pay(sa, f.stranger.address, 5_000_001), 5);
      await f.expectCode(pay(sa, f.payee.address, 5_000_001), 6);
      const poor = await f.expectCode(pay(sa, f.payee.address, FUND + 1n), 27); // within the caps, not the balance
      expect(poor.message).toMatch(/insufficient balance/);
      await f.ledger.faucet(sa.address, 9_000_000n);
      for (const amount of [5_000_000, 5_000_000])
        expect((await pay(sa, f.payee.address, amount)).status).toBe('SUCCESS');
      await f.expectCode(pay(sa, f.payee.address, 1), 7); // over the day and the (empty) balance: the cap decides
      expect(await sa.state()).toMatchObject({ spentToday: 10_000_000n });
      expect(await sa.balance()).toBe(0n);
    });

    it('a frozen account stops its agent with 3; the owner still moves funds and unfreezes; both emit account.frozen', async () => {
      const sa = await funded(f);
      const freeze = await f.payer.send('account.freeze', { account: sa.address, frozen: true });
      expect(freeze.events.map((e) => [e.type, e.data])).toEqual([
        ['account.frozen', { account: sa.address, frozen: true }],
      ]);
      expect(await sa.state()).toMatchObject({ frozen: true });
      await f.expectCode(pay(sa, f.payee.address, 1), 3);
      await f.expectCode(sa.byAgent('account.create', { owner: f.stranger.address, policy: null }), 3); // frozen: nothing at all
      // The owner is not braked: it pays anyone, past the caps, and unfreezes signing as the account.
      expect((await sa.byOwner('transfer', { to: f.stranger.address, amount: '5000' })).status).toBe('SUCCESS');
      const unfreeze = await sa.byOwner('account.freeze', { account: sa.address, frozen: false });
      expect(unfreeze.events.map((e) => [e.type, e.data])).toEqual([
        ['account.frozen', { account: sa.address, frozen: false }],
      ]);
      expect((await pay(sa, f.payee.address, 1)).status).toBe('SUCCESS');
      expect(await f.stranger.balance()).toBe(5_000n);
      const logged = (await allEvents(f.ledger)).filter((e) => e.type === 'account.frozen');
      expect(logged.map((e) => [e.tx, e.data['frozen']])).toEqual([
        [freeze.hash, true],
        [unfreeze.hash, false],
      ]);
      for (const e of logged) {
        expect(e.ledger).toBe(freeze.ledger);
        expect(Number.isNaN(Date.parse(e.ts))).toBe(false);
      }
    });

    it('after the policy’s last ledger the agent fails with 2, until the owner renews it', async () => {
      const latest = await f.ledger.latestLedger();
      const sa = await funded(f, { expiresLedger: latest + 2 });
      f.h.advance(2);
      expect((await pay(sa, f.payee.address, 1)).status).toBe('SUCCESS'); // the last ledger still counts
      f.h.advance(1);
      const expired = await f.expectCode(pay(sa, f.payee.address, 1), 2);
      expect(expired.message).toMatch(/expired/);
      const state = await sa.state();
      const renewed = { ...state.policy!, perTxCap: '1000', dailyCap: '2500', expiresLedger: latest + 1000 };
      expect((await f.payer.send('account.set_policy', { account: sa.address, policy: renewed })).status).toBe(
        'SUCCESS',
      );
      expect((await pay(sa, f.payee.address, 1)).status).toBe('SUCCESS');
      expect(await f.payee.balance()).toBe(2n);
    });

    it('owner-only ops fail with 1 unless the owner key signed: the agent, as the account or as itself, and strangers', async () => {
      const sa = await funded(f);
      const agentAsItself = new Actor(f.ledger, sa.agent);
      await f.expectCode(sa.byAgent('account.set_policy', { account: sa.address, policy: null }), 1);
      await f.expectCode(sa.byAgent('account.freeze', { account: sa.address, frozen: true }), 1);
      await f.expectCode(agentAsItself.send('account.freeze', { account: sa.address, frozen: true }), 1);
      await f.expectCode(f.stranger.send('account.set_policy', { account: sa.address, policy: null }), 1);
      const elsewhere = await SmartActor.create(f.ledger, f.stranger, null);
      await f.expectCode(elsewhere.send(f.stranger.keys, 'account.freeze', { account: sa.address, frozen: true }), 1);
      expect(await sa.state()).toMatchObject({ frozen: false, policy: { agentKey: sa.agent.address } });
      expect(await sa.seq()).toBe(2);
    });

    it('the agent opens and tops up channels only to its payees and within its caps; both count toward the day', async () => {
      const sa = await funded(f);
      const expiryLedger = (await f.ledger.latestLedger()) + 1000;
      const open = (payee: string, deposit: bigint) =>
        sa.byAgent('channel.open', {
          payee,
          deposit: deposit.toString(),
          voucherKey: f.voucherKeys.publicKeyHex,
          expiryLedger,
        });
      await f.expectCode(open(f.stranger.address, 100n), 5);
      await f.expectCode(open(f.payee.address, PER_TX + 1n), 6);
      const opened = await open(f.payee.address, PER_TX);
      expect(opened.status).toBe('SUCCESS');
      const id = BigInt(String(opened.result?.['channelId']));
      expect(await f.ledger.getChannel(id)).toMatchObject({
        payer: sa.address,
        payee: f.payee.address,
        deposit: PER_TX,
      });
      const topUp = (amount: bigint) =>
        sa.byAgent('channel.top_up', { channelId: id.toString(), amount: amount.toString() });
      await f.expectCode(topUp(PER_TX + 1n), 6);
      expect((await topUp(PER_TX)).status).toBe('SUCCESS');
      await f.expectCode(topUp(501n), 7);
      expect(await sa.state()).toMatchObject({ spentToday: 2_000n });
      // The owner drops the payee: the agent may no longer fund its channel.
      const policy = {
        ...(await sa.state()).policy!,
        perTxCap: '1000',
        dailyCap: '2500',
        payees: [f.stranger.address],
      };
      expect((await f.payer.send('account.set_policy', { account: sa.address, policy })).status).toBe('SUCCESS');
      await f.expectCode(topUp(1n), 5);
      // The payee claims from the account's channel like from any other.
      expect(await f.claim(f.payee, id, 1_500n)).toMatchObject({ status: 'SUCCESS', result: { amount: '1500' } });
      expect(await sa.balance()).toBe(FUND - 2_000n);
    });

    it('owner-signed transactions are not limited by the policy and are not the agent’s spend', async () => {
      const sa = await funded(f);
      expect((await sa.byOwner('transfer', { to: f.stranger.address, amount: '50000' })).status).toBe('SUCCESS');
      const latest = await f.ledger.latestLedger();
      const opened = await sa.byOwner('channel.open', {
        payee: f.stranger.address,
        deposit: '60000',
        voucherKey: f.voucherKeys.publicKeyHex,
        expiryLedger: latest + 100,
      });
      expect(opened.status).toBe('SUCCESS');
      expect(await sa.state()).toMatchObject({ spentToday: 0n });
      for (const amount of [PER_TX, PER_TX, 500n])
        expect((await pay(sa, f.payee.address, amount)).status).toBe('SUCCESS');
      await f.expectCode(pay(sa, f.payee.address, 1), 7);
      expect(await sa.balance()).toBe(FUND - 110_000n - DAILY);
    });

    it('the daily cap resets at the next UTC day of the ledger’s time', async () => {
      const sa = await funded(f);
      for (const amount of [PER_TX, PER_TX, 500n])
        expect((await pay(sa, f.payee.address, amount)).status).toBe('SUCCESS');
      f.h.advance(LEDGERS_TO_MIDNIGHT - 1); // 23:59:55
      await f.expectCode(pay(sa, f.payee.address, 1), 7);
      expect(await sa.state()).toMatchObject({ spentToday: DAILY, day: DAY });
      f.h.advance(1); // 00:00:00 the next day
      expect(await sa.state()).toMatchObject({ spentToday: 0n, day: NEXT_DAY });
      for (const amount of [PER_TX, PER_TX]) expect((await pay(sa, f.payee.address, amount)).status).toBe('SUCCESS');
      await f.expectCode(pay(sa, f.payee.address, 501), 7);
      expect(await sa.state()).toMatchObject({ spentToday: 2_000n, day: NEXT_DAY });
      expect(await f.payee.balance()).toBe(DAILY + 2_000n);
    });
  });

  describe('smart accounts: set_policy and read-back', () => {
    it('account.set_policy replaces the policy (account.policy_set) and keeps today’s spend; null removes the agent', async () => {
      const sa = await funded(f);
      expect((await pay(sa, f.payee.address, PER_TX)).status).toBe('SUCCESS');
      const newAgent = randomKeypair();
      const latest = await f.ledger.latestLedger();
      const policy = {
        agentKey: newAgent.address,
        perTxCap: '300',
        dailyCap: '1500',
        payees: [f.stranger.address],
        expiresLedger: latest + 50,
      };
      const set = await f.payer.send('account.set_policy', { account: sa.address, policy });
      expect(set.events.map((e) => [e.type, e.data])).toEqual([
        ['account.policy_set', { account: sa.address, policy }],
      ]);
      expect(await sa.state()).toMatchObject({
        policy: { ...policy, perTxCap: 300n, dailyCap: 1500n },
        spentToday: PER_TX,
      });
      await expect(pay(sa, f.stranger.address, 1)).rejects.toBeInstanceOf(LedgerTxRefused); // the old agent key
      const asNew = (to: string, amount: number) => sa.send(newAgent, 'transfer', { to, amount: amount.toString() });
      await f.expectCode(asNew(f.payee.address, 1), 5);
      expect((await asNew(f.stranger.address, 300)).status).toBe('SUCCESS');
      await f.expectCode(asNew(f.stranger.address, 300), 7); // 1,000 + 300 + 300 > 1,500
      // The owner key may also sign as the account itself.
      const cleared = await sa.byOwner('account.set_policy', { account: sa.address, policy: null });
      expect(cleared.events.map((e) => [e.type, e.data])).toEqual([
        ['account.policy_set', { account: sa.address, policy: null }],
      ]);
      expect((await sa.state()).policy).toBeNull();
    });

    it('fails with 27 for a policy the contract refuses or an account that is not a smart account', async () => {
      const sa = await funded(f);
      const latest = await f.ledger.latestLedger();
      const good = {
        agentKey: randomKeypair().address,
        perTxCap: '1',
        dailyCap: '1',
        payees: [],
        expiresLedger: latest + 10,
      };
      const set = (account: string, policy: Record<string, unknown>) =>
        f.payer.send('account.set_policy', { account, policy });
      for (const bad of [
        { agentKey: f.payer.address },
        { perTxCap: '-1' },
        { dailyCap: '-1' },
        { expiresLedger: latest },
      ]) {
        await f.expectCode(set(sa.address, { ...good, ...bad }), 27);
        await f.expectCode(f.payer.send('account.create', { owner: f.payer.address, policy: { ...good, ...bad } }), 27);
      }
      await f.expectCode(set(f.payee.address, good), 27);
      await f.expectCode(set(CONTRACTS.channel, good), 27);
      await f.expectCode(f.payer.send('account.freeze', { account: f.payee.address, frozen: true }), 27);
      expect((await sa.state()).policy).toMatchObject({ perTxCap: PER_TX, dailyCap: DAILY });
      expect((await set(sa.address, good)).status).toBe('SUCCESS');
    });

    it('reads caps and spend back as exact bigints, and refuses malformed account args with no effect', async () => {
      const huge = (1n << 125n) + 12_345n; // twice it still fits i128
      const latest = await f.ledger.latestLedger();
      const good = (agent: { address: string }): PolicyArgs => ({
        agentKey: agent.address,
        perTxCap: huge.toString(),
        dailyCap: (huge * 2n).toString(),
        payees: [f.payee.address],
        expiresLedger: latest + 10,
      });
      const sa = await SmartActor.create(f.ledger, f.payer, good);
      await f.ledger.faucet(sa.address, FUND);
      expect((await pay(sa, f.payee.address, 12_345)).status).toBe('SUCCESS');
      expect(await sa.state()).toEqual({
        owner: f.payer.address,
        policy: { ...good(sa.agent), perTxCap: huge, dailyCap: huge * 2n },
        frozen: false,
        spentToday: 12_345n,
        day: DAY,
      });

      const policy = good(sa.agent);
      const before = await snapshot(f.ledger, [f.payer.address, sa.address]);
      const bad: Array<[string, Record<string, unknown>]> = [
        ['account.create', { owner: f.payer.address }],
        ['account.create', { owner: CONTRACTS.channel, policy: null }],
        ['account.create', { owner: f.payer.address, policy: { ...policy, perTxCap: 5 } }],
        ['account.create', { owner: f.payer.address, policy: { ...policy, dailyCap: '1.5' } }],
        ['account.create', { owner: f.payer.address, policy: { ...policy, agentKey: CONTRACTS.channel } }],
        [
          'account.create',
          { owner: f.payer.address, policy: { ...policy, payees: Array.from({ length: 65 }, () => f.payee.address) } },
        ],
        ['account.create', { owner: f.payer.address, policy: { ...policy, payees: ['GNOPE'] } }],
        ['account.create', { owner: f.payer.address, policy: { ...policy, expiresLedger: -1 } }],
        ['account.create', { owner: f.payer.address, policy: { ...policy, memo: 'x' } }],
        ['account.set_policy', { account: sa.address }],
        ['account.freeze', { account: sa.address, frozen: 'yes' }],
        ['account.freeze', { account: sa.address }],
      ];
      for (const [op, args] of bad) {
        await expect(
          f.ledger.submit(await f.payer.sign(op, args)),
          `${op} ${JSON.stringify(args)}`,
        ).rejects.toBeInstanceOf(LedgerTxRefused);
      }
      expect(await snapshot(f.ledger, [f.payer.address, sa.address])).toEqual(before);
    });
  });
}
