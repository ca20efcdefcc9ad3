// `svc backup` run as a user runs it, beside a real facilitator that is taking payments: the copy
// is one moment of the store (whole, every channel's voucher with its receipt and its event), and
// a facilitator restored from it as docs/operating.md says starts and serves. Bad input is one line and
// exit 2.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalLedgerClient, payFetch } from '@svc/sdk';
import type { ChannelSigner } from '@svc/sdk';
import { SqliteStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/index.js';
import { openChannel } from '../helpers/open-channel.js';
import { spawnSvc, startChild } from '../helpers/process.js';
import type { Child } from '../helpers/process.js';

const BUYERS = 4;
const PRICE = 5000n;
const STORE = 'facilitator.sqlite';
const SUMMARY =
  /backup written: (\S+) \([0-9.]+ [KM]B, integrity ok\): (\d+) channels, (\d+) receipts, (\d+) events; last event id (\d+)/;

const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Runs `svc` to its end. */
function svc(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const proc = spawnSvc(args, env);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, out })));
}

/** Every cumulative amount a buyer got a receipt for, per channel, and the latest. */
class Acknowledged {
  readonly seen = new Map<bigint, Set<bigint>>();
  readonly latest = new Map<bigint, bigint>();
  readonly failures: string[] = [];
  total = 0;

  add(channelId: bigint, cumulative: bigint): void {
    if (!this.seen.has(channelId)) this.seen.set(channelId, new Set());
    this.seen.get(channelId)!.add(cumulative);
    this.latest.set(channelId, cumulative);
    this.total++;
  }
}

