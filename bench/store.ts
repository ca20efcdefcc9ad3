// Store write throughput: accepted vouchers per second (compare-and-set advance + receipt + event,
// one write() each) with many in flight, so group commit has something to group. Then the SQLite
// writer's own CPU per voucher by batch size: what one more or one less voucher in a group commit
// costs (bench/PROFILE.md, "What bounds POST /verify"); and the pages a voucher's write puts in
// the WAL, by B-tree (what the writer's CPU and the disk's writes are made of).
//
//   node scripts/launch.cjs bench/store.ts [postgres://postgres@127.0.0.1:5432/postgres]
//
// SQLite runs in a temp file (WAL, synchronous = FULL); PostgreSQL in a throwaway database that
// is dropped afterwards (skipped when no server answers). Receipts are signed before the clock
// starts: this measures the store, not ed25519.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { fromHex, keypairFromSeed, signReceipt } from '@svc/core';
import { PostgresStore, SqliteStore } from '../packages/facilitator/src/store/index.js';
import { SqliteWriter, openConnection } from '../packages/facilitator/src/store/sqlite/sqlite-writer.js';
import { paddedId } from '../packages/facilitator/src/store/op-checks.js';
import type { ChannelRecord, Store, WriteOp } from '../packages/facilitator/src/store/index.js';

const CHANNELS = 512;
const IN_FLIGHT = 256;
const VOUCHERS = 30_000;
const STEP = 5_000n;
const PG_URL = process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const signer = keypairFromSeed(fromHex('11'.repeat(32), 32));
const party = keypairFromSeed(fromHex('22'.repeat(32), 32)).address;
const at = new Date(Date.UTC(2026, 0, 1)).toISOString();

function channel(id: bigint): ChannelRecord {
  return {
    id,
    network: 'stellar:local',
    channelContract: 'C',
    payer: party,
    payee: party,
    asset: 'A',
    voucherKey: 'ab'.repeat(32),
    deposit: 10n ** 30n,
    claimed: 0n,
    lastAccepted: 0n,
    lastSignature: null,
    charged: 0n,
    receiverAuthorizer: null,
    refundNonce: 0,
    reservation: null,
    expiryLedger: 1_000_000,
    status: 'open',
    vouchers: 0,
    vouchersClaimed: 0,
    openedAt: at,
    lastVoucherAt: null,
    closedAt: null,
    refunded: null,
    createdAt: at,
  };
}

/** The receipt of a voucher from `payer` to `party` that adds one STEP on channel `id`. */
function stepReceipt(id: bigint, payer: string, cumulative: bigint, requestHash: string | null, ts: string) {
  return signReceipt(signer, {
    v: 1,
    network: 'stellar:local',
    signer: signer.address,
    channelId: id.toString(),
    payer,
    payee: party,
    resource: 'https://seller.example/api',
    method: 'GET',
    unit: 'request',
    amount: STEP.toString(),
    cumulative: cumulative.toString(),
    requestHash,
    ts,
  });
}

/** Per channel, the ops of its vouchers in order (each expects the previous one's cumulative). */
function buildVouchers(): WriteOp[][][] {
  const perChannel: WriteOp[][][] = Array.from({ length: CHANNELS }, () => []);
  for (let n = 0; n < VOUCHERS; n++) {
    const list = perChannel[n % CHANNELS]!;
    const id = BigInt((n % CHANNELS) + 1);
    const expected = BigInt(list.length) * STEP;
    const cumulative = expected + STEP;
    const receipt = stepReceipt(id, party, cumulative, null, at);
    list.push([
      { op: 'channel.advance', channelId: id, expected, cumulative, signature: receipt.signature, at },
      { op: 'receipt', receipt },
      {
        op: 'event',
        event: {
          type: 'voucher.accepted',
          source: 'facilitator',
          ts: at,
          channelId: id,
          accounts: [party, party],
          data: { receiptId: receipt.id },
        },
      },
    ]);
  }
  return perChannel;
}

