// Holds a web Response (Hono) while a `batch-settlement` payment is settled: its body is read until
// it is complete (or passes MAX_HELD_BYTES: then the charge asked for by then, or the price, is
// settled and the rest streams through), the charge is settled (hold.ts), and the answer is the
// same status, headers and body with its PAYMENT-RESPONSE — or the meter's 402/503 when the settle
// is refused. It imports no Node module (the Hono binding runs on workers).
import type { GateSettled } from './gate-outcome.js';
import type { Hold } from './gate-outcome.js';
import { MAX_HELD_BYTES, failedStatus } from './payment.js';

/** The answer to send for `res`, the handler's, once `hold` is settled; `failed`: the handler threw. */
export async function holdWebResponse(
  res: Response,
  hold: Hold,
  failed: boolean,
  limit = MAX_HELD_BYTES,
): Promise<{ response: Response; attest: Extract<GateSettled, { kind: 'settled' }>['attest'] }> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let complete = true;
  let broken = failed;
  const reader = res.body?.getReader() ?? null;
  if (reader && !broken) {
    try {
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        chunks.push(next.value);
        bytes += next.value.byteLength;
        if (bytes > limit) {
          complete = false;
          break;
        }
      }
    } catch {
      // A body that failed part way was never an answer: charged nothing.
      broken = true;
    }
  }
  const settled = await hold.finish(broken || failedStatus(res.status));
  if (settled.kind === 'respond') {
    void reader?.cancel().catch(() => undefined);
    const headers = new Headers(settled.headers);
    for (const [name, value] of Object.entries(hold.headers)) headers.set(name, value);
    return { response: new Response(JSON.stringify(settled.body), { status: settled.status, headers }), attest: null };
  }
  const headers = new Headers(res.headers);
  for (const [name, value] of Object.entries({ ...hold.headers, ...settled.headers })) headers.set(name, value);
  const init = { status: res.status, statusText: res.statusText, headers };
  if (broken) {
    void reader?.cancel().catch(() => undefined);
    return { response: new Response(null, { ...init, status: 500 }), attest: null };
  }
  if (!reader) return { response: new Response(null, init), attest: settled.attest };
  const body: BodyInit = complete ? concat(chunks, bytes) : resumed(chunks, reader);
  return { response: new Response(body, init), attest: settled.attest };
}

function concat(chunks: Uint8Array[], bytes: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(new ArrayBuffer(bytes));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** The chunks read so far, then the rest of the body. */
function resumed(chunks: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i < chunks.length) {
        controller.enqueue(chunks[i++]);
        return;
      }
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