async function waitFor(acked: Acknowledged, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (acked.failures.length || Date.now() > deadline)
      throw new Error(`the buyers stopped paying: ${acked.failures.join('; ')}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What a copy of the store must hold for one channel, whatever moment it was taken at. */
async function expectConsistentChannel(copy: Store, channelId: bigint, acked: Acknowledged): Promise<bigint> {
  const record = await copy.getChannel(channelId);
  expect(record, `channel ${channelId} is in the copy`).not.toBeNull();
  const { lastAccepted, vouchers } = record!;
  // An amount some buyer was answered for, never one half-written or from after the copy's moment.
  expect(acked.seen.get(channelId)!.has(lastAccepted)).toBe(true);
  expect(lastAccepted).toBeLessThanOrEqual(acked.latest.get(channelId)!);
  // The voucher, its receipt and its event were committed together: the copy has all three or none.
  const receipts = await copy.listReceipts({ channelId, limit: 10_000 });
  expect(receipts).toHaveLength(vouchers);
  const amounts = receipts.map(({ receipt }) => BigInt(receipt.cumulative));
  expect(amounts.reduce((a, b) => (a > b ? a : b), 0n)).toBe(lastAccepted);
  expect(await copy.findReceipt(channelId, lastAccepted)).not.toBeNull();
  const accepted = await copy.events({ channelId, types: ['voucher.accepted'], limit: 10_000 });
  expect(accepted).toHaveLength(vouchers);
  const ids = new Set(receipts.map(({ receipt }) => receipt.id));
  for (const event of accepted) expect(ids.has(String(event.data['receiptId']))).toBe(true);
  return lastAccepted;
}

describe('svc backup beside a facilitator taking payments', () => {
  const dataDir = tmp('svc-backup-data-');
  const backupFile = path.join(tmp('svc-backup-out-'), 'copy.sqlite');
  const env = { DATA_DIR: dataDir, LEDGER_SECONDS: '1', DEMO_SEED: '0', IP_RATE_LIMIT_PER_MINUTE: '0' };
  let child: Child | null = null;
  afterAll(async () => {
    await child?.kill();
  });

  it('copies one moment of the store mid-load, whole and consistent, and a facilitator restored from it serves', async () => {
    child = await startChild(env);
    const url = child.url;
    const ledger = new LocalLedgerClient(`${url}/ledger`);
    const terms = (await (await fetch(`${url}/demo/book`)).json()) as { accepts: Array<{ payTo: string }> };
    // (the 402's terms, passed back whole as the requirements of a /verify below)
    const signers: ChannelSigner[] = [];
    for (let i = 0; i < BUYERS; i++)
      signers.push((await openChannel(ledger, { payee: terms.accepts[0]!.payTo, deposit: 50_000_000n })).signer);

    const acked = new Acknowledged();
    let paying = true;
    const loops = Promise.all(
      signers.map(async (signer) => {
        while (paying) {
          const res = await payFetch(`${url}/demo/book`, {}, { signer });
          if (res.status !== 200 || !res.payment) {
            acked.failures.push(`payment answered ${res.status}`);
            return;
          }
          acked.add(signer.channelId, BigInt(res.payment.cumulative));
        }
      }),
    );
    let backup: { code: number | null; out: string };
    let before: number;
    let during: number;
    const ackedBefore = new Map<bigint, bigint>();
    try {
      await waitFor(
        acked,
        () => acked.total >= 80 && signers.every((s) => (acked.seen.get(s.channelId)?.size ?? 0) >= 3),
      );
      before = acked.total;
      for (const [channelId, amount] of acked.latest) ackedBefore.set(channelId, amount);
      backup = await svc(['backup', backupFile], { DATA_DIR: dataDir });
      during = acked.total - before;
      await waitFor(acked, () => acked.total >= before + during + 40);
    } finally {
      paying = false;
      await loops;
    }
    expect(acked.failures).toEqual([]);
    expect(backup.code, backup.out).toBe(0);
    // The facilitator kept taking payments while the copy was made.
    expect(during).toBeGreaterThan(0);

    const check = new Database(backupFile, { readonly: true });
    try {
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      check.close();
    }
    const summary = SUMMARY.exec(backup.out);
    expect(summary, backup.out).not.toBeNull();
    expect(summary![1]).toBe(backupFile);
    const copy = await SqliteStore.open({ file: backupFile, writer: 'inline' });
    const copied = new Map<bigint, bigint>();
    try {
      expect(await copy.countChannels()).toBe(Number(summary![2]));
      expect(await copy.lastEventId()).toBe(Number(summary![5]));
      for (const s of signers) copied.set(s.channelId, await expectConsistentChannel(copy, s.channelId, acked));
    } finally {
      await copy.close();
    }
    // A moment while the command ran: everything acknowledged before it started is in the copy
    // (the WAL's latest commits included), and the payments after it are not.
    for (const [channelId, amount] of ackedBefore) expect(copied.get(channelId)).toBeGreaterThanOrEqual(amount);
    const sum = (m: Map<bigint, bigint>) => [...m.values()].reduce((a, b) => a + b, 0n);
    expect(sum(copied)).toBeLessThan(sum(acked.latest));

    // Two of the channels are claimed after the backup: the ledger then shows more claimed on them
    // than the copy holds as accepted.
    const claimedAfter = signers.slice(0, 2);
    for (const signer of claimedAfter) {
      const claim = await fetch(`${url}/channels/${signer.channelId}/claim`, { method: 'POST' });
      expect(claim.status).toBe(200);
      expect(await claim.json()).toMatchObject({ cumulative: acked.latest.get(signer.channelId)!.toString() });
    }

    // Restoring, as docs/operating.md says: stop, remove the old store with its -wal and -shm, put the copy
    // in its place, start (the local ledger's own file stays).
    await child.kill('SIGTERM');
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(dataDir, `${STORE}${suffix}`), { force: true });
    fs.copyFileSync(backupFile, path.join(dataDir, STORE));
    child = await startChild(env);
    // What the ledger paid out is not taken again: a voucher between the copy and the claim, which
    // the restored store does not remember, is refused on the claimed channels.
    const accepted = terms.accepts[0]!;
    for (const signer of claimedAfter) {
      const between = copied.get(signer.channelId)! + PRICE;
      const res = await fetch(`${child.url}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: { x402Version: 2, accepted, payload: signer.sign(between) },
          paymentRequirements: accepted,
        }),
      });
      expect(await res.json()).toMatchObject({ isValid: false, invalidReason: 'VOUCHER_NOT_INCREASING' });
    }
    for (const signer of signers) {
      const view = (await (await fetch(`${child.url}/channels/${signer.channelId}`)).json()) as {
        lastAccepted: string;
      };
      expect(BigInt(view.lastAccepted)).toBeGreaterThanOrEqual(copied.get(signer.channelId)!);
      expect(BigInt(view.lastAccepted)).toBeLessThanOrEqual(acked.latest.get(signer.channelId)!);
      const next = await payFetch(`${child.url}/demo/book`, {}, { signer });
      expect(next.status).toBe(200);
      expect(BigInt(next.payment!.cumulative)).toBe(acked.latest.get(signer.channelId)! + PRICE);
    }
    // And the seller's books still add up to the base unit.
    const revenue = (await (await fetch(`${child.url}/sellers/${accepted.payTo}/revenue`)).json()) as {
      totals: Record<string, string>;
    };
    const t = revenue.totals;
    expect(BigInt(t['earned']!)).toBe(BigInt(t['settled']!) + BigInt(t['receivable']!) + BigInt(t['lost']!));
    expect(BigInt(t['restored']!)).toBeGreaterThan(0n);
  });
});

