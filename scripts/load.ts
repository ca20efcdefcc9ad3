// npm run load — many buyers pay many sellers through POST /verify for a fixed time, then
// everything is claimed and money conservation is checked across the client, the facilitator and
// the ledger. Prints accepted, rejected (by reason), 429s, other 4xx, 5xx, network errors,
// throughput and p50/p99 latency, a progress line every few seconds, the settlement efficiency
// (vouchers per on-chain claim: the claim scheduler's own, the final forced claims', overall), and
// PASS or FAIL.
//
//   npm run load                                   # its own facilitator (svc start, temp DATA_DIR)
//   LOAD_SECONDS=10 LOAD_RATE=0 npm run load       # short, as fast as it goes
//   LOAD_URL=http://127.0.0.1:4031,http://127.0.0.1:4032 npm run load   # running instances, one ledger
//   LOAD_COMPARE=1 LOAD_URL=…,… npm run load        # the first instance alone, then all: throughput and p99 side by side
//
// Exit code 0 only with no 5xx, no bad voucher accepted, no good voucher refused (but for a used-up
// deposit) and money conserved (scripts/load/check.ts); 1 otherwise; 2 for bad options; 130 on SIGINT.
// The settlement efficiency is printed against its goal (≥ 200 vouchers per claim) but does not
// decide the exit code: it depends on the run's shape (a 10 s run never reaches a scheduler pass),
// while the check is about correctness.
import os from 'node:os';
import { checkConservation } from './load/check.js';
import { drive } from './load/driver.js';
import { describeEfficiency, settlementEfficiency } from './load/efficiency.js';
import { JsonClient } from './load/http.js';
import { describeOptions, loadOptions } from './load/options.js';
import type { LoadOptions } from './load/options.js';
import { Reader, agree, claimAll, resolveUnsure } from './load/settle.js';
import { prepare } from './load/setup.js';
import { Tally, ms } from './load/tally.js';
import { external, ownChild } from './load/target.js';
import type { Target } from './load/target.js';

const OUTPUT_TAIL_LINES = 40;

let target: Target | null = null;
let interrupted = false;
let exiting = false;

/** Stops the child (if any) once, then exits. */
async function shutdown(code: number, keepData = false): Promise<never> {
  if (!exiting) {
    exiting = true;
    await target
      ?.stop(keepData)
      .catch((err: unknown) => console.error(`could not stop the facilitator: ${String(err)}`));
  }
  process.exit(code);
}

/** The child's last lines, for a failed run; empty without a child or output. */
function outputTail(): string {
  const text = target?.output().trimEnd() ?? '';
  return text ? `\nlast output of the facilitator:\n${text.split('\n').slice(-OUTPUT_TAIL_LINES).join('\n')}` : '';
}

process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  console.log('\ninterrupted: stopping the facilitator (Ctrl-C again to quit at once)');
  void shutdown(130);
});
process.on('SIGTERM', () => void shutdown(143));
process.on('unhandledRejection', (err) => {
  console.error('unhandled rejection:', err);
  void shutdown(1, true);
});

