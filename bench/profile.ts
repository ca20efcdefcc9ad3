// Summarises the CPU profiles `BENCH_PROFILE=<dir> npm run bench` leaves in <dir>: for each
// measured path, the microseconds of CPU per paid request by stage, per thread of the server.
//
//   node scripts/launch.cjs bench/profile.ts <dir>
//
// A sample belongs to the stage of the first frame, from the leaf up, that a rule below names;
// "(idle)" is time the thread waited. Timestamps of V8's profiles and of process.hrtime are both
// CLOCK_MONOTONIC, so only samples inside a path's measured windows (its slices) count.
import fs from 'node:fs';
import path from 'node:path';

interface Frame {
  functionName: string;
  url: string;
}
interface Node {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}
interface Window {
  path: string;
  pid: number;
  start: number;
  end: number;
  requests: number;
}

/** Stages, tried in order on each frame from the leaf up; the first match names the sample. */
const RULES: [stage: string, test: (f: Frame) => boolean][] = [
  ['idle (waiting)', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  [
    'ed25519 + sha256 (node:crypto)',
    (f) => /internal\/crypto|@noble|\/core\/dist\/(ed25519|crypto-node|voucher)/.test(f.url),
  ],
  ['SQLite (better-sqlite3, store)', (f) => /better-sqlite3|\/store\//.test(f.url)],
  ['zod (validation)', (f) => /\/zod\//.test(f.url)],
  ['JSON parse/stringify', (f) => /^JSON\.|^(parse|stringify)$/.test(f.functionName) && f.url === ''],
  ['meter → facilitator fetch (undici)', (f) => /undici|internal\/deps\/undici|internal\/webstreams/.test(f.url)],
  ['@svc/meter', (f) => /\/meter\/dist\//.test(f.url)],
  ['helmet, cors, rate limits', (f) => /helmet|@fastify\/cors|rate-limit|\/limits\//.test(f.url)],
  [
    'fastify (routing, hooks, reply)',
    (f) => /fastify|find-my-way|avvio|light-my-request|fast-json-stringify/.test(f.url),
  ],
  ['svc domain (verifier, receipts, events)', (f) => /facilitator\/dist\/(domain|bus)\//.test(f.url)],
  ['svc http layer', (f) => /facilitator\/dist\/(http|composition)\//.test(f.url)],
  ['@svc/core (other)', (f) => /\/core\/dist\//.test(f.url)],
  ['pino (logging)', (f) => /pino/.test(f.url)],
  [
    'node:http, net, streams',
    (f) => /node:_http|node:net|node:internal\/(http|streams|stream_base|net)|_http_|node:stream/.test(f.url),
  ],
  ['ceiling server', (f) => /ceiling-server/.test(f.url)],
  ['V8, native, other', () => true],
];

function stageOf(stack: Frame[]): string {
  for (const frame of stack)
    for (const [stage, test] of RULES) if (test(frame) && stage !== 'V8, native, other') return stage;
  return 'V8, native, other';
}

const TOP = process.argv.includes('--top') ? 4 : 0;
const where = (f: Frame) =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/packages\//, '')}`;

function summarise(profile: Profile, slices: Window[], top: Map<string, Map<string, number>>): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageCache = new Map<number, string>();
  const stageOfNode = (id: number): string => {
    let stage = stageCache.get(id);
    if (stage === undefined) {
      const stack: Frame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
      stage = stageOf(stack);
      stageCache.set(id, stage);
    }
    return stage;
  };
  const totals = new Map<string, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    // A sample stands for the interval up to the next one.
    const span = profile.timeDeltas[i + 1] ?? 0;
    if (!slices.some((w) => t >= w.start && t <= w.end)) continue;
    const stage = stageOfNode(profile.samples[i]!);
    totals.set(stage, (totals.get(stage) ?? 0) + span);
    if (TOP) {
      const leaf = where(byId.get(profile.samples[i]!)!.callFrame);
      const fns = top.get(stage) ?? new Map<string, number>();
      fns.set(leaf, (fns.get(leaf) ?? 0) + span);
      top.set(stage, fns);
    }
  }
  return totals;
}

const dir = process.argv.slice(2).find((a) => !a.startsWith('--'));
if (!dir) {
  console.error('usage: node scripts/launch.cjs bench/profile.ts <dir of BENCH_PROFILE=<dir> npm run bench>');
  process.exit(2);
}
const windows = JSON.parse(fs.readFileSync(path.join(dir, 'windows.json'), 'utf8')) as Window[];
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
// A path is measured in slices (bench/run.ts, BENCH_SLICES): its windows are summed.
const paths = new Map<string, Window[]>();
for (const w of windows) paths.set(w.path, [...(paths.get(w.path) ?? []), w]);
for (const [name, slices] of paths) {
  const w = {
    pid: slices[0]!.pid,
    requests: slices.reduce((a, x) => a + x.requests, 0),
    seconds: slices.reduce((a, x) => a + (x.end - x.start) / 1e6, 0),
  };
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
  const mine = files.filter((f) => f.split('.')[3] === String(w.pid)).sort();
  console.log(
    `\n${name}: ${w.requests.toLocaleString('en-US')} paid requests in ${w.seconds.toFixed(1)} s (${slices.length} slices)`,
  );
  for (const file of mine) {
    const thread = file.split('.')[4] === '0' ? 'main thread' : `worker thread ${file.split('.')[4]}`;
    const top = new Map<string, Map<string, number>>();
    const totals = summarise(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Profile, slices, top);
    const all = [...totals.values()].reduce((a, b) => a + b, 0);
    if (all === 0) continue;
    const busy = all - (totals.get('idle (waiting)') ?? 0);
    console.log(
      `  ${thread}: ${(busy / w.requests).toFixed(0)} µs of CPU per paid request (${((busy / all) * 100).toFixed(0)} % busy)`,
    );
    console.log(`  | stage | µs per request | share of busy |`);
    console.log(`  |---|---:|---:|`);
    for (const [stage, us] of [...totals].sort((a, b) => b[1] - a[1])) {
      if (stage === 'idle (waiting)') continue;
      console.log(`  | ${stage} | ${(us / w.requests).toFixed(1)} | ${((us / busy) * 100).toFixed(1)} % |`);
      for (const [fn, t] of [...(top.get(stage) ?? [])].sort((a, b) => b[1] - a[1]).slice(0, TOP))
        console.log(`  |   ${fn} | ${(t / w.requests).toFixed(1)} | |`);
    }
    console.log(`  | idle (waiting) | ${((totals.get('idle (waiting)') ?? 0) / w.requests).toFixed(1)} | — |`);
  }
}
