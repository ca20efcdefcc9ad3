// The bench's one HTTP client: keep-alive node:http, a fixed number of workers in flight, each
// paying its own channel in order (a worker sends its next voucher when the last one answered).
// Every path of `npm run bench` is driven by this same client, so their ratios compare like with
// like; the client shares the machine's cores with the server it drives.
import http from 'node:http';

export interface Call {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Run {
  requests: number;
  rate: number;
  p50: number;
  p99: number;
  /** The measured window, ms: from the end of the lead-in until the last answer. */
  elapsedMs: number;
  /** Every measured request's latency, ms, ascending. */
  latencies: number[];
  /** Answers other than `ok` (and transport errors), with the first one seen. */
  errors: number;
  firstError: string | null;
  /** BENCH_TRACE only: every measured request's start (ms into the window) and latency, in send order. */
  timeline?: { at: number[]; ms: number[] };
}

export interface DriveOptions {
  /** Seconds of load before the measured window, on the same sockets, its requests not counted. */
  leadIn?: number;
  /** Called as the measured window opens (after the lead-in): the caller's CPU snapshot. */
  onMeasureStart?: () => void;
  ok?: (status: number) => boolean;
}

export function send(
  agent: http.Agent,
  base: URL,
  call: Call,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...call.headers };
    if (call.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(call.body);
    }
    const req = http.request(
      { host: base.hostname, port: base.port, path: call.path, method: call.method, agent, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
      },
    );
    req.on('error', reject);
    req.end(call.body);
  });
}

/**
 * Runs `workers` loops against `base` for `leadIn` + `seconds`; worker i sends `next(i)` until the
 * time is up or `next` returns null (its channel is used up). Only requests sent after the lead-in
 * count: the measured window opens with every worker already in flight, not with 32 requests
 * arriving at once. Latency is per request, send to last byte.
 */
export async function drive(
  base: URL,
  workers: number,
  seconds: number,
  next: (worker: number) => Call | null,
  options: DriveOptions = {},
): Promise<Run> {
  const ok = options.ok ?? ((status: number) => status === 200);
  const agent = new http.Agent({ keepAlive: true, maxSockets: workers });
  const latencies: number[] = [];
  const pace = Number(process.env['BENCH_RATE'] ?? 0);
  const timeline = process.env['BENCH_TRACE'] ? { at: [] as number[], ms: [] as number[] } : undefined;
  let errors = 0;
  let firstError: string | null = null;
  const t = performance.now();
  let measuredFrom = Infinity;
  const open = () => {
    measuredFrom = performance.now();
    options.onMeasureStart?.();
  };
  const leadIn = (options.leadIn ?? 0) * 1000;
  const opening = leadIn > 0 ? setTimeout(open, leadIn) : (open(), undefined);
  const deadline = t + leadIn + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: workers }, async (_, i) => {
        for (let k = 0; performance.now() < deadline; k++) {
          // BENCH_RATE=<n>: worker i's k-th request waits for its slot, so the whole client sends
          // at most n requests a second (CPU per request compared at a load that leaves idle).
          if (pace > 0) {
            const slot = t + ((k * workers + i) * 1000) / pace;
            const wait = slot - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            if (performance.now() >= deadline) break;
          }
          const call = next(i);
          if (!call) break;
          const s = performance.now();
          try {
            const res = await send(agent, base, call);
            if (!ok(res.status)) {
              errors++;
              firstError ??= `${res.status} ${res.body.slice(0, 300)}`;
            }
          } catch (err) {
            errors++;
            firstError ??= String(err);
          }
          if (s < measuredFrom) continue;
          const took = performance.now() - s;
          latencies.push(took);
          timeline?.at.push(s - measuredFrom);
          timeline?.ms.push(took);
        }
      }),
    );
  } finally {
    clearTimeout(opening);
    agent.destroy();
  }
  // Every worker stopped (its channel used up) before the window opened: nothing was measured.
  const elapsed = measuredFrom === Infinity ? 0 : performance.now() - measuredFrom;
  return { ...summary(latencies, elapsed), errors, firstError, ...(timeline ? { timeline } : {}) };
}

/** Rate and percentiles of latencies (ms) measured over `elapsedMs`. */
export function summary(
  latencies: number[],
  elapsedMs: number,
): Pick<Run, 'requests' | 'rate' | 'p50' | 'p99' | 'elapsedMs' | 'latencies'> {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    rate: elapsedMs > 0 ? Math.round((sorted.length / elapsedMs) * 1000) : 0,
    p50: sorted[Math.floor(sorted.length * 0.5)] ?? 0,
    p99: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
    elapsedMs,
    latencies: sorted,
  };
}
