// Entry of the writer thread: a SqliteWriter driven by messages from WriterThread. Errors cross
// the thread boundary as { name, message, code } (structured clone drops an Error's extra fields).
import { parentPort, workerData } from 'node:worker_threads';
import type { CallOutcome } from '../group-commit.js';
import { SqliteWriter } from './sqlite-writer.js';
import type { ConnectionOptions } from './sqlite-writer.js';
import type { WriterReply, WriterRequest } from './writer-thread.js';
import { serializeError } from './writer-thread.js';

const port = parentPort;
if (!port) throw new Error('sqlite-writer-thread.ts runs as a worker thread');

let writer: SqliteWriter;
try {
  writer = new SqliteWriter(workerData as ConnectionOptions);
  port.postMessage({ id: 0, ok: true } satisfies WriterReply);
} catch (error) {
  port.postMessage({ id: 0, ok: false, error: serializeError(error) } satisfies WriterReply);
  process.exit(1);
}

port.on('message', (request: WriterRequest) => {
  let reply: WriterReply;
  try {
    if (request.type === 'batch') {
      const outcomes = writer
        .commitBatch(request.calls)
        .map((o): CallOutcome => ('error' in o ? { error: serializeError(o.error) } : o));
      reply = { id: request.id, ok: true, outcomes };
    } else if (request.type === 'migrate') {
      writer.migrate();
      reply = { id: request.id, ok: true };
    } else {
      writer.close();
      reply = { id: request.id, ok: true };
    }
  } catch (error) {
    reply = { id: request.id, ok: false, error: serializeError(error) };
  }
  port.postMessage(reply);
  if (request.type === 'close') port.close();
});
