// The HTTP side of the fuzz suites: a keep-alive client with bounded concurrency, the property
// every answer must hold (docs/protocol.md#errors), the runner that prints one line per entry point, and
// the regression fixtures a failing case is appended to (replayed by replay.test.ts).
//
//   const result = await fuzzEntry(target, entry);   // fuzz POST /verify: 10000 cases, 0 server errors, …
//   expect(result.failures, result.report).toEqual([]);
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { REASON_STATUS, isReasonCode } from '@svc/core';

export const FIXTURES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const DEFAULT_RUNS = 10_000;
export const CONCURRENCY = 32;
const BATCH = 500;
const TIMEOUT_MS = 20_000;
/** Fixtures kept per failing entry point and run: enough to reproduce, not a flood. */
const MAX_RECORDED = 10;
/**
 * Statuses kept for transport-level refusals, always with code BAD_REQUEST: Fastify's (errors.ts),
 * and 431 from Node's parser for a request line and headers past 16 KiB (app.ts clientError).
 */
const TRANSPORT_STATUSES = new Set([405, 413, 414, 415, 431]);
const SOURCES = new Set(['gateway', 'facilitator', 'ledger']);
/** What a stack trace or an internal error leaves in a body. */
const LEAKS: readonly RegExp[] = [
  /\bat .*\.(?:ts|js|cjs|mjs):\d+/,
  /node_modules/,
  /\b[A-Z][A-Za-z]*Error: /,
  /^Error: /,
];

/** One request exactly as sent: a body is UTF-8 text, or base64 when its bytes are not UTF-8. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  bodyBase64?: string;
}

export interface FuzzAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** An event stream, left after its headers. */
  stream: boolean;
}

export interface Entry {
  /** `POST /verify`: the route as declared. */
  name: string;
  arb: fc.Arbitrary<FuzzRequest>;
  /** /mcp answers transport refusals with a JSON-RPC error object (its documented 4xx). */
  jsonRpc?: boolean;
}

export interface Target {
  base: URL;
  agent: http.Agent;
  /** Harness values that differ per run, replaced by `{{name}}` in fixtures. */
  vars: Record<string, string>;
}

export interface Failure {
  request: FuzzRequest;
  problems: string[];
}

export interface EntryResult {
  cases: number;
  serverErrors: number;
  failures: Failure[];
  seconds: number;
  seed: number;
  line: string;
}

export function fuzzRuns(): number {
  const runs = Number(process.env['FUZZ_RUNS'] ?? DEFAULT_RUNS);
  return Number.isSafeInteger(runs) && runs > 0 ? runs : DEFAULT_RUNS;
}

/** The seed of an entry point: FUZZ_SEED if given, else a fixed one derived from its name. */
export function seedOf(name: string): number {
  const given = process.env['FUZZ_SEED'];
  if (given !== undefined && /^-?[0-9]+$/.test(given)) return Number(given) | 0;
  let h = 0x2545f491;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x5bd1e995) | 0;
  return h;
}

export function slugOf(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

export function newTarget(url: string, vars: Record<string, string>): Target {
  return { base: new URL(url), agent: new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }), vars };
}

/** Sends one request over the keep-alive agent; an event stream is left once its headers arrived. */
export function send(target: Target, req: FuzzRequest): Promise<FuzzAnswer> {
  const body =
    req.bodyBase64 !== undefined
      ? Buffer.from(req.bodyBase64, 'base64')
      : req.body !== undefined
        ? Buffer.from(req.body, 'utf8')
        : undefined;
  const headers: Record<string, string> = { ...req.headers };
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        agent: target.agent,
        host: target.base.hostname,
        port: target.base.port,
        method: req.method,
        path: req.path,
        headers,
        timeout: TIMEOUT_MS,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status, headers: res.headers, body: '', stream: true });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), stream: false }),
        );
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    r.on('error', reject);
    r.end(body);
  });
}

/**
 * The property: never 5xx; a non-2xx is JSON with the §6 error body and its table status (a metered
 * resource's rejected payment: 402); no leak.
 */
