// The receipt signer a store was written under. A missing facilitator.secret beside a
// used store was replaced silently: a new signer, every seller token then 401, and earlier receipts
// signed by a key /supported no longer listed. Now the start is refused, saying what is missing and
// how to rotate on purpose; `svc rotate-key` keeps the old signer listed, so its receipts verify.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { keypairFromSecret, verifyReceipt } from '@svc/core';
import type { Receipt, SupportedResponse } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import { facilitatorSigners, payFetch } from '@svc/sdk';
import { loadConfig } from '../../src/config.js';
import { createFacilitator } from '../../src/facilitator.js';
import { SIGNER_META } from '../../src/domain/receipt-signers.js';
import { startHarness } from '../helpers/harness.js';
import { createPgDatabase, pgEnabled } from '../helpers/pg.js';
import { spawnSvc, startChild } from '../helpers/process.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-signer-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Runs `svc <args>` to its end (killed after `limitMs` if still running: a server that started). */
function svcRun(
  args: string[],
  env: Record<string, string>,
  limitMs = 30_000,
): Promise<{ code: number | null; out: string }> {
  const proc = spawnSvc(args, { PORT: '0', DEMO_SEED: '0', LEDGER_SECONDS: '1', ...env });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), limitMs);
  return new Promise((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

const hexSecret = () => randomBytes(32).toString('hex');
const addressOf = (secret: string) => keypairFromSecret(secret).address;
const config = (dataDir: string, env: Record<string, string> = {}) =>
  loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO: 'off', LEDGER_SECONDS: '1', ...env });

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function supported(url: string): Promise<SupportedResponse> {
  return (await (await fetch(`${url}/supported`)).json()) as SupportedResponse;
}

describe('svc start refuses a key that is not its store’s signer', () => {
  it('the secret file gone: refused, naming the signer and svc rotate-key, and no new key is written; FACILITATOR_SECRET naming another key: refused too', async () => {
    const dataDir = tmp();
    const file = path.join(dataDir, 'facilitator.secret');
    const first = await startChild({ DATA_DIR: dataDir, DEMO_SEED: '0', LEDGER_SECONDS: '1' });
    const signer = (await supported(first.url)).kinds[0]!.extra.receiptSigner;
    await first.kill('SIGTERM');
    const secret = fs.readFileSync(file, 'utf8');
    fs.rmSync(file);

    const missing = await svcRun(['start'], { DATA_DIR: dataDir });
    expect(missing.code, missing.out).toBe(1);
    expect(missing.out).toContain(`svc: ${file} is missing, but this store's receipts are signed by ${signer}.`);
    expect(missing.out).toMatch(/svc rotate-key/);
    expect(missing.out).not.toMatch(/listening on/);
    expect(missing.out).not.toMatch(/\n\s+at /); // no stack trace
    expect(fs.existsSync(file)).toBe(false); // the refused start made no key

    const other = hexSecret();
    const differs = await svcRun(['start'], { DATA_DIR: dataDir, FACILITATOR_SECRET: other });
    expect(differs.code, differs.out).toBe(1);
    expect(differs.out).toContain(
      `svc: FACILITATOR_SECRET is the key of ${addressOf(other)}, but this store's receipts are signed by ${signer}.`,
    );
    expect(differs.out).not.toContain(other); // never the secret itself

    fs.writeFileSync(file, secret, { mode: 0o600 });
    const back = await startChild({ DATA_DIR: dataDir, DEMO_SEED: '0', LEDGER_SECONDS: '1' });
    expect((await supported(back.url)).kinds[0]!.extra.receiptSigner).toBe(signer);
    await back.kill('SIGTERM');
  }, 90_000);

  it('a store written before signers were recorded: its newest receipt names the signer', async () => {
    const dataDir = tmp();
    const h = await startHarness({ DATA_DIR: dataDir, DEMO: 'off' });
    const signer = h.f.address;
    const b = await h.buyer();
    expect((await h.verify(b.signer.sign(5000n))).body).toMatchObject({ isValid: true });
    await h.close();
    const db = new Database(path.join(dataDir, 'facilitator.sqlite'));
    db.prepare('DELETE FROM meta WHERE key = ?').run(SIGNER_META);
    db.close();
    const secret = fs.readFileSync(path.join(dataDir, 'facilitator.secret'), 'utf8');
    fs.rmSync(path.join(dataDir, 'facilitator.secret'));
    await expect(createFacilitator({ config: config(dataDir) })).rejects.toThrow(
      `this store's receipts are signed by ${signer}`,
    );
    fs.writeFileSync(path.join(dataDir, 'facilitator.secret'), secret, { mode: 0o600 });
    const again = await createFacilitator({ config: config(dataDir) });
    expect(again.address).toBe(signer);
    expect(await again.store.getMeta(SIGNER_META)).toBe(signer);
    await again.close();
  }, 60_000);

  it('on PostgreSQL: instances with different keys on one database — one signs, the other is refused, even when both start at once', async ({
    skip,
  }) => {
    if (!(await pgEnabled())) return skip();
    const db = await createPgDatabase();
    const ledger = await startLedgerServer({ port: 0, dataDir: tmp(), ledgerSeconds: 1 });
    const on = (secret: string) =>
      createFacilitator({
        config: config(tmp(), { DATABASE_URL: db.url, LEDGER_URL: ledger.url, FACILITATOR_SECRET: secret }),
      });
    try {
      const [a, b] = [hexSecret(), hexSecret()];
      const started = await Promise.allSettled([on(a), on(b)]);
      const up = started.filter((s) => s.status === 'fulfilled');
      const refused = started.filter((s) => s.status === 'rejected');
      expect(up).toHaveLength(1);
      expect(refused).toHaveLength(1);
      const winner = up[0]!.value;
      expect(String(refused[0]!.reason)).toMatch(
        new RegExp(
          `FACILITATOR_SECRET is the key of G[A-Z2-7]{55}, but this store's receipts are signed by ${winner.address}`,
        ),
      );
      // Another instance with the signer's key joins.
      const same = await on(winner.address === addressOf(a) ? a : b);
      await same.close();
      await winner.close();
    } finally {
      await ledger.close();
      await db.drop();
    }
  }, 60_000);
});

