import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LocalLedger } from '../src/index.js';
import type { LedgerChannel, TxResult } from '../src/index.js';
import { Actor, allEvents, CONTRACTS, balanceOf, tempDir, voucher } from './helpers/actors.js';
import { FakeClock } from './helpers/fake-clock.js';
import { randomKeypair } from '@svc/core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '../../..');
const CRASH_CHILD = path.join(HERE, 'fixtures/crash-child.ts');
const APPLIED_BEFORE_KILL = 40;

async function channels(ledger: LocalLedger, ids: bigint[]): Promise<(LedgerChannel | null)[]> {
  return Promise.all(ids.map((id) => ledger.getChannel(id)));
}

describe('durability', () => {
  it('closing and reopening gives identical channels, balances, seqs, events and txs', async () => {
    const tmp = tempDir();
    const clock = new FakeClock();
    let ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    const payer = new Actor(ledger);
    const payee = new Actor(ledger);
    const keys = [randomKeypair(), randomKeypair(), randomKeypair()];
    const txs: TxResult[] = [await ledger.faucet(payer.address)];
    const ids: bigint[] = [];
    for (const [i, deposit] of ['1000', '2000', '3000'].entries()) {
      const opened = await payer.send('channel.open', {
        payee: payee.address,
        deposit,
        voucherKey: keys[i]!.publicKeyHex,
        expiryLedger: 500,
        receiverAuthorizer: payee.address,
      });
      txs.push(opened);
      ids.push(BigInt(String(opened.result?.['channelId'])));
    }
    const [, second, third] = ids as [bigint, bigint, bigint];
    clock.advance(60_000);
    const claim = { channelId: second.toString(), cumulative: '700', signature: voucher(keys[1]!, second, 700n) };
    txs.push(await payee.send('channel.claim', claim));
    txs.push(await payee.send('channel.claim', claim));
    const row = { channelId: second.toString(), maxClaimable: '900', signature: voucher(keys[1]!, second, 900n) };
    txs.push(await payee.send('channel.claim_many', { claims: [{ ...row, total: '800' }] }));
    txs.push(await payee.send('channel.refund', { channelId: second.toString(), amount: '100', nonce: '0' }));
    txs.push(await payee.send('channel.close', { channelId: third.toString() }));
    const parties = [payer.address, payee.address, CONTRACTS.channel];
    const before = {
      info: await ledger.info(),
      accounts: await Promise.all(parties.map((a) => ledger.getAccount(a))),
      channels: await channels(ledger, ids),
      events: await allEvents(ledger),
      txs: await Promise.all(txs.map((t) => ledger.getTx(t.hash))),
    };
    expect(before.txs).toEqual(txs);
    expect(before.txs.map((t) => t?.status)).toContain('FAILED');
    expect(before.channels[1]).toMatchObject({ claimed: 800n, deposit: 1_900n, refundNonce: 1n });
    await ledger.close();

    ledger = await LocalLedger.open({ dataDir: tmp.dir, clock });
    expect({
      info: await ledger.info(),
      accounts: await Promise.all(parties.map((a) => ledger.getAccount(a))),
      channels: await channels(ledger, ids),
      events: await allEvents(ledger),
      txs: await Promise.all(txs.map((t) => ledger.getTx(t.hash))),
    }).toEqual(before);

    // The counters carry on where they were: seq, event ids; and a used voucher key stays used.
    const again = new Actor(ledger, payer.keys);
    const open = { payee: payee.address, deposit: '5', voucherKey: keys[0]!.publicKeyHex, expiryLedger: 500 };
    expect(await again.send('channel.open', open)).toMatchObject({ status: 'FAILED', code: 27 });
    const res = await again.send('channel.open', { ...open, voucherKey: randomKeypair().publicKeyHex });
    expect(res.status).toBe('SUCCESS');
    expect(await again.seq()).toBe(5);
    expect(Number(res.events[0]!.id)).toBe(Number(before.events.at(-1)!.id) + 1);
    await ledger.close();
    tmp.remove();
  });

  it('every transaction a killed (-9) process reported as applied is there after reopening', async () => {
    const tmp = tempDir();
    const child = spawn(process.execPath, ['--import', 'tsx', CRASH_CHILD, tmp.dir], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const applied: Array<{ hash: string; seq: number }> = [];
    let payer = '';
    let payee = '';
    for await (const line of readline.createInterface({ input: child.stdout })) {
      const [kind, a, b, status] = line.split(' ');
      if (kind === 'ready') [payer, payee] = [a!, b!];
      if (kind === 'applied') {
        expect(status).toBe('SUCCESS');
        applied.push({ hash: a!, seq: Number(b) });
      }
      if (applied.length >= APPLIED_BEFORE_KILL) {
        child.kill('SIGKILL');
        break;
      }
    }
    expect(await exited, stderr).toBe('SIGKILL');
    expect(applied.length).toBe(APPLIED_BEFORE_KILL);

    const check = new Database(path.join(tmp.dir, 'ledger.sqlite'), { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    check.close();

    const ledger = await LocalLedger.open({ dataDir: tmp.dir });
    for (const { hash } of applied) expect((await ledger.getTx(hash))?.status).toBe('SUCCESS');
    const seq = (await ledger.getAccount(payer)).seq;
    expect(seq).toBeGreaterThanOrEqual(applied.at(-1)!.seq);
    // All or nothing per transaction: the payee holds exactly one unit per applied transfer.
    expect(await balanceOf(ledger, payee)).toBe(BigInt(seq));
    const transfers = (await allEvents(ledger)).filter((e) => e.type === 'asset.transferred');
    expect(transfers).toHaveLength(seq);
    await ledger.close();
    tmp.remove();
  });
});

describe('the clock across restarts', () => {
  it('time keeps passing while the ledger is down; a new ledgerSeconds continues from the current ledger', async () => {
    const tmp = tempDir();
    const clock = new FakeClock();
    let ledger = await LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: 5, clock });
    expect(await ledger.latestLedger()).toBe(1);
    clock.advance(50_000);
    expect(await ledger.latestLedger()).toBe(11);
    await ledger.close();

    clock.advance(100_000);
    ledger = await LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: 5, clock });
    expect(await ledger.latestLedger()).toBe(31);
    await ledger.close();

    ledger = await LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: 0.5, clock });
    expect(await ledger.info()).toMatchObject({ latestLedger: 31, ledgerSeconds: 0.5 });
    clock.advance(10_000);
    expect(await ledger.latestLedger()).toBe(51);
    await ledger.close();
    tmp.remove();
  });

  it('never goes back: a clock stepping back keeps the latest ledger, and reopening keeps every ledger a tx used', async () => {
    const tmp = tempDir();
    const clock = new FakeClock();
    let ledger = await LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: 5, clock });
    clock.advance(100_000);
    const grant = await ledger.faucet(randomKeypair().address);
    expect(grant.ledger).toBe(21);
    clock.advance(-60_000);
    expect(await ledger.latestLedger()).toBe(21);
    await ledger.close();
    ledger = await LocalLedger.open({ dataDir: tmp.dir, ledgerSeconds: 5, clock });
    expect(await ledger.latestLedger()).toBe(21);
    await ledger.close();
    tmp.remove();
  });
});