export function problemsOf(req: FuzzRequest, ans: FuzzAnswer, entry: Pick<Entry, 'jsonRpc'> = {}): string[] {
  const problems: string[] = [];
  if (ans.status >= 500) problems.push(`server error ${ans.status}`);
  if (ans.status < 200) problems.push(`status ${ans.status}`);
  const json = String(ans.headers['content-type'] ?? '').startsWith('application/json');
  let parsed: unknown;
  if (json) {
    try {
      parsed = JSON.parse(ans.body);
    } catch {
      problems.push('a JSON content type with a body that is not JSON');
    }
  }
  if (ans.status >= 300) {
    if (!json) problems.push(`a ${ans.status} that is not JSON (content-type ${String(ans.headers['content-type'])})`);
    else if (!(entry.jsonRpc && isJsonRpcError(parsed))) problems.push(...errorBodyProblems(parsed, ans));
  }
  problems.push(...leaksOf(req, ans, parsed));
  return problems;
}

function errorBodyProblems(body: unknown, ans: FuzzAnswer): string[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return ['the error body is not an object'];
  const b = body as Record<string, unknown>;
  const problems: string[] = [];
  if (!isReasonCode(b['error'])) problems.push(`error ${JSON.stringify(b['error'])} is not a reason code`);
  if (typeof b['source'] !== 'string' || !SOURCES.has(b['source']))
    problems.push(`source ${JSON.stringify(b['source'])} is not gateway|facilitator|ledger`);
  if (typeof b['message'] !== 'string' || b['message'] === '') problems.push('message is not a non-empty string');
  if (b['tx'] !== undefined && typeof b['tx'] !== 'string') problems.push('tx is not a string');
  if (isReasonCode(b['error'])) {
    const expected = REASON_STATUS[b['error']];
    const transport = TRANSPORT_STATUSES.has(ans.status) && b['error'] === 'BAD_REQUEST';
    // A metered resource answers a payment it rejects with 402, the reason code and its terms again
    // (the spec's seller-side behaviour), whatever status that code has at the facilitator.
    const rejectedPayment = ans.status === 402 && b['source'] === 'gateway' && Array.isArray(b['accepts']);
    if (ans.status !== expected && !transport && !rejectedPayment)
      problems.push(`status ${ans.status} for ${b['error']} (the table says ${expected})`);
    if (b['error'] === 'RATE_LIMITED' && !/^[1-9][0-9]*$/.test(String(ans.headers['retry-after'] ?? '')))
      problems.push('RATE_LIMITED without Retry-After in whole seconds');
  }
  return problems;
}

function isJsonRpcError(body: unknown): boolean {
  const b = body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } } | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    b.jsonrpc === '2.0' &&
    typeof b.error?.code === 'number' &&
    typeof b.error.message === 'string'
  );
}

/** Stack traces, file paths and error prefixes; text the request itself carried (an echo) does not count. */
function leaksOf(req: FuzzRequest, ans: FuzzAnswer, parsed: unknown): string[] {
  const texts = parsed === undefined ? [ans.body] : stringsOf(parsed);
  const sent = requestText(req);
  const found: string[] = [];
  for (const leak of LEAKS) {
    if (leak.test(sent)) continue;
    const hit = texts.find((t) => leak.test(t));
    if (hit !== undefined) found.push(`the body leaks ${leak.source}: ${JSON.stringify(hit.slice(0, 200))}`);
  }
  return found;
}

function stringsOf(value: unknown, out: string[] = [], depth = 0): string[] {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'object' && value !== null && depth < 64) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out, depth + 1);
    }
  }
  return out;
}