describe('svc backup refuses what it cannot do, in one line, exit 2', () => {
  const dataDir = tmp('svc-backup-store-');
  const env = { DATA_DIR: dataDir };

  beforeAll(async () => {
    const store = await SqliteStore.open({ file: path.join(dataDir, STORE), writer: 'inline' });
    await store.migrate();
    await store.close();
  });

  const expectRefused = (ran: { code: number | null; out: string }, says: RegExp) => {
    expect(ran.code, ran.out).toBe(2);
    expect(ran.out.trim().split('\n')).toHaveLength(1);
    expect(ran.out).toMatch(says);
    expect(ran.out).not.toMatch(/\n\s+at /);
  };

  it('no file to write: names the usage', async () => {
    expectRefused(
      await svc(['backup'], env),
      /^svc: backup needs the file to write; usage: svc backup <file> \[--force\]/,
    );
  });

  it('a directory: asks for a file name in it', async () => {
    expectRefused(
      await svc(['backup', tmp('svc-backup-dir-')], env),
      /is a directory: name the file to write, e\.g\. .*facilitator-backup\.sqlite/,
    );
  });

  it('no store in DATA_DIR: says where it looked and to set DATA_DIR', async () => {
    const empty = tmp('svc-backup-empty-');
    const out = tmp('svc-backup-out-');
    expectRefused(
      await svc(['backup', path.join(out, 'x.sqlite')], { DATA_DIR: empty }),
      new RegExp(`there is no store at ${path.join(empty, STORE).replace(/[.]/g, '\\.')}: set DATA_DIR`),
    );
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it('the store itself as the file: refused, even with --force', async () => {
    expectRefused(await svc(['backup', path.join(dataDir, STORE), '--force'], env), /is the store itself/);
  });

  it('an existing file: refused and left as it was; --force replaces it', async () => {
    const out = tmp('svc-backup-out-');
    const file = path.join(out, 'existing.sqlite');
    fs.writeFileSync(file, 'keep me');
    expectRefused(
      await svc(['backup', file], env),
      /existing\.sqlite exists: name another file, or replace it with --force/,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me');
    const forced = await svc(['backup', file, '--force'], env);
    expect(forced.code, forced.out).toBe(0);
    expect(forced.out).toMatch(SUMMARY);
    expect(fs.readdirSync(out)).toEqual(['existing.sqlite']);
  });

  it('PostgreSQL (DATABASE_URL set): names pg_dump, pg_basebackup and the section of docs/operating.md', async () => {
    expectRefused(
      await svc(['backup', path.join(tmp('svc-backup-out-'), 'pg.sqlite')], {
        ...env,
        DATABASE_URL: 'postgres://127.0.0.1:5432/svc',
      }),
      /pg_dump.*pg_basebackup.*docs\/operating\.md, "Backups and restoring"/,
    );
  });

  it('svc help names svc backup', async () => {
    const help = await svc(['help'], {});
    expect(help.out).toMatch(/backup <file>.*consistent copy/);
  });
});