describe('svc rotate-key: a new signer on purpose', () => {
  it('the new key signs, /supported lists the old signer after it so its receipts still verify (the sdk’s check included), and old seller tokens stop working', async () => {
    const dataDir = tmp();
    const h1 = await startHarness({ DATA_DIR: dataDir, DEMO: 'off' });
    const old = h1.f.address;
    const b = await h1.buyer();
    const paid = await h1.verify(b.signer.sign(5000n));
    const before = paid.body['receipt'] as Receipt;
    expect(before.signer).toBe(old);
    const oldToken = h1.sellerToken(b.payee);
    await h1.close();

    const rotated = await svcRun(['rotate-key'], { DATA_DIR: dataDir });
    expect(rotated.code, rotated.out).toBe(0);
    const fresh = /the receipt signer is now (G[A-Z2-7]{55})/.exec(rotated.out)?.[1];
    expect(fresh, rotated.out).toBeDefined();
    expect(fresh).not.toBe(old);
    expect(rotated.out).toContain(`retired   ${old}`);
    expect(fs.existsSync(path.join(dataDir, `facilitator.secret.${old}.retired`))).toBe(true);
    expect(rotated.out).not.toContain(fs.readFileSync(path.join(dataDir, 'facilitator.secret'), 'utf8').trim());

    const h2 = await startHarness({ DATA_DIR: dataDir, DEMO: 'off' });
    try {
      expect(h2.f.address).toBe(fresh);
      const s = await supported(h2.url);
      expect(s.signers).toEqual({ 'stellar:*': [fresh, old] });
      expect(s.kinds.map((k) => k.extra.receiptSigner)).toEqual([fresh, fresh, fresh]);
      // The receipt the retired key signed: still this facilitator's, and a buyer's check passes.
      expect(await (await fetch(`${h2.url}/receipts/${before.id}/verify`)).json()).toEqual({
        valid: true,
        reason: null,
        signer: old,
        signedByThisFacilitator: true,
      });
      expect(verifyReceipt(before, await facilitatorSigners(fetch, h2.url))).toEqual({ ok: true });
      // The channel goes on under the new signer.
      const terms = h2.requirements({ payTo: b.payee });
      b.signer.confirm(5000n);
      const next = await h2.verify(b.signer.next(5000n), terms);
      expect((next.body['receipt'] as Receipt).signer).toBe(fresh);
      b.signer.confirm(10_000n);
      // Seller tokens were HMACs of the old key: refused; a new one works.
      const withOld = await h2.verify(b.signer.next(5000n), terms, { authorization: `Bearer ${oldToken}` });
      expect(withOld.status).toBe(401);
      const withNew = await h2.verify(b.signer.next(5000n), terms, {
        authorization: `Bearer ${h2.sellerToken(b.payee)}`,
      });
      expect(withNew.body).toMatchObject({ isValid: true });
    } finally {
      await h2.close();
    }

    // A second rotation keeps both earlier signers.
    const again = await svcRun(['rotate-key'], { DATA_DIR: dataDir });
    expect(again.code, again.out).toBe(0);
    const third = /the receipt signer is now (G[A-Z2-7]{55})/.exec(again.out)![1]!;
    const h3 = await startHarness({ DATA_DIR: dataDir, DEMO: 'off' });
    try {
      expect((await supported(h3.url)).signers['stellar:*']).toEqual([third, old, fresh]);
    } finally {
      await h3.close();
    }
  }, 120_000);

  it('with FACILITATOR_SECRET: that key becomes the signer; the same key again is refused; the retired key is refused at start, saying it was retired', async () => {
    const dataDir = tmp();
    const [first, second] = [hexSecret(), hexSecret()];
    const f = await createFacilitator({ config: config(dataDir, { FACILITATOR_SECRET: first }) });
    await f.close();
    const rotated = await svcRun(['rotate-key'], { DATA_DIR: dataDir, FACILITATOR_SECRET: second });
    expect(rotated.code, rotated.out).toBe(0);
    expect(rotated.out).toContain(`the receipt signer is now ${addressOf(second)}`);
    expect(rotated.out).toContain(`retired   ${addressOf(first)}`);
    expect(rotated.out).not.toContain(second);
    const same = await svcRun(['rotate-key'], { DATA_DIR: dataDir, FACILITATOR_SECRET: second });
    expect(same.code, same.out).toBe(1);
    expect(same.out).toContain(
      `FACILITATOR_SECRET is the key of ${addressOf(second)}, which is already this store's signer`,
    );
    await expect(createFacilitator({ config: config(dataDir, { FACILITATOR_SECRET: first }) })).rejects.toThrow(
      new RegExp(`${addressOf(first)} was retired by a rotation at \\d{4}-`),
    );
    const now = await createFacilitator({ config: config(dataDir, { FACILITATOR_SECRET: second }) });
    expect(now.services.supported().signers).toEqual({ 'stellar:*': [addressOf(second), addressOf(first)] });
    await now.close();
  }, 60_000);

  it('a buyer that paid before the rotation pays on after it: the sdk reads /supported again for a signer it did not know', async () => {
    const dataDir = tmp();
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port) };
    const h1 = await startHarness(env);
    const b = await h1.buyer();
    const first = await payFetch(`${h1.url}/demo/book`, {}, { signer: b.signer });
    expect(first.status).toBe(200);
    const old = first.payment!.receipt.signer;
    await h1.close();
    expect((await svcRun(['rotate-key'], { DATA_DIR: dataDir })).code).toBe(0);
    const h2 = await startHarness(env);
    try {
      expect(h2.url).toBe(h1.url);
      const after = await payFetch(`${h2.url}/demo/book`, {}, { signer: b.signer });
      expect(after.status).toBe(200);
      expect(after.payment!.receipt.signer).not.toBe(old);
    } finally {
      await h2.close();
    }
  }, 60_000);

  it('refuses to rotate under a running facilitator on SQLite, naming it', async () => {
    const dataDir = tmp();
    const running = await createFacilitator({ config: config(dataDir) });
    const file = path.join(dataDir, 'facilitator.secret');
    const secret = fs.readFileSync(file, 'utf8');
    try {
      const out = await svcRun(['rotate-key'], { DATA_DIR: dataDir });
      expect(out.code, out.out).toBe(1);
      expect(out.out).toContain(`DATA_DIR ${dataDir} is in use by process ${process.pid}`);
      expect(fs.readFileSync(file, 'utf8')).toBe(secret);
      expect(fs.readdirSync(dataDir).filter((f) => f.endsWith('.retired'))).toEqual([]);
    } finally {
      await running.close();
    }
  }, 30_000);
});
