// The main-thread side of the writer thread: requests out, replies in, by id. The thread keeps
// the process alive only while a request is outstanding.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../worker.js';
import type { CallOutcome } from '../group-commit.js';
import type { WriteOp } from '../port.js';
import type { ConnectionOptions } from './sqlite-writer.js';

export type WriterRequest =
  | { id: number; type: 'batch'; calls: readonly (readonly WriteOp[])[] }
  | { id: number; type: 'migrate' }
  | { id: number; type: 'close' };

/** Omit distributed over the union's members. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export type WriterReply =
  { id: number; ok: true; outcomes?: CallOutcome[] } | { id: number; ok: false; error: SerializedError };

export interface SerializedError {
  name: string;
  message: string;
  code?: string;
}

export function serializeError(error: unknown): SerializedError {
  const e = error as { name?: unknown; message?: unknown; code?: unknown };
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(error),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
  };
}

export function reviveError(s: SerializedError): Error {
  const error = new Error(s.message) as Error & { code?: string };
  error.name = s.name;
  if (s.code !== undefined) error.code = s.code;
  return error;
}

const ENTRY = new URL('./sqlite-writer-thread', import.meta.url);

export class WriterThread {
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve(reply: WriterReply & { ok: true }): void; reject(error: Error): void }
  >();
  #nextId = 1;
  #dead: Error | null = null;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (reply: WriterReply) => this.#settle(reply));
    worker.on('error', (error) => this.#die(error));
    worker.on('exit', (code) => this.#die(new Error(`the SQLite writer thread exited (${code})`)));
    worker.unref();
  }

  static start(options: ConnectionOptions): Promise<WriterThread> {
    const worker = startWorker(ENTRY, options);
    return new Promise((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      worker.once('error', fail);
      worker.once('message', (reply: WriterReply) => {
        worker.off('error', fail);
        if (reply.ok) resolve(new WriterThread(worker));
        else reject(reviveError(reply.error));
      });
    });
  }

  batch(calls: readonly (readonly WriteOp[])[]): Promise<CallOutcome[]> {
    return this.#request({ type: 'batch', calls }).then((reply) =>
      (reply.outcomes ?? []).map((o) => ('error' in o ? { error: reviveError(o.error as SerializedError) } : o)),
    );
  }

  migrate(): Promise<void> {
    return this.#request({ type: 'migrate' }).then(() => undefined);
  }

  async close(): Promise<void> {
    if (this.#dead) return;
    await this.#request({ type: 'close' });
    await this.#worker.terminate();
  }

  #request(body: WithoutId<WriterRequest>): Promise<WriterReply & { ok: true }> {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...body, id });
    });
  }

  #settle(reply: WriterReply): void {
    const waiter = this.#pending.get(reply.id);
    if (!waiter) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (reply.ok) waiter.resolve(reply);
    else waiter.reject(reviveError(reply.error));
  }

  #die(error: Error): void {
    this.#dead ??= error;
    for (const waiter of this.#pending.values()) waiter.reject(this.#dead);
    this.#pending.clear();
  }
}
