// The one client of the local ledger's HTTP routes (docs/protocol.md#the-local-ledger), for
// @svc/ledger's HttpLedger (the Ledger port by URL) and @svc/sdk's LocalLedgerClient (a buyer's
// operations). Replies are parsed with the wire schemas (ledger-wire.ts, ledger-pool-wire.ts);
// transactions of one source go one at a time, each signed for the sequence number the ledger
// reports, so two never take the same one.
//
//   const ledger = new LedgerHttpClient({ url: 'http://127.0.0.1:4021/ledger' });
//   const { latestLedger } = await ledger.info();
//   await ledger.submitAs(keys.address, keys, 'transfer', { to, amount: '5000' });
//
// No answer, or a success that does not parse, is LedgerUnavailable; any other answer that is not
// the one asked for is LedgerError with its status and the ledger's error body. A submit that got
// no answer may still have been applied: look it up with tx(txHash(…)).
import type { z } from 'zod';
import { ErrorBodySchema } from './api.js';
import type { ErrorBody } from './codes.js';
import { globalFetch } from './fetch.js';
import type { Keypair } from './keys.js';
import { LedgerUnavailable } from './ledger-errors.js';
import { PoolStateSchema } from './ledger-pool-wire.js';
import type { PoolState } from './ledger-pool-wire.js';
import {
  LedgerAccountSchema,
  LedgerChannelSchema,
  LedgerEventsPageSchema,
  LedgerInfoSchema,
  LedgerTxResultSchema,
} from './ledger-wire.js';
import type { EventsPage, LedgerAccount, LedgerChannel, LedgerInfo, TxResult } from './ledger-wire.js';
import { safeParse } from './safe-parse.js';
import { signLedgerTx } from './tx.js';
import type { SignedLedgerTx } from './tx.js';

export const DEFAULT_LEDGER_TIMEOUT_MS = 15_000;

/**
 * The ledger answered, and not with what was asked: `status` is the HTTP status (200 for a
 * transaction recorded as FAILED, with the contract's `code`), `body` the ledger's error body.
 */
export class LedgerError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: number,
    readonly tx?: string,
    readonly answer: { body?: ErrorBody; retryAfter?: string } = {},
  ) {
    super(message);
    this.name = 'LedgerError';
  }
}

export interface LedgerHttpClientOptions {
  /** Base URL of the routes, prefix included: `http://127.0.0.1:4021/ledger`. */
  url: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /**
   * How often a transaction refused outright (400) is signed again for a freshly read sequence
   * number: another client may have taken the one read first.
   */
  seqRetries?: number;
}

interface Reply {
  status: number;
  body: unknown;
  headers: Headers;
}

export class LedgerHttpClient {
  readonly url: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #seqRetries: number;
  #info: LedgerInfo | null = null;
  /** The last submission per source: the next one waits for it. */
  readonly #tails = new Map<string, Promise<unknown>>();

  constructor(options: LedgerHttpClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? globalFetch;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_LEDGER_TIMEOUT_MS;
    this.#seqRetries = options.seqRetries ?? 0;
  }

  /** GET /info, read afresh (the latest ledger moves). */
  async info(): Promise<LedgerInfo> {
    const info = await this.#call('GET', '/info', LedgerInfoSchema);
    this.#info = info;
    return info;
  }

  /** The ledger's description as last read: its passphrase and contracts do not change. */
  async cachedInfo(): Promise<LedgerInfo> {
    return this.#info ?? this.info();
  }

  async account(address: string): Promise<LedgerAccount> {
    return this.#call('GET', `/accounts/${encodeURIComponent(address)}`, LedgerAccountSchema);
  }

  /** The channel's record; null when the ledger has none (404). */
  async channel(id: bigint): Promise<LedgerChannel | null> {
    return this.#find(`/channels/${id}`, LedgerChannelSchema);
  }

  /** A transaction's record by hash; null when the ledger has none (404). */
  async tx(hash: string): Promise<TxResult | null> {
    return this.#find(`/tx/${hash}`, LedgerTxResultSchema);
  }

  /** The credit pool; null when the ledger has none (404). */
  async pool(): Promise<PoolState | null> {
    return this.#find('/pool', PoolStateSchema);
  }

  async events(cursor: string | null, limit: number): Promise<EventsPage> {
    const after = cursor === null ? '' : `cursor=${encodeURIComponent(cursor)}&`;
    return this.#call('GET', `/events?${after}limit=${limit}`, LedgerEventsPageSchema);
  }

  /** POST /tx: SUCCESS or FAILED as the ledger recorded it. */
  async submit(tx: SignedLedgerTx): Promise<TxResult> {
    return this.#call('POST', '/tx', LedgerTxResultSchema, tx);
  }

  async faucet(address: string, amount?: bigint): Promise<TxResult> {
    const body = { address, ...(amount !== undefined ? { amount: amount.toString() } : {}) };
    return this.#call('POST', '/faucet', LedgerTxResultSchema, body);
  }

  /** One operation from `source`, signed by `signer` (itself, or a key of the smart account `source`). */
  submitAs(source: string, signer: Keypair, op: string, args: Record<string, unknown>): Promise<TxResult> {
    const previous = this.#tails.get(source) ?? Promise.resolve();
    const run = previous.then(() => this.#submitNow(source, signer, op, args));
    const tail = run.catch(() => undefined);
    this.#tails.set(source, tail);
    void tail.then(() => {
      if (this.#tails.get(source) === tail) this.#tails.delete(source);
    });
    return run;
  }

  /** Signs `op` from `source` for its next sequence number, and does not send it. */
  async sign(source: string, signer: Keypair, op: string, args: Record<string, unknown>): Promise<SignedLedgerTx> {
    const { passphrase } = await this.cachedInfo();
    const { seq } = await this.account(source);
    return signLedgerTx(signer, passphrase, { source, seq: seq + 1, op, args });
  }

  async #submitNow(source: string, signer: Keypair, op: string, args: Record<string, unknown>): Promise<TxResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.submit(await this.sign(source, signer, op, args));
      } catch (err) {
        if (!(err instanceof LedgerError && err.status === 400) || attempt >= this.#seqRetries) throw err;
      }
    }
  }

  async #call<S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    body?: unknown,
  ): Promise<z.output<S>> {
    return this.#expect(await this.#request(method, path, body), schema, method, path);
  }

  async #find<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S> | null> {
    const reply = await this.#request('GET', path);
    return reply.status === 404 ? null : this.#expect(reply, schema, 'GET', path);
  }

  async #request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> {
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(`${this.url}${path}`, {
        method,
        ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      throw new LedgerUnavailable(
        `the ledger at ${this.url} did not answer ${method} ${path}: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    return { status: response.status, body: parseJson(text), headers: response.headers };
  }

  #expect<S extends z.ZodType>(reply: Reply, schema: S, method: string, path: string): z.output<S> {
    if (reply.status !== 200) {
      const body = safeParse(ErrorBodySchema, reply.body);
      const retryAfter = reply.headers.get('retry-after');
      const said = body.success ? `${body.data.error} ${body.data.message}` : '';
      throw new LedgerError(`${method} ${path}: ${reply.status} ${said}`.trim(), reply.status, undefined, undefined, {
        ...(body.success ? { body: body.data } : {}),
        ...(retryAfter !== null ? { retryAfter } : {}),
      });
    }
    const parsed = safeParse(schema, reply.body);
    if (!parsed.success) throw new LedgerUnavailable(`the ledger sent a malformed reply: ${parsed.error.message}`);
    return parsed.data;
  }
}

function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : null;
  } catch {
    return null;
  }
}
