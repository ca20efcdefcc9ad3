// HttpLedger: the Ledger port over HTTP, for a local ledger running as its own process (or
// inside a facilitator) and reached by URL. Replies are parsed with the wire schemas; anything
// that is not a proper answer (connection refused, timeout, 5xx, a malformed reply) is
// LedgerUnavailable.
//
//   const ledger = new HttpLedger({ url: 'http://127.0.0.1:4021/ledger' });
//   const res = await ledger.submit(signedTx);
//
// A submit that times out may still have been applied: look it up with getTx(txHash(…)).
import {
  ErrorBodySchema,
  LedgerAccountSchema,
  LedgerChannelSchema,
  LedgerEventsPageSchema,
  LedgerInfoSchema,
  LedgerTxResultSchema,
  MAX_LEDGER_EVENTS_PAGE,
  PoolStateSchema,
  SvcError,
  U64_MAX,
  safeParse,
  signLedgerTx,
} from '@svc/core';
import type { Keypair, SignedLedgerTx } from '@svc/core';
import type { z } from 'zod';
import type { LedgerFaucet } from './faucet.js';
import { LedgerTxRefused, LedgerUnavailable } from './port.js';
import type {
  ClaimArgs,
  ClaimRow,
  EventsPage,
  Ledger,
  LedgerAccount,
  LedgerChannel,
  LedgerInfo,
  PoolState,
  RefundArgs,
  TxResult,
} from './port.js';
import { claimArgs, claimManyArgs, refundArgs } from './claim-args.js';

export const DEFAULT_HTTP_LEDGER_TIMEOUT_MS = 10_000;
const SEQ_RETRIES = 2;

export interface HttpLedgerOptions {
  /** Base URL of the routes, prefix included: `http://127.0.0.1:4021/ledger`. */
  url: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

interface Reply {
  status: number;
  body: unknown;
  headers: Headers;
}

export class HttpLedger implements Ledger, LedgerFaucet {
  readonly url: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  /** The last submission per signer: the next one waits for it. */
  readonly #tails = new Map<string, Promise<unknown>>();

