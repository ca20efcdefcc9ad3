// The cluster survives its database: two `svc start` processes on one PostgreSQL server
// of this test's own, one standalone ledger, RATE_LIMIT_STORE=postgres, 16 buyers paying through
// both instances, and the claim scheduler claiming every second, while the database is restarted,
// has every connection terminated, and crashes. What must hold:
// - no instance exits, and nothing answers but 200 or 503 with Retry-After (never a 500, never a
//   dropped connection);
// - each instance accepts vouchers again within RECOVERY_BOUND_MS of the database answering;
// - nothing acknowledged is lost; afterwards, for the seller, earned = settled + receivable, settled
//   equals what the ledger paid in claims (every claim recorded once, also those in flight at the
//   fault), and both instances report the same.
// - SIGTERM stops an instance even while the database is gone.
// The recovery figures are printed.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { randomKeypair } from '@svc/core';
import { startLedgerServer } from '@svc/ledger';
import type { LedgerServer } from '@svc/ledger';
import { LocalLedgerClient } from '@svc/sdk';
import { openChannel } from '../helpers/open-channel.js';
import { inCi } from '../helpers/pg.js';
import { postgresBinDir, startPrivatePostgres } from '../helpers/private-pg.js';
import type { PrivatePg } from '../helpers/private-pg.js';
import { startChild } from '../helpers/process.js';
import { until } from '../helpers/until.js';
import type { Child } from '../helpers/process.js';

const enabled = inCi() || postgresBinDir() !== null;
const BUYERS = 16;
const PRICE = 1000n;
/** From the database answering again to an instance accepting vouchers again. */
const RECOVERY_BOUND_MS = 5_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  at: number;
  instance: number;
  status: number | 'network';
  accepted: boolean;
  retryAfter: string | null;
  reason?: string;
}