async function run(o: LoadOptions): Promise<string[]> {
  console.log(`svc load test — ${os.availableParallelism()} cores, Node ${process.version}`);
  for (const line of describeOptions()) console.log(line);
  target = o.urls.length > 0 ? external(o.urls, o.ledgerUrl) : await ownChild();
  for (const line of target.describe) console.log(line);
  const client = new JsonClient(o.timeoutMs, o.concurrency + 16);
  const market = await prepare(target, o, client);
  console.log(
    `\nload: ${o.buyers} buyers → ${o.sellers} sellers, ${o.concurrency} in flight, ${o.rate > 0 ? `${o.rate} req/s` : 'as fast as possible'}, ${(o.bad * 100).toFixed(1)} % bad, ${o.seconds} s`,
  );
  // LOAD_COMPARE=1 with several URLs: the same load against the first instance alone, then all.
  const phases = o.compare ? [target.urls.slice(0, 1), target.urls] : [target.urls];
  const runs: { urls: string[]; tally: Tally; elapsed: number }[] = [];
  for (const urls of phases) {
    if (o.compare)
      console.log(
        `\nphase ${runs.length + 1}: ${urls.length} instance${urls.length > 1 ? 's' : ''} (${urls.join(', ')})`,
      );
    const tally = new Tally();
    const elapsed = await drive({
      verifyUrls: urls.map((u) => new URL(`${u}/verify`)),
      client,
      buyers: market.buyers,
      signing: market.signing,
      tally,
      concurrency: o.concurrency,
      rate: o.rate,
      bad: o.bad,
      seconds: o.seconds,
      progressSeconds: o.progressSeconds,
      aborted: () => interrupted,
    });
    await resolveUnsure(new Reader(client, target.urls, market.ledger), market.buyers, tally);
    runs.push({ urls, tally, elapsed });
    if (interrupted) break;
  }
  const reader = new Reader(client, target.urls, market.ledger);
  for (const r of runs) {
    console.log(o.compare ? `\nresults, ${r.urls.length} instance${r.urls.length > 1 ? 's' : ''}` : '\nresults');
    for (const line of r.tally.report(r.elapsed)) console.log(line);
  }
  if (o.compare) {
    console.log('\ncomparison (same buyers, same rate target, one after the other)');
    console.log('  instances   req/s   accepted/s   p50        p99        5xx');
    for (const r of runs) {
      const secs = r.elapsed / 1000;
      const l = r.tally.latency;
      console.log(
        `  ${String(r.urls.length).padEnd(11)} ${String(Math.round(r.tally.requests / secs)).padEnd(7)} ${String(Math.round(r.tally.accepted / secs)).padEnd(12)} ${ms(l.quantile(0.5)).padEnd(10)} ${ms(l.quantile(0.99)).padEnd(10)} ${r.tally.server5xx.total}`,
      );
    }
  }

  console.log('\nsettlement');
  const deadline = performance.now() + o.settleSeconds * 1000;
  const claims = await claimAll(reader, market.buyers, deadline);
  console.log(
    `  final claims: ${claims.claimed} channels, ${claims.amount} base units, ${claims.vouchers} vouchers (${claims.outcomes.toString()})`,
  );
  const { snapshot, waitedMs } = await agree(reader, market.buyers, deadline);
  console.log(`  facilitator and ledger compared after ${(waitedMs / 1000).toFixed(1)} s`);
  const verdict = await checkConservation(reader, market.sellers, market.buyers, snapshot);
  for (const line of verdict.lines) console.log(line);
  const efficiency = await settlementEfficiency(reader, market.sellers, claims);
  client.close();
  for (const line of describeEfficiency(efficiency, market.price)) console.log(line);

  const failures = [...verdict.failures];
  for (const { tally } of runs) {
    if (tally.server5xx.total > 0)
      failures.push(`5xx answers: ${tally.server5xx.total} (${tally.server5xx.toString()})`);
    if (tally.badAccepted.total > 0) failures.push(`bad vouchers accepted: ${tally.badAccepted.toString()}`);
    const refused = tally.goodRefused.total - (tally.goodRefused.get('CHANNEL_EXHAUSTED') ?? 0);
    if (refused > 0) failures.push(`good vouchers refused: ${tally.goodRefused.toString()}`);
    if (tally.oddAnswers > 0) failures.push(`answers that are not a verify answer: ${tally.oddAnswers}`);
    if (tally.network.total > 0)
      console.log(`\nwarning: ${tally.network.total} requests got no answer (${tally.network.toString()})`);
    if (tally.badOtherwise.total > 0)
      console.log(`warning: bad vouchers refused with another code than expected: ${tally.badOtherwise.toString()}`);
  }
  const crashed = target.crashed();
  if (crashed) failures.push(crashed);
  return failures;
}

let options: LoadOptions;
try {
  options = loadOptions();
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
try {
  const failures = await run(options);
  if (interrupted) await shutdown(130);
  console.log(
    failures.length === 0
      ? '\nPASS: no 5xx, every bad voucher refused, money conserved'
      : `\nFAIL:\n${failures.map((f) => `  - ${f}`).join('\n')}`,
  );
  if (failures.length > 0) console.log(outputTail());
  await shutdown(failures.length === 0 ? 0 : 1, options.keepData || failures.length > 0);
} catch (err) {
  if (interrupted) await shutdown(130);
  console.error(`\nFAIL: ${(err as Error).stack ?? String(err)}`);
  console.error(outputTail());
  await shutdown(1, true);
}