  constructor(options: HttpLedgerOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_LEDGER_TIMEOUT_MS;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async info(): Promise<LedgerInfo> {
    return this.#expect(await this.#request('GET', '/info'), LedgerInfoSchema);
  }

  async latestLedger(): Promise<number> {
    return (await this.info()).latestLedger;
  }

  async getChannel(id: bigint): Promise<LedgerChannel | null> {
    if (id < 1n || id > U64_MAX) return null;
    const reply = await this.#request('GET', `/channels/${id}`);
    return reply.status === 404 ? null : this.#expect(reply, LedgerChannelSchema);
  }

  async getAccount(address: string): Promise<LedgerAccount> {
    const reply = await this.#request('GET', `/accounts/${encodeURIComponent(address)}`);
    if (reply.status === 400) throw this.#svcError(reply);
    return this.#expect(reply, LedgerAccountSchema);
  }

  async getTx(hash: string): Promise<TxResult | null> {
    if (!/^[0-9a-fA-F]{64}$/.test(hash)) return null;
    const reply = await this.#request('GET', `/tx/${hash.toLowerCase()}`);
    return reply.status === 404 ? null : this.#expect(reply, LedgerTxResultSchema);
  }

  /** The credit pool (GET /pool), amounts parsed back to bigint; null when the ledger has none (404). */
  async getPool(): Promise<PoolState | null> {
    const reply = await this.#request('GET', '/pool');
    return reply.status === 404 ? null : this.#expect(reply, PoolStateSchema);
  }

  async submit(tx: SignedLedgerTx): Promise<TxResult> {
    const reply = await this.#request('POST', '/tx', tx);
    // 413: a transaction too large to read is refused like any malformed one, with no effect.
    if (reply.status === 400 || reply.status === 413) throw new LedgerTxRefused(this.#message(reply));
    return this.#expect(reply, LedgerTxResultSchema);
  }

  async events(cursor: string | null, limit: number): Promise<EventsPage> {
    const count = Number.isFinite(limit) ? Math.min(MAX_LEDGER_EVENTS_PAGE, Math.max(0, Math.floor(limit))) : 0;
    if (count === 0) return { events: [], cursor };
    const after = cursor === null ? '' : `cursor=${encodeURIComponent(cursor)}&`;
    return this.#expect(await this.#request('GET', `/events?${after}limit=${count}`), LedgerEventsPageSchema);
  }

  claim(args: ClaimArgs, signer: Keypair): Promise<TxResult> {
    return this.#submitAs(signer, 'channel.claim', claimArgs(args));
  }

  claimMany(rows: readonly ClaimRow[], signer: Keypair): Promise<TxResult> {
    return this.#submitAs(signer, 'channel.claim_many', claimManyArgs(rows));
  }

  refund(args: RefundArgs, signer: Keypair): Promise<TxResult> {
    return this.#submitAs(signer, 'channel.refund', refundArgs(args));
  }

  /** A tx of `signer`, one submission per signer at a time; a sequence number taken meanwhile is read again. */
  #submitAs(signer: Keypair, op: string, args: Record<string, unknown>): Promise<TxResult> {
    const previous = this.#tails.get(signer.address) ?? Promise.resolve();
    const run = previous.then(() => this.#submitNow(signer, op, args));
    this.#tails.set(
      signer.address,
      run.catch(() => undefined),
    );
    return run;
  }

  async #submitNow(signer: Keypair, op: string, args: Record<string, unknown>): Promise<TxResult> {
    const { passphrase } = await this.info();
    for (let attempt = 0; ; attempt++) {
      const { seq } = await this.getAccount(signer.address);
      const body = { source: signer.address, seq: seq + 1, op, args };
      try {
        return await this.submit(signLedgerTx(signer, passphrase, body));
      } catch (err) {
        if (!(err instanceof LedgerTxRefused) || attempt >= SEQ_RETRIES) throw err;
      }
    }
  }

  async faucet(address: string, amount?: bigint): Promise<TxResult> {
    const reply = await this.#request('POST', '/faucet', {
      address,
      ...(amount !== undefined ? { amount: amount.toString() } : {}),
    });
    if (reply.status === 400 || reply.status === 429) throw this.#svcError(reply);
    return this.#expect(reply, LedgerTxResultSchema);
  }

  /** Nothing to release: requests share the global fetch agent. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  async #request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> {
    const target = `${this.url}${path}`;
    try {
      const response = await this.#fetch(target, {
        method,
        ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null, headers: response.headers };
    } catch (err) {
      throw new LedgerUnavailable(
        `the ledger at ${this.url} did not answer ${method} ${path}: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  }

  #expect<S extends z.ZodType>(reply: Reply, schema: S): z.output<S> {
    if (reply.status !== 200)
      throw new LedgerUnavailable(`the ledger answered ${reply.status}: ${this.#message(reply)}`);
    const parsed = safeParse(schema, reply.body);
    if (!parsed.success) throw new LedgerUnavailable(`the ledger sent a malformed reply: ${parsed.error.message}`);
    return parsed.data;
  }

  #message(reply: Reply): string {
    const body = safeParse(ErrorBodySchema, reply.body);
    return body.success ? body.data.message : `HTTP ${reply.status}`;
  }

  #svcError(reply: Reply): SvcError {
    const body = safeParse(ErrorBodySchema, reply.body);
    const code = body.success ? body.data.error : reply.status === 429 ? 'RATE_LIMITED' : 'BAD_REQUEST';
    const retry = Number(reply.headers.get('retry-after'));
    return new SvcError(code, this.#message(reply), {
      source: 'ledger',
      ...(code === 'RATE_LIMITED' && retry > 0 ? { retryAfter: retry } : {}),
    });
  }
}