function requestText(req: FuzzRequest): string {
  let decodedPath = req.path;
  try {
    decodedPath = decodeURIComponent(req.path);
  } catch {
    // a malformed escape: the raw path is what was sent
  }
  return [req.path, decodedPath, req.body ?? '', ...Object.values(req.headers)].join('\n');
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Sends `runs` generated requests (batches of fc.sample from the entry's seed) and checks each answer. */
export async function fuzzEntry(
  target: Target,
  entry: Entry,
  runs = fuzzRuns(),
  seed = seedOf(entry.name),
): Promise<EntryResult> {
  const started = performance.now();
  const failures: Failure[] = [];
  let serverErrors = 0;
  let cases = 0;
  for (let batch = 0; cases < runs; batch++) {
    const requests = fc.sample(entry.arb, { seed: (seed + batch * 7919) | 0, numRuns: Math.min(BATCH, runs - cases) });
    await pool(requests, CONCURRENCY, async (request) => {
      const problems = await send(target, request).then(
        (ans) => problemsOf(request, ans, entry),
        (err: unknown) => [`no answer: ${(err as Error).message}`],
      );
      if (problems.some((p) => p.startsWith('server error') || p.startsWith('no answer'))) serverErrors++;
      if (problems.length > 0) failures.push({ request, problems });
    });
    cases += requests.length;
  }
  const seconds = (performance.now() - started) / 1000;
  const line = `fuzz ${entry.name}: ${cases} cases, ${serverErrors} server errors, ${failures.length} failing, ${seconds.toFixed(1)} s (seed ${seed})`;
  console.log(line);
  return { cases, serverErrors, failures, seconds, seed, line };
}

// ---- regression fixtures ---------------------------------------------------------------------

export interface FixtureCase extends FuzzRequest {
  /** Why the case is kept: the problems it showed, or what a hand-written case probes. */
  note: string;
  seed?: number;
}

export interface FixtureFile {
  entry: string;
  cases: FixtureCase[];
}

export function fixturePath(name: string): string {
  return path.join(FIXTURES_DIR, `${slugOf(name)}.json`);
}

/** Appends failing requests to the entry's fixture file (harness values as `{{name}}`); returns its path. */
export function recordFailures(target: Target, name: string, seed: number, failures: readonly Failure[]): string {
  const file = fixturePath(name);
  const existing: FixtureFile = fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, 'utf8')) as FixtureFile)
    : { entry: name, cases: [] };
  const seen = new Set(existing.cases.map((c) => JSON.stringify([c.method, c.path, c.headers, c.body, c.bodyBase64])));
  for (const f of failures.slice(0, MAX_RECORDED)) {
    const c: FixtureCase = { note: f.problems.join('; ').slice(0, 500), seed, ...templated(f.request, target.vars) };
    const key = JSON.stringify([c.method, c.path, c.headers, c.body, c.bodyBase64]);
    if (!seen.has(key)) existing.cases.push(c);
    seen.add(key);
  }
  fs.mkdirSync(FIXTURES_DIR, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(existing, null, 2)}\n`);
  return file;
}

/** Every fixture file of the directory. */
export function loadFixtures(dir = FIXTURES_DIR): { file: string; fixture: FixtureFile }[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({
      file: path.join(dir, f),
      fixture: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as FixtureFile,
    }));
}

/** A fixture case with this run's harness values put back in. */
export function instantiate(c: FixtureCase, vars: Record<string, string>): FuzzRequest {
  const fill = (s: string) => s.replace(/\{\{([A-Za-z0-9_]+)\}\}/g, (m, name: string) => vars[name] ?? m);
  const headers = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k, fill(v)]));
  return {
    method: c.method,
    path: fill(c.path),
    headers,
    ...(c.body !== undefined ? { body: fill(c.body) } : {}),
    ...(c.bodyBase64 !== undefined ? { bodyBase64: c.bodyBase64 } : {}),
  };
}

function templated(req: FuzzRequest, vars: Record<string, string>): FuzzRequest {
  // Only distinctive values (addresses, hashes): a short one like a channel id would match anywhere.
  const known = Object.entries(vars).filter(([, v]) => v.length >= 16);
  const swap = (s: string) => known.reduce((acc, [name, v]) => acc.split(v).join(`{{${name}}}`), s);
  return {
    method: req.method,
    path: swap(req.path),
    headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, swap(v)])),
    ...(req.body !== undefined ? { body: swap(req.body) } : {}),
    ...(req.bodyBase64 !== undefined ? { bodyBase64: req.bodyBase64 } : {}),
  };
}

/** GET /health answers 200 `ok`: the server survived. */
export async function healthy(target: Target): Promise<boolean> {
  const ans = await send(target, { method: 'GET', path: '/health', headers: {} }).catch(() => null);
  return ans?.status === 200 && (JSON.parse(ans.body) as { status?: unknown }).status === 'ok';
}
