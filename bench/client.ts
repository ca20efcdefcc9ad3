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
  /** Answers other than `ok` (and transport errors), with the first one seen. */
  errors: number;
  firstError: string | null;
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
 * Runs `workers` loops for `seconds` against `base`; worker i sends `next(i)` until the time is
 * up or `next` returns null (its channel is used up). Latency is per request, send to last byte.
 */
export async function drive(
  base: URL,
  workers: number,
  seconds: number,
  next: (worker: number) => Call | null,
  ok = (status: number) => status === 200,
): Promise<Run> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: workers });
  const latencies: number[] = [];
  const pace = Number(process.env['BENCH_RATE'] ?? 0);
  let errors = 0;
  let firstError: string | null = null;
  const t = performance.now();
  const deadline = t + seconds * 1000;
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
          latencies.push(performance.now() - s);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  const elapsed = performance.now() - t;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rate: Math.round((latencies.length / elapsed) * 1000),
    p50: latencies[Math.floor(latencies.length * 0.5)] ?? 0,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    errors,
    firstError,
  };
}
