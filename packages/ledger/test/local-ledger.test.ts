import { describe, expect, it } from 'vitest';
import { channelIdOf, randomKeypair } from '@svc/core';
import type { Keypair, SignedLedgerTx } from '@svc/core';
import { z } from 'zod';
import {
  DEFAULT_OPS,
  defineOp,
  fail,
  LedgerTxRefused,
  LocalLedger,
  LedgerUnavailable,
  opRegistry,
} from '../src/index.js';
import { Actor, CONTRACTS, PASS, tempDir, voucher } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';
import { runLedgerContract } from './ledger-contract.js';
import { runLedgerReadContract } from './ledger-read-contract.js';

const LEDGER_SECONDS = 5;

runLedgerContract({
  name: 'LocalLedger (in-process)',
  async create(options = {}) {
    const tmp = tempDir();
    const clock = new FakeClock();
    const ledger = await LocalLedger.open({
      dataDir: tmp.dir,
      ledgerSeconds: LEDGER_SECONDS,
      clock,
      ...(options.faucet ? { faucet: options.faucet } : {}),
      ...(options.dexReserves ? { dexReserves: options.dexReserves } : {}),
    });
    return {
      ledger,
      advance: (ledgers) => clock.advance(ledgers * LEDGER_SECONDS * 1000),
      close: async () => {
        await ledger.close();
        tmp.remove();
      },
    };
  },
});

runLedgerReadContract({
  name: 'LocalLedger (in-process)',
  async create() {
    const tmp = tempDir();
    const ledger = await LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: LEDGER_SECONDS, clock: new FakeClock() });
    const [payer, payee, voucherKeys] = [new Actor(ledger), new Actor(ledger), randomKeypair()];
    const grant = await ledger.faucet(payer.address);
    const expiryLedger = (await ledger.latestLedger()) + 1000;
    const opened = await payer.send('channel.open', {
      payee: payee.address,
      deposit: '1000000',
      voucherKey: voucherKeys.publicKeyHex,
      expiryLedger,
    });
    const id = BigInt(String(opened.result?.['channelId']));
    await payer.send('channel.top_up', { channelId: id.toString(), amount: '500' });
    const channel = {
      id,
      payer: payer.address,
      payee: payee.address,
      asset: CONTRACTS.asset,
      deposit: 1_000_500n,
      claimed: 0n,
      voucherKey: voucherKeys.publicKeyHex,
      receiverAuthorizer: null,
      expiryLedger,
      refundNonce: 0n,
      open: true,
    };
    const seed = {
      channel,
      openDeposit: 1_000_000n,
      topUp: 500n,
      openTx: opened.hash,
      missingChannelId: id + 1n,
      payerBalance: BigInt(String(grant.result?.['amount'])) - 1_000_500n,
      unknownTx: 'ab'.repeat(32),
    };
    return {
      ledger,
      seed,
      close: async () => {
        await ledger.close();
        tmp.remove();
      },
    };
  },
});

describe('LocalLedger', () => {
  it('refuses work once closed with LedgerUnavailable', async () => {
    const tmp = tempDir();
    const ledger = await LocalLedger.open({ dataDir: tmp.dir, clock: new FakeClock() });
    await ledger.close();
    await ledger.close();
    await expect(ledger.latestLedger()).rejects.toBeInstanceOf(LedgerUnavailable);
    await expect(ledger.getChannel(1n)).rejects.toBeInstanceOf(LedgerUnavailable);
    tmp.remove();
  });

  it('refuses a nonsensical ledgerSeconds or faucet limit at open', async () => {
    const tmp = tempDir();
    await expect(LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: 0 })).rejects.toThrow(/ledgerSeconds/);
    await expect(LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: Number.NaN })).rejects.toThrow(/ledgerSeconds/);
    await expect(LocalLedger.open({ dataDir: tmp.dir, faucet: { perAddressPerHour: -1 } })).rejects.toThrow(
      /perAddressPerHour/,
    );
    await expect(LocalLedger.open({ dataDir: tmp.dir, faucet: { amount: 0n } })).rejects.toThrow(/amount/);
    tmp.remove();
  });
});