async function run(name: string, store: Store, vouchers: WriteOp[][][]): Promise<void> {
  await store.write(vouchers.map((_, i): WriteOp => ({ op: 'channel.insert', channel: channel(BigInt(i + 1)) })));
  let next = 0;
  const queue = vouchers.flatMap((list, ch) => list.map((ops, i) => ({ ch, i, ops })));
  queue.sort((a, b) => a.i - b.i || a.ch - b.ch);
  const lastDone = new Array<number>(CHANNELS).fill(-1);
  // Each worker takes the next voucher whose predecessor on its channel has committed.
  const worker = async (): Promise<void> => {
    while (next < queue.length) {
      const item = queue[next++]!;
      while (lastDone[item.ch]! < item.i - 1) await new Promise((r) => setImmediate(r));
      const out = await store.write(item.ops);
      if (!out.ok) throw new Error(`unexpected ${out.reason}`);
      lastDone[item.ch] = item.i;
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(
    `${name}: ${VOUCHERS} vouchers in ${seconds.toFixed(2)} s = ${Math.round(VOUCHERS / seconds).toLocaleString('en')} vouchers/s (${IN_FLIGHT} in flight)`,
  );
}

async function benchSqlite(vouchers: WriteOp[][][]): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const store = await SqliteStore.open({ file: path.join(dir, 'facilitator.sqlite') });
  try {
    await store.migrate();
    await run('sqlite (WAL, synchronous=FULL, group commit)', store, vouchers);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function benchPostgres(vouchers: WriteOp[][][]): Promise<void> {
  const admin = postgres(PG_URL, { max: 1, connect_timeout: 2, onnotice: () => undefined });
  const name = `svc_bench_${randomBytes(5).toString('hex')}`;
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } catch (error) {
    console.warn(`postgres: skipped (${(error as Error).message})`);
    await admin.end({ timeout: 0 });
    return;
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const store = await PostgresStore.open({ url: url.toString() });
  try {
    await store.migrate();
    await run('postgres (group commit, one instance)', store, vouchers);
  } finally {
    await store.close();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  }
}

const WRITER_CHANNELS = 32;

/** A writer on a fresh file with `channels` channels, and the /verify call of each next voucher, round robin. */
function writerWithChannels(
  dir: string,
  channels = WRITER_CHANNELS,
): { writer: SqliteWriter; file: string; call: () => WriteOp[] } {
  // A payer per channel: the seed's first four bytes are the channel's number (a filled byte would
  // repeat after 255 channels).
  const payers = Array.from({ length: channels }, (_, i) => {
    const seed = new Uint8Array(32).fill(7);
    new DataView(seed.buffer).setUint32(0, i + 1);
    return keypairFromSeed(seed).address;
  });
  const file = path.join(dir, 'facilitator.sqlite');
  const writer = new SqliteWriter({ file, busyTimeoutMs: 5_000 });
  writer.migrate();
  writer.commitBatch(
    payers.map((payer, i): WriteOp[] => [{ op: 'channel.insert', channel: { ...channel(BigInt(i + 1)), payer } }]),
  );
  const last = new Array<bigint>(channels).fill(0n);
  let n = 0;
  const call = (): WriteOp[] => {
    const i = n++ % channels;
    const id = BigInt(i + 1);
    const expected = last[i]!;
    const cumulative = expected + STEP;
    last[i] = cumulative;
    const ts = new Date().toISOString();
    const receipt = stepReceipt(id, payers[i]!, cumulative, randomBytes(32).toString('hex'), ts);
    return [
      { op: 'channel.advance', channelId: id, expected, cumulative, signature: receipt.signature, at: ts },
      { op: 'receipt', receipt },
      {
        op: 'event',
        event: {
          type: 'voucher.accepted',
          source: 'facilitator',
          ts,
          channelId: id,
          accounts: [payers[i]!, party],
          data: { channelId: receipt.channelId, cumulative: receipt.cumulative, receiptId: receipt.id },
        },
      },
      {
        op: 'idempotency',
        key: `verify:${Date.now().toString(16).padStart(12, '0')}${randomBytes(16).toString('hex')}`,
        fingerprint: randomBytes(32).toString('hex'),
        response: JSON.stringify({ receiptId: receipt.id, remaining: '1000', latencyMs: 1 }),
        at: ts,
      },
    ];
  };
  return { writer, file, call };
}

function batchesOf(call: () => WriteOp[], size: number, count: number): WriteOp[][][] {
  return Array.from({ length: Math.ceil(count / size) }, () => Array.from({ length: size }, call));
}

function commitAll(writer: SqliteWriter, batches: readonly WriteOp[][][]): void {
  for (const batch of batches)
    if (!writer.commitBatch(batch).every((o) => 'result' in o && o.result.ok)) throw new Error('a voucher failed');
}

/**
 * The writer thread's work for one batch, on this thread: BEGIN IMMEDIATE, the calls, COMMIT (the
 * WAL's fsync). Each call is the one /verify makes for a voucher with an Idempotency-Key (advance,
 * receipt, event for payer and payee, idempotency record), over 32 channels as in `npm run bench`.
 */
function writerCpuByBatch(batchSizes: readonly number[]): void {
  console.log(
    `\nthe SQLite writer alone, CPU per voucher by batch size (${WRITER_CHANNELS} channels, 20,000 vouchers measured):`,
  );
  for (const size of batchSizes) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
    const { writer, call } = writerWithChannels(dir);
    try {
      commitAll(writer, batchesOf(call, size, 5_000));
      const measured = batchesOf(call, size, 20_000);
      const vouchers = measured.length * size;
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      commitAll(writer, measured);
      const wallUs = Number(process.hrtime.bigint() - start) / 1e3 / vouchers;
      const used = process.cpuUsage(cpu);
      const us = (t: number) => (t / vouchers).toFixed(0);
      console.log(
        `  batch ${String(size).padStart(3)}: ${us(used.user + used.system)} µs CPU per voucher (user ${us(used.user)}, system ${us(used.system)}), ${wallUs.toFixed(0)} µs wall`,
      );
    } finally {
      writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

/**
 * What a voucher's write puts in the WAL: after 20,000 vouchers, the WAL is emptied, 100 batches of
 * `size` are committed, and each WAL frame (one page written) is named by the B-tree its page
 * belongs to (SQLite's dbstat table, read before the batches; pages the batches added are "new").
 */
function walPagesByTree(size: number, channels: number): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const { writer, file, call } = writerWithChannels(dir, channels);
  const reader = new Database(file);
  try {
    commitAll(writer, batchesOf(call, size, 20_000));
    reader.pragma('wal_checkpoint(TRUNCATE)');
    const tree = new Map<number, string>();
    for (const row of reader.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[])
      tree.set(row.pageno, row.name);
    const batches = 100;
    commitAll(writer, batchesOf(call, size, batches * size));
    const wal = fs.readFileSync(`${file}-wal`);
    const pageSize = wal.readUInt32BE(8); // the WAL header (32 bytes), then frames of a 24-byte header and a page
    const frames = new Map<string, number>();
    let total = 0;
    for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
      const name = tree.get(wal.readUInt32BE(at)) ?? 'new pages';
      frames.set(name, (frames.get(name) ?? 0) + 1);
      total++;
    }
    const per = (n: number) => (n / (batches * size)).toFixed(2);
    console.log(
      `\nWAL pages written per voucher, batches of ${size} over ${channels} channels: ${per(total)} pages of ${pageSize} bytes, by B-tree:`,
    );
    for (const [name, n] of [...frames].sort((a, b) => b[1] - a[1])) console.log(`  ${name.padEnd(34)} ${per(n)}`);
  } finally {
    reader.close();
    writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What an append-only journal would save the writer (bench/PROFILE.md, "Fifth stop"): a sketch,
 * not the store's code. Each batch of `size` vouchers commits only the channels' compare-and-set
 * and one journal row per voucher (its other ops as JSON); every `apply` vouchers, one transaction
 * writes the journaled ops into the real tables and deletes their journal rows. Against the store's
 * own writer at the same batch size, over `channels` channels: the two take turns, five rounds of
 * 6,144 vouchers each (a whole number of applies), and each one's median round is printed.
 */
function journalSketch(size: number, apply: number, channels: number): void {
  const ROUND = 6_144;
  const plainDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const plain = writerWithChannels(plainDir, channels);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const { writer, file, call } = writerWithChannels(dir, channels);
  const hot = openConnection({ file, busyTimeoutMs: 5_000 });
  try {
    hot.exec('CREATE TABLE journal (seq INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT');
    const advance = hot.prepare(`UPDATE channels SET last_accepted = ?, last_signature = ?, vouchers = vouchers + 1,
      last_voucher_at = ? WHERE id = ? AND last_accepted = ? AND status = 'open'`);
    const append = hot.prepare('INSERT INTO journal (body) VALUES (?)');
    const begin = hot.prepare('BEGIN IMMEDIATE');
    const commit = hot.prepare('COMMIT');
    const drop = hot.prepare('DELETE FROM journal WHERE seq <= ?');
    const text = (_: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
    let pending: WriteOp[][] = [];
    let last = 0;
    const applyMs: number[] = [];
    const journaled = (batches: readonly WriteOp[][][]) => {
      for (const batch of batches) {
        begin.run();
        for (const [first, ...rest] of batch) {
          const a = first as Extract<WriteOp, { op: 'channel.advance' }>;
          const moved = advance.run(
            a.cumulative.toString(),
            a.signature,
            a.at,
            paddedId(a.channelId),
            a.expected.toString(),
          );
          if (moved.changes !== 1) throw new Error('a voucher failed');
          last = Number(append.run(JSON.stringify(rest, text)).lastInsertRowid);
          pending.push(rest);
        }
        commit.run();
        if (pending.length < apply) continue;
        // The sketch applies the ops it still holds (the store would parse them back) and deletes
        // the journal rows in a second transaction (the store would use the same one).
        const started = process.hrtime.bigint();
        if (!writer.commitBatch(pending).every((o) => 'result' in o && o.result.ok)) throw new Error('an apply failed');
        drop.run(last);
        applyMs.push(Number(process.hrtime.bigint() - started) / 1e6);
        pending = [];
      }
    };
    const cpuOf = (run: (batches: readonly WriteOp[][][]) => void, next: () => WriteOp[]): number => {
      const batches = batchesOf(next, size, ROUND);
      const cpu = process.cpuUsage();
      run(batches);
      const used = process.cpuUsage(cpu);
      return (used.user + used.system) / ROUND;
    };
    const plainRun = (batches: readonly WriteOp[][][]) => commitAll(plain.writer, batches);
    cpuOf(plainRun, plain.call);
    cpuOf(journaled, call);
    const mine: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < 5; round++) {
      theirs.push(cpuOf(plainRun, plain.call));
      mine.push(cpuOf(journaled, call));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const [us, store] = [median(mine), median(theirs)];
    console.log(
      `  batches of ${size}, applied ${String(apply).padStart(4)} at a time, ${String(channels).padStart(4)} channels: ${us.toFixed(0)} µs per voucher, against ${store.toFixed(0)} µs for the store's writer (${us < store ? '' : '+'}${((us / store - 1) * 100).toFixed(0)} %); each apply holds the write lock ${median(applyMs).toFixed(0)} ms`,
    );
  } finally {
    hot.close();
    writer.close();
    plain.writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(plainDir, { recursive: true, force: true });
  }
}

await benchSqlite(buildVouchers());
await benchPostgres(buildVouchers());
writerCpuByBatch([1, 8, 32, 256]);
walPagesByTree(8, WRITER_CHANNELS);
walPagesByTree(8, 256); // more channels than a batch holds vouchers, as in production
console.log(
  "\nan append-only journal (a sketch): the writer's CPU per voucher, the hot commit plus its share of the apply:",
);
for (const [apply, channels] of [
  [256, 32],
  [2048, 32],
  [2048, 4096],
] as const)
  journalSketch(8, apply, channels);
