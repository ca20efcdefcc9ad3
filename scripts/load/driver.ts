// Drives the load: LOAD_CONCURRENCY workers, paced to LOAD_RATE, each taking an idle buyer (never
// two requests of one channel in flight), sending one POST /verify to the next facilitator
// (round-robin), and reading the answer into the buyer's books and the tally.
import type { JsonClient, Reply } from './http.js';
import { errorCode, field } from './http.js';
import { accepted, buildRequest } from './market.js';
import type { Buyer, Request, Signing } from './market.js';
import { EXPECTED } from './tally.js';
import type { Tally, VoucherKind } from './tally.js';

const BAD_KINDS = ['forged', 'stale', 'payee'] as const;
const IDLE_POLL_MS = 25;

export interface DriveOptions {
  verifyUrls: URL[];
  client: JsonClient;
  buyers: Buyer[];
  signing: Signing;
  tally: Tally;
  concurrency: number;
  rate: number;
  bad: number;
  seconds: number;
  progressSeconds: number;
  /** True once the run must stop early (SIGINT). */
  aborted(): boolean;
}

export async function drive(o: DriveOptions): Promise<number> {
  const started = performance.now();
  const end = started + o.seconds * 1000;
  const stop = () => o.aborted() || performance.now() >= end;
  const idle = new IdleBuyers(o.buyers);
  const pace = pacer(o.rate);
  let turn = 0;
  const progress = setInterval(() => console.log(o.tally.progress()), o.progressSeconds * 1000);
  const worker = async () => {
    for (;;) {
      await pace();
      const buyer = stop() ? null : await idle.take(stop);
      if (!buyer) return;
      const url = o.verifyUrls[turn++ % o.verifyUrls.length]!;
      await once(o, url, buyer);
      if (buyer.retired === null) idle.put(buyer);
    }
  };
  try {
    await Promise.all(Array.from({ length: o.concurrency }, worker));
  } finally {
    clearInterval(progress);
  }
  return performance.now() - started;
}

/** Sends one voucher from `b` and books the answer; never throws. */
async function once(o: DriveOptions, url: URL, b: Buyer): Promise<void> {
  const kind: VoucherKind =
    b.unsure || Math.random() >= o.bad ? 'good' : BAD_KINDS[Math.floor(Math.random() * BAD_KINDS.length)]!;
  const req = buildRequest(b, kind, o.signing);
  if (kind !== 'good') o.tally.badSent.add(kind);
  o.tally.requests++;
  const t = performance.now();
  let reply: Reply;
  try {
    reply = await o.client.request('POST', url, req.payload, { 'idempotency-key': req.key });
  } catch (err) {
    o.tally.network.add(networkKind(err));
    if (kind === 'good') b.unsure = true;
    return;
  }
  o.tally.answered(performance.now() - t);
  book(o.tally, b, req, reply);
}

function book(tally: Tally, b: Buyer, req: Request, reply: Reply): void {
  if (reply.status === 200) return verdict(tally, b, req, reply.body);
  if (reply.status === 429) {
    tally.tooMany++;
    b.notBefore = performance.now() + 1000 * Math.max(1, Number(reply.retryAfter) || 1);
    return;
  }
  const what = `${reply.status} ${errorCode(reply)}`;
  if (reply.status >= 500) {
    tally.server5xx.add(what);
    if (req.kind === 'good') b.unsure = true;
  } else {
    tally.client4xx.add(what);
  }
}

function verdict(tally: Tally, b: Buyer, req: Request, body: unknown): void {
  const isValid = field(body, 'isValid');
  if (isValid === true) {
    tally.accepted++;
    if (req.kind !== 'good') {
      tally.badAccepted.add(req.kind);
      b.retired = `a ${req.kind} voucher was accepted`;
    } else if (field(field(field(body, 'extra'), 'receipt'), 'cumulative') !== req.cumulative.toString()) {
      tally.oddAnswers++;
      b.retired = 'the receipt names another cumulative';
    } else {
      accepted(b, req.cumulative);
    }
    return;
  }
  const code = field(body, 'invalidReason');
  if (isValid !== false || typeof code !== 'string') {
    tally.oddAnswers++;
    if (req.kind === 'good') b.unsure = true;
    return;
  }
  tally.rejected.add(code);
  if (req.kind === 'good') {
    tally.goodRefused.add(code);
    // The facilitator and this buyer disagree about the channel (or its deposit is used up).
    b.retired = code;
    b.unsure = false;
  } else if (code === EXPECTED[req.kind]) {
    tally.badAsExpected.add(req.kind);
  } else {
    tally.badOtherwise.add(`${req.kind}→${code}`);
  }
}

function networkKind(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string') return e.code;
  return typeof e.message === 'string' && e.message.startsWith('timeout') ? 'timeout' : 'error';
}

/** Start times spaced 1/rate apart (rate 0: no spacing); a late worker does not earn a burst. */
function pacer(rate: number): () => Promise<void> {
  if (rate <= 0) return () => Promise.resolve();
  const gap = 1000 / rate;
  let next = performance.now();
  return () => {
    const now = performance.now();
    const at = Math.max(now, next);
    next = at + gap;
    return at - now < 1 ? Promise.resolve() : sleep(at - now);
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Buyers with no request in flight, oldest first; a buyer told to wait (429) is skipped until then. */
class IdleBuyers {
  private queue: Buyer[];
  private head = 0;
  private readonly wake = new Set<() => void>();

  constructor(buyers: Buyer[]) {
    this.queue = [...buyers];
  }

  async take(stop: () => boolean): Promise<Buyer | null> {
    while (!stop()) {
      const b = this.ready();
      if (b) return b;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.wake.delete(done);
          resolve();
        };
        const timer = setTimeout(done, IDLE_POLL_MS);
        this.wake.add(done);
      });
    }
    return null;
  }

  put(b: Buyer): void {
    this.queue.push(b);
    const first = this.wake.values().next();
    if (!first.done) first.value();
  }

  private ready(): Buyer | null {
    const now = performance.now();
    for (let n = this.queue.length - this.head; n > 0; n--) {
      const b = this.queue[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      if (b.notBefore <= now) return b;
      this.queue.push(b);
    }
    return null;
  }
}
