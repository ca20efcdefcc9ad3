// The few Soroban JSON-RPC calls a buyer needs (the facilitator side has its own client in
// @svc/ledger, which the SDK may not import): read an account's sequence number, simulate, send,
// and poll a transaction. Replies are checked with @svc/core's RPC reply schemas, the ones
// @svc/ledger's client uses; XDR is decoded with the Stellar SDK's types. `fetch` is injectable,
// so tests replay recorded exchanges.
import {
  RpcLatestLedgerSchema,
  RpcLedgerEntriesSchema,
  RpcSendSchema,
  RpcSimulationSchema,
  RpcTransactionSchema,
} from '@svc/core';
import type { RpcSend, RpcSimulation, RpcTransaction } from '@svc/core';
import type { z } from 'zod';
import { Keypair, xdr } from '@stellar/stellar-sdk';
import type { Transaction } from '@stellar/stellar-sdk';

export type { RpcSimulation, RpcTransaction } from '@svc/core';

const DEFAULT_TIMEOUT_MS = 15_000;

/** The RPC did not answer properly (no connection, timeout, JSON-RPC error, malformed reply). */
export class SorobanRpcError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SorobanRpcError';
  }
}

export class BuyerRpc {
  #id = 1;

  constructor(
    readonly url: string,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  async latestLedger(): Promise<number> {
    return (await this.call('getLatestLedger', undefined, RpcLatestLedgerSchema)).sequence;
  }

  /** The account's current sequence number, or null when it does not exist. */
  async sequence(address: string): Promise<string | null> {
    const key = xdr.LedgerKey.account(
      new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(address).xdrAccountId() }),
    );
    const entry = (await this.call('getLedgerEntries', { keys: [key.toXDR('base64')] }, RpcLedgerEntriesSchema))
      .entries[0];
    return entry ? xdr.LedgerEntryData.fromXDR(entry.xdr, 'base64').account().seqNum().toString() : null;
  }

  simulate(tx: Transaction): Promise<RpcSimulation> {
    return this.call('simulateTransaction', { transaction: tx.toEnvelope().toXDR('base64') }, RpcSimulationSchema);
  }

  send(tx: Transaction): Promise<RpcSend> {
    return this.call('sendTransaction', { transaction: tx.toEnvelope().toXDR('base64') }, RpcSendSchema);
  }

  transaction(hash: string): Promise<RpcTransaction> {
    return this.call('getTransaction', { hash }, RpcTransactionSchema);
  }

  async call<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown> | undefined,
    schema: S,
  ): Promise<z.output<S>> {
    let reply: { result?: unknown; error?: { code?: unknown; message?: unknown } };
    try {
      const res = await this.fetchImpl(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: this.#id++, method, ...(params ? { params } : {}) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      reply = (await res.json()) as typeof reply;
    } catch (err) {
      throw new SorobanRpcError(
        `Soroban RPC ${method} at ${this.url} did not answer: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    if (reply.error)
      throw new SorobanRpcError(
        `Soroban RPC ${method} failed: ${typeof reply.error.message === 'string' ? reply.error.message : 'no message'}`,
      );
    const parsed = schema.safeParse(reply.result);
    if (!parsed.success) throw new SorobanRpcError(`Soroban RPC ${method} sent a malformed result`);
    return parsed.data;
  }
}

/** A transaction meta's return value (TransactionMeta v3 or v4). */
export function returnValueOf(resultMetaXdr: string | undefined): xdr.ScVal | undefined {
  if (!resultMetaXdr) return undefined;
  const meta = xdr.TransactionMeta.fromXDR(resultMetaXdr, 'base64');
  if (meta.switch() === 3) return meta.v3().sorobanMeta()?.returnValue() ?? undefined;
  if (meta.switch() === 4) return meta.v4().sorobanMeta()?.returnValue() ?? undefined;
  return undefined;
}

const ERROR_RE = /Error\((\w+), #?(\w+)\)/;
const CHANNEL_CODES = new Set([20, 21, 22, 23, 24, 25, 26, 27]);

/**
 * The docs/protocol.md#channels-and-records code of a refusal: the channel contract's own error numbers are §7's, and a
 * failed authorisation is 26 NOT_AUTHORIZED. `text` is a simulation's error; `events` the
 * diagnostic events of a failed transaction.
 */
export function refusalCode(text: string | undefined, events: readonly string[] = []): number | undefined {
  const fromText = text ? ERROR_RE.exec(text.slice(Math.max(0, text.indexOf('HostError:')))) : null;
  if (fromText) return codeOf(fromText[1]!, fromText[2]!);
  for (const raw of events) {
    const topics = xdr.DiagnosticEvent.fromXDR(raw, 'base64').event().body().v0().topics();
    const error = topics.find((t) => t.switch() === xdr.ScValType.scvError())?.error();
    if (!error) continue;
    const code =
      error.switch() === xdr.ScErrorType.sceContract()
        ? codeOf('Contract', String(error.contractCode()))
        : codeOf(error.switch().name.replace(/^sce/, ''), '');
    if (code !== undefined) return code;
  }
  return undefined;
}

function codeOf(type: string, code: string): number | undefined {
  if (type === 'Contract') return CHANNEL_CODES.has(Number(code)) ? Number(code) : undefined;
  return type === 'Auth' ? 26 : undefined;
}
