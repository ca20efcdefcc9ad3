// The local ledger on a full disk (before, the faucet and /ledger/tx answered 500): a write it
// cannot make is a fault of the moment, answered 503 LEDGER_UNAVAILABLE with Retry-After, and the
// ledger works again once there is room. The disk is a real one: a small tmpfs, filled up. Mounting
// needs root (CI has it); elsewhere this skips LOUDLY, and fails under CI=true.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomKeypair, signLedgerTx } from '@svc/core';
import { startLedgerServer } from '../src/index.js';
import type { LedgerServer } from '../src/index.js';

const inCi = !['', '0', 'false', undefined].includes(process.env['CI']?.toLowerCase());
const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-full-disk-'));

function mountTmpfs(): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    return true;
  } catch {
    if (inCi) throw new Error(`CI: could not mount a tmpfs at ${mountPoint} (the full-disk test needs root)`);
    console.warn(
      `\n${'#'.repeat(78)}\n#  FULL-DISK TEST SKIPPED: mounting a tmpfs needs root. With CI=true it fails instead.\n${'#'.repeat(78)}\n`,
    );
    return false;
  }
}

/** Fills the disk but for `leave` bytes, in a file that can be removed to make room again. */
function fill(leave: number): string {
  const file = path.join(mountPoint, 'filler');
  const { bavail, bsize } = fs.statfsSync(mountPoint);
  fs.writeFileSync(file, Buffer.alloc(Math.max(0, bavail * bsize - leave)));
  // tmpfs rounds to pages: top it up until it refuses.
  try {
    for (;;) fs.appendFileSync(file, Buffer.alloc(4096));
  } catch {
    // full
  }
  return file;
}

const mounted = mountTmpfs();

describe.runIf(mounted)('the local ledger on a full disk', () => {
  let server: LedgerServer;
  beforeAll(async () => {
    server = await startLedgerServer({
      port: 0,
      dataDir: path.join(mountPoint, 'ledger'),
      ledgerSeconds: 1,
      logger: false,
    });
  });
  afterAll(async () => {
    await server?.close();
    execFileSync('umount', [mountPoint]);
    fs.rmSync(mountPoint, { recursive: true, force: true });
  });

  const post = (route: string, body: unknown) =>
    fetch(`${server.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers 503 with Retry-After while it cannot write, never 500, and works again once there is room', async () => {
    const funded = randomKeypair();
    expect((await post('/faucet', { address: funded.address })).status).toBe(200);
    const passphrase = ((await (await fetch(`${server.url}/info`)).json()) as { passphrase: string }).passphrase;
    const filler = fill(0);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const faucet = await post('/faucet', { address: randomKeypair().address });
      const tx = await post(
        '/tx',
        signLedgerTx(funded, passphrase, {
          source: funded.address,
          seq: 1,
          op: 'transfer',
          args: { to: randomKeypair().address, amount: '1' },
        }),
      );
      for (const res of [faucet, tx]) {
        statuses.push(res.status);
        if (res.status === 503) {
          expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
          expect(await res.json()).toMatchObject({ error: 'LEDGER_UNAVAILABLE', source: 'ledger' });
        } else {
          await res.body?.cancel();
        }
      }
    }
    expect(statuses).not.toContain(500);
    expect(statuses).toContain(503);
    // Room again: the ledger takes transactions, and the refused ones left nothing behind.
    fs.rmSync(filler);
    const after = await post(
      '/tx',
      signLedgerTx(funded, passphrase, {
        source: funded.address,
        seq: 1,
        op: 'transfer',
        args: { to: randomKeypair().address, amount: '1' },
      }),
    );
    expect(await after.json()).toMatchObject({ status: 'SUCCESS' });
    expect((await post('/faucet', { address: randomKeypair().address })).status).toBe(200);
  });
});