describe.runIf(enabled)('two instances while their PostgreSQL restarts, loses its connections and crashes', () => {
  let pg: PrivatePg;
  let ledger: LedgerServer;
  const dirs: string[] = [];
  const children: Child[] = [];

  afterAll(async () => {
    for (const c of children) await c.kill('SIGKILL').catch(() => undefined);
    await ledger?.close();
    pg?.destroy();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('keeps every instance up, answers 503 with Retry-After meanwhile, recovers within the bound, and the books agree with the ledger', async () => {
    const dir = () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-dbfault-'));
      dirs.push(d);
      return d;
    };
    pg = await startPrivatePostgres();
    ledger = await startLedgerServer({ port: 0, dataDir: dir(), ledgerSeconds: 1 });
    const env = {
      DATABASE_URL: pg.url,
      LEDGER_URL: ledger.url,
      RATE_LIMIT_STORE: 'postgres',
      FACILITATOR_SECRET: randomBytes(32).toString('hex'),
      CLAIM_INTERVAL_SECONDS: '1',
      CLAIM_THRESHOLD: '1',
      PG_LOCK_TIMEOUT_MS: '2000',
      CHANNEL_VOUCHER_LIMIT_PER_MINUTE: '100000',
      IP_RATE_LIMIT_PER_MINUTE: '0',
      DEMO: 'off',
    };
    const instances = [await startChild({ ...env, DATA_DIR: dir() }), await startChild({ ...env, DATA_DIR: dir() })];
    children.push(...instances);

    const client = new LocalLedgerClient(ledger.url);
    const info = await client.info();
    const payee = randomKeypair().address;
    const terms = {
      scheme: 'channel',
      network: info.network,
      asset: info.contracts.asset,
      payTo: payee,
      amount: PRICE.toString(),
      unit: 'request',
      maxTimeoutSeconds: 60,
      extra: {
        channelContract: info.contracts.channel,
        minDeposit: '5000000',
        facilitator: 'http://127.0.0.1',
        areFeesSponsored: true,
      },
    };
    const buyers = await Promise.all(
      Array.from({ length: BUYERS }, async () => {
        const { channelId, signer } = await openChannel(client, { payee, deposit: 50_000_000n });
        return { channelId, signer, acknowledged: 0n };
      }),
    );

    const samples: Sample[] = [];
    let stop = false;
    const workers = buyers.map(async (buyer, w) => {
      let next = 1n;
      let turn = w;
      while (!stop) {
        const instance = turn++ % 2;
        const cumulative = next * PRICE;
        const body = JSON.stringify({
          x402Version: 2,
          paymentPayload: { x402Version: 2, accepted: terms, payload: buyer.signer.sign(cumulative) },
          paymentRequirements: terms,
        });
        let sample: Sample;
        try {
          const res = await fetch(`${instances[instance]!.url}/verify`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          const answer = (await res.json()) as { isValid?: boolean; invalidReason?: string; error?: string };
          sample = {
            at: Date.now(),
            instance,
            status: res.status,
            accepted: res.status === 200 && answer.isValid === true,
            retryAfter: res.headers.get('retry-after'),
            reason: answer.invalidReason ?? answer.error ?? '',
          };
          if (sample.accepted) {
            buyer.acknowledged = cumulative;
            next++;
          } else if (answer.invalidReason === 'VOUCHER_NOT_INCREASING') {
            next++; // an earlier attempt that answered 503 had committed after all: the next voucher
          }
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause;
          sample = {
            at: Date.now(),
            instance,
            status: 'network',
            accepted: false,
            retryAfter: null,
            reason: `${(err as Error).message} ${cause?.code ?? cause?.message ?? ''}`.trim(),
          };
        }
        samples.push(sample);
        if (!sample.accepted) await sleep(100);
      }
    });

    const accepted = (instance: number, from: number, to: number) =>
      samples.filter((s) => s.instance === instance && s.accepted && s.at >= from && s.at < to).length;
    const firstAcceptance = (instance: number, after: number) =>
      samples.find((s) => s.instance === instance && s.accepted && s.at >= after)?.at ?? null;
    const report: string[] = [];
    /** Recovery of each instance after the database answers again at `back`: first voucher, and back to half the normal rate over 500 ms. */
    const recovery = async (label: string, back: number, normal: number[]) => {
      await sleep(RECOVERY_BOUND_MS);
      const firsts = [0, 1].map((i) => firstAcceptance(i, back));
      const rates = [0, 1].map((i) => {
        for (let t = back; t < back + RECOVERY_BOUND_MS; t += 100)
          if (accepted(i, t, t + 500) * 2 >= normal[i]! * 0.5) return t + 500 - back;
        return null;
      });
      const failed = samples.filter(
        (s) =>
          !s.accepted &&
          s.reason !== 'VOUCHER_NOT_INCREASING' &&
          s.at >= back - 10_000 &&
          s.at < back + RECOVERY_BOUND_MS,
      ).length;
      report.push(
        `${label}: first voucher accepted ${firsts.map((f) => (f === null ? 'never' : `${f - back} ms`)).join(' / ')} after the database answered; half the normal rate after ${rates.map((r) => (r === null ? 'never' : `${r} ms`)).join(' / ')}; ${failed} requests refused around the fault`,
      );
      for (const f of firsts)
        expect(f, `${label}: an instance accepted nothing within ${RECOVERY_BOUND_MS} ms`).not.toBeNull();
    };

    await sleep(4000);
    const t = Date.now();
    const normal = [0, 1].map((i) => accepted(i, t - 3000, t) / 6); // per 500 ms
    report.push(`normal rate: ${normal.map((n) => Math.round(n * 2)).join(' / ')} vouchers/s per instance`);
    expect(Math.min(...normal)).toBeGreaterThan(0);

    // 1. Restart: the server ends every session and is away for 3 s.
    pg.stop('fast');
    await sleep(3000);
    pg.start();
    await recovery('restart (away 3 s)', Date.now(), normal);

    // 2. Every connection of both instances terminated under load.
    const admin = postgres(pg.url, { max: 1, onnotice: () => undefined });
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`;
    await admin.end({ timeout: 1 });
    await recovery('connections terminated', Date.now(), normal);

    // 3. A crash (immediate shutdown: no goodbye to the sessions), away 2 s.
    pg.stop('immediate');
    await sleep(2000);
    pg.start();
    await recovery('crash (away 2 s)', Date.now(), normal);

    stop = true;
    await Promise.all(workers);
    console.log(
      `database faults under load (${samples.length} requests, ${samples.filter((s) => s.accepted).length} accepted):\n  ${report.join('\n  ')}`,
    );

    // Nothing but 200 and 503 with Retry-After, and both processes still up.
    expect(
      samples.filter((s) => s.status !== 200 && s.status !== 503).map((s) => `${s.status} ${s.reason ?? ''}`),
    ).toEqual([]);
    expect(samples.filter((s) => s.status === 503 && !/^[1-9][0-9]*$/.test(s.retryAfter ?? ''))).toEqual([]);
    expect(
      samples
        .filter((s) => s.status === 200 && !s.accepted && s.reason !== 'VOUCHER_NOT_INCREASING')
        .map((s) => s.reason),
    ).toEqual([]);
    for (const c of instances) expect(c.proc.exitCode, c.output()).toBeNull();

    // Every instance healthy again; the scheduler claims everything (threshold 1, every second).
    for (const c of instances) await until(async () => (await fetch(`${c.url}/health`)).status === 200, 15_000);
    const stored = async (channelId: bigint) =>
      (await (await fetch(`${instances[0]!.url}/channels/${channelId}`)).json()) as {
        lastAccepted: string;
        claimed: string;
      };
    await until(async () => {
      for (const b of buyers) {
        const [onLedger, here] = await Promise.all([client.channel(b.channelId), stored(b.channelId)]);
        if (onLedger?.claimed !== here.lastAccepted) return false;
      }
      return true;
    }, 30_000);

    let earned = 0n;
    let paid = 0n;
    for (const b of buyers) {
      const here = await stored(b.channelId);
      expect(BigInt(here.lastAccepted)).toBeGreaterThanOrEqual(b.acknowledged); // nothing acknowledged lost
      earned += BigInt(here.lastAccepted);
      paid += BigInt((await client.channel(b.channelId))!.claimed);
    }
    const totals = await Promise.all(
      instances.map(async (c) => {
        await until(
          async () =>
            ((await (await fetch(`${c.url}/sellers/${payee}/revenue`)).json()) as { totals: { settled: string } })
              .totals.settled === paid.toString(),
          15_000,
        ).catch(() => undefined);
        return (
          (await (await fetch(`${c.url}/sellers/${payee}/revenue`)).json()) as {
            totals: Record<string, string | number | null>;
          }
        ).totals;
      }),
    );
    expect(totals[0]).toEqual(totals[1]);
    expect(totals[0]).toMatchObject({
      earned: earned.toString(),
      settled: paid.toString(),
      receivable: (earned - paid).toString(),
    });
    expect(BigInt(totals[0]!['earned'] as string)).toBe(
      BigInt(totals[0]!['settled'] as string) + BigInt(totals[0]!['receivable'] as string),
    );
    console.log(
      `afterwards: earned ${earned}, settled ${paid} = claimed on the ledger, ${totals[0]!['settlements']} settlements, the same on both instances`,
    );

    // SIGTERM while the database is gone: the instance still stops, within its shutdown limit.
    pg.stop('immediate');
    const signalled = Date.now();
    await instances[1]!.kill('SIGTERM');
    const stoppedMs = Date.now() - signalled;
    console.log(`SIGTERM with the database gone: exited after ${stoppedMs} ms`);
    expect(stoppedMs).toBeLessThan(12_000);
  }, 240_000);
});