describe('LocalLedger channel ids', () => {
  it('stores ids from 2^63 to 2^64 − 1 (an i64 column) and reads them back the same, across a reopen', async () => {
    const tmp = tempDir();
    const clock = new FakeClock();
    let ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    const [payer, payee] = [new Actor(ledger), new Actor(ledger)];
    await ledger.faucet(payer.address);
    const keyWith = (high: boolean) => {
      for (;;) {
        const key = randomKeypair();
        if (channelIdOf(PASS, CONTRACTS.channel, key.publicKey) >= 2n ** 63n === high) return key;
      }
    };
    const opened: Array<[bigint, Keypair]> = [];
    for (const key of [keyWith(true), keyWith(false), keyWith(true)]) {
      const res = await payer.send('channel.open', {
        payee: payee.address,
        deposit: '1000',
        voucherKey: key.publicKeyHex,
        expiryLedger: 500,
      });
      opened.push([BigInt(String(res.result?.['channelId'])), key]);
    }
    const [high] = opened[0]!;
    expect(high).toBeGreaterThanOrEqual(2n ** 63n);
    const claimed = await ledger.claim(
      { channelId: high, cumulative: 10n, signature: voucher(opened[0]![1], high, 10n) },
      payee.keys,
    );
    expect(claimed.result).toEqual({ amount: '10' });
    await ledger.close();
    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    for (const [id, key] of opened)
      expect(await ledger.getChannel(id)).toMatchObject({ id, voucherKey: key.publicKeyHex, deposit: 1000n });
    expect(await ledger.getChannel(high)).toMatchObject({ claimed: 10n });
    // The i64 the id is stored as is not itself an id.
    expect(await ledger.getChannel(BigInt.asIntN(64, high))).toBeNull();
    await ledger.close();
    tmp.remove();
  });
});

describe('LocalLedger in-process callers', () => {
  it('refuses a tx whose args cannot be hashed (NaN, Infinity, bigint) instead of throwing', async () => {
    const tmp = tempDir();
    const ledger = await LocalLedger.open({ dataDir: tmp.dir, clock: new FakeClock() });
    const keys = randomKeypair();
    for (const amount of [Number.NaN, Number.POSITIVE_INFINITY, 5n]) {
      const tx = {
        source: keys.address,
        seq: 1,
        op: 'transfer',
        args: { to: keys.address, amount },
        signature: 'ab'.repeat(64),
      };
      await expect(ledger.submit(tx)).rejects.toBeInstanceOf(LedgerTxRefused);
    }
    await expect(ledger.submit(null as unknown as SignedLedgerTx)).rejects.toBeInstanceOf(LedgerTxRefused);
    expect(await ledger.getAccount(keys.address)).toEqual({ address: keys.address, seq: 0, balances: [] });
    await ledger.close();
    tmp.remove();
  });
});

describe('the core loop (one SQLite transaction per ledger transaction)', () => {
  const SCRATCH = 'test.write_then_fail';
  // Writes a balance and an event, then fails or throws: neither effect may survive.
  const writeThenFail = defineOp(SCRATCH, z.strictObject({ mode: z.enum(['fail', 'crash']) }), (ctx, args) => {
    ctx.mint(ctx.source, 999n);
    if (args.mode === 'fail') fail(27, 'failed after writing');
    throw new Error('a bug in the op');
  });

  it('a contract failure after writes undoes them and still consumes the seq; a bug undoes everything', async () => {
    const tmp = tempDir();
    const ledger = await LocalLedger.open({
      dataDir: tmp.dir,
      clock: new FakeClock(),
      ops: opRegistry([...DEFAULT_OPS.values(), writeThenFail]),
    });
    const actor = new Actor(ledger);
    const failed = await actor.send(SCRATCH, { mode: 'fail' });
    expect(failed).toMatchObject({ status: 'FAILED', code: 27, message: 'failed after writing', events: [] });
    expect(await ledger.getAccount(actor.address)).toEqual({ address: actor.address, seq: 1, balances: [] });
    expect((await ledger.events(null, 10)).events).toEqual([]);

    await expect(actor.send(SCRATCH, { mode: 'crash' })).rejects.toThrow('a bug in the op');
    expect(await ledger.getAccount(actor.address)).toEqual({ address: actor.address, seq: 1, balances: [] });
    expect((await ledger.events(null, 10)).events).toEqual([]);
    expect((await actor.send('transfer', { to: actor.address, amount: '1' })).status).toBe('FAILED');
    await ledger.close();
    tmp.remove();
  });

  it('an op name can be defined only once', () => {
    expect(() => opRegistry([writeThenFail, writeThenFail])).toThrow(/twice/);
  });
});
