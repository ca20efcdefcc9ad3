// HttpLedger: the Ledger port over HTTP, for a local ledger running as its own process (or
// inside a facilitator) and reached by URL, through @svc/core's LedgerHttpClient. Its answers
// become the port's errors: anything that is not a proper answer (connection refused, timeout,
// 5xx, a malformed reply) is LedgerUnavailable, a transaction refused outright LedgerTxRefused.
//
//   const ledger = new HttpLedger({ url: 'http://127.0.0.1:4021/ledger' });
//   const res = await ledger.submit(signedTx);
//
// A submit that times out may still have been applied: look it up with getTx(txHash(…)).
import { LedgerError, LedgerHttpClient, MAX_LEDGER_EVENTS_PAGE, SvcError, U64_MAX } from '@svc/core';
import type { Keypair, SignedLedgerTx } from '@svc/core';
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

export class HttpLedger implements Ledger, LedgerFaucet {
  readonly url: string;
  readonly #client: LedgerHttpClient;

  constructor(options: HttpLedgerOptions) {
    this.#client = new LedgerHttpClient({
      url: options.url,
      timeoutMs: options.timeoutMs ?? DEFAULT_HTTP_LEDGER_TIMEOUT_MS,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      seqRetries: SEQ_RETRIES,
    });
    this.url = this.#client.url;
  }

  info(): Promise<LedgerInfo> {
    return portErrors(this.#client.info());
  }

  async latestLedger(): Promise<number> {
    return (await this.info()).latestLedger;
  }

  async getChannel(id: bigint): Promise<LedgerChannel | null> {
    if (id < 1n || id > U64_MAX) return null;
    return portErrors(this.#client.channel(id));
  }

  getAccount(address: string): Promise<LedgerAccount> {
    return portErrors(this.#client.account(address), { 400: svcError });
  }

  async getTx(hash: string): Promise<TxResult | null> {
    if (!/^[0-9a-fA-F]{64}$/.test(hash)) return null;
    return portErrors(this.#client.tx(hash.toLowerCase()));
  }

  /** The credit pool (GET /pool), amounts parsed back to bigint; null when the ledger has none (404). */
  getPool(): Promise<PoolState | null> {
    return portErrors(this.#client.pool());
  }

  submit(tx: SignedLedgerTx): Promise<TxResult> {
    return portErrors(this.#client.submit(tx), REFUSED);
  }

  async events(cursor: string | null, limit: number): Promise<EventsPage> {
    const count = Number.isFinite(limit) ? Math.min(MAX_LEDGER_EVENTS_PAGE, Math.max(0, Math.floor(limit))) : 0;
    if (count === 0) return { events: [], cursor };
    return portErrors(this.#client.events(cursor, count));
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
    return portErrors(this.#client.submitAs(signer.address, signer, op, args), REFUSED);
  }

  faucet(address: string, amount?: bigint): Promise<TxResult> {
    return portErrors(this.#client.faucet(address, amount), { 400: svcError, 429: svcError });
  }

  /** Nothing to release: requests share the global fetch agent. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** What the ledger said, or the HTTP status when it sent no error body. */
function said(err: LedgerError): string {
  return err.answer.body?.message ?? `HTTP ${err.status}`;
}

const refused = (err: LedgerError) => new LedgerTxRefused(said(err));
// 413: a transaction too large to read is refused like any malformed one, with no effect.
const REFUSED = { 400: refused, 413: refused };

function svcError(err: LedgerError): SvcError {
  const code = err.answer.body?.error ?? (err.status === 429 ? 'RATE_LIMITED' : 'BAD_REQUEST');
  const retry = Number(err.answer.retryAfter);
  return new SvcError(code, said(err), {
    source: 'ledger',
    ...(code === 'RATE_LIMITED' && retry > 0 ? { retryAfter: retry } : {}),
  });
}

/** The port's errors for the client's: an answer not listed in `as` means the ledger is unavailable. */
async function portErrors<T>(call: Promise<T>, as: Record<number, (err: LedgerError) => Error> = {}): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (!(err instanceof LedgerError)) throw err;
    throw as[err.status]?.(err) ?? new LedgerUnavailable(`the ledger answered ${err.status}: ${said(err)}`);
  }
}
