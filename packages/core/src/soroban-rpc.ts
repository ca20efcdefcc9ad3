// The one Soroban JSON-RPC client: the methods @svc/ledger's StellarLedger and @svc/sdk's
// StellarChannelClient call, each reply parsed with its schema (soroban-rpc-schemas.ts). The
// Stellar SDK's rpc.Server is not used: its parsers demand more than the methods return on some
// servers (SDK 15's getLatestLedger insists on headerXdr and metadataXdr), and its HTTP goes
// through axios, where a recorded exchange is harder to inject than a `fetch`. It takes XDR as
// anything that writes itself as base64 (the SDK's transactions and ledger keys do), so @svc/core
// depends on no Stellar package, for its types either.
//
//   const rpc = new SorobanRpc({ url: 'https://soroban-testnet.stellar.org', fetch });
//   const { sequence } = await rpc.getLatestLedger();
//
// Anything that is not a proper answer (no connection, timeout, non-200, malformed reply, a
// JSON-RPC error object) is SorobanRpcError, a LedgerUnavailable; a JSON-RPC error carries the
// server's code and message.
import type { z } from 'zod';
import { globalFetch } from './fetch.js';
import { LedgerUnavailable } from './ledger-errors.js';
import {
  RpcEventsSchema,
  RpcHealthSchema,
  RpcLatestLedgerSchema,
  RpcLedgerEntriesSchema,
  RpcNetworkSchema,
  RpcSendSchema,
  RpcSimulationSchema,
  RpcTransactionSchema,
} from './soroban-rpc-schemas.js';
import type { RpcEvents, RpcSend, RpcSimulation, RpcTransaction } from './soroban-rpc-schemas.js';

/** An XDR value (a ledger key) as the Stellar SDK's: it writes itself as base64. */
export interface XdrValue {
  toXDR(format: 'base64'): string;
}

/** A transaction or fee-bump as the Stellar SDK's: its envelope writes itself as base64. */
export interface XdrEnvelope {
  toEnvelope(): XdrValue;
}

export const DEFAULT_RPC_TIMEOUT_MS = 15_000;

export class SorobanRpcError extends LedgerUnavailable {
  constructor(
    message: string,
    readonly method: string,
    /** The JSON-RPC error's code and message, when the server answered with one. */
    readonly rpcError?: { code: number; message: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SorobanRpcError';
  }
}

export interface SorobanRpcOptions {
  url: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** getEvents: from a ledger (a fresh start) or after a cursor (paging on). */
export type EventsRequest =
  { startLedger: number; cursor?: never; limit: number } | { cursor: string; startLedger?: never; limit: number };

export class SorobanRpc {
  readonly url: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  #nextId = 1;

  constructor(options: SorobanRpcOptions) {
    this.url = options.url;
    this.#fetch = options.fetch ?? globalFetch;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  }

  getNetwork() {
    return this.call('getNetwork', undefined, RpcNetworkSchema);
  }

  getLatestLedger() {
    return this.call('getLatestLedger', undefined, RpcLatestLedgerSchema);
  }

  getHealth() {
    return this.call('getHealth', undefined, RpcHealthSchema);
  }

  getLedgerEntries(keys: readonly XdrValue[]) {
    return this.call('getLedgerEntries', { keys: keys.map((k) => k.toXDR('base64')) }, RpcLedgerEntriesSchema);
  }

  simulateTransaction(tx: XdrEnvelope): Promise<RpcSimulation> {
    return this.call('simulateTransaction', { transaction: tx.toEnvelope().toXDR('base64') }, RpcSimulationSchema);
  }

  sendTransaction(tx: XdrEnvelope): Promise<RpcSend> {
    return this.call('sendTransaction', { transaction: tx.toEnvelope().toXDR('base64') }, RpcSendSchema);
  }

  getTransaction(hash: string): Promise<RpcTransaction> {
    return this.call('getTransaction', { hash }, RpcTransactionSchema);
  }

  /** Contract events of one contract, in order. */
  getEvents(contract: string, request: EventsRequest): Promise<RpcEvents> {
    const filters = [{ type: 'contract', contractIds: [contract] }];
    const params =
      request.cursor !== undefined
        ? { filters, pagination: { cursor: request.cursor, limit: request.limit } }
        : { startLedger: request.startLedger, filters, pagination: { limit: request.limit } };
    return this.call('getEvents', params, RpcEventsSchema);
  }

  async call<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown> | undefined,
    schema: S,
  ): Promise<z.output<S>> {
    const id = this.#nextId++;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
    let reply: unknown;
    try {
      const response = await this.#fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
      reply = await response.json();
    } catch (err) {
      throw new SorobanRpcError(
        `Soroban RPC ${method} at ${this.url} did not answer: ${err instanceof Error ? err.message : String(err)}`,
        method,
        undefined,
        { cause: err },
      );
    }
    return this.#result(method, reply, schema);
  }

  #result<S extends z.ZodType>(method: string, reply: unknown, schema: S): z.output<S> {
    const envelope = (typeof reply === 'object' && reply !== null ? reply : {}) as {
      result?: unknown;
      error?: { code?: unknown; message?: unknown };
    };
    if (envelope.error !== undefined) {
      const code = typeof envelope.error.code === 'number' ? envelope.error.code : 0;
      const message = typeof envelope.error.message === 'string' ? envelope.error.message : 'no message';
      throw new SorobanRpcError(`Soroban RPC ${method} failed: ${message} (JSON-RPC error ${code})`, method, {
        code,
        message,
      });
    }
    const parsed = schema.safeParse(envelope.result);
    if (!parsed.success)
      throw new SorobanRpcError(
        `Soroban RPC ${method} sent a malformed result: ${parsed.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.')}: ${i.message}`)
          .join('; ')}`,
        method,
      );
    return parsed.data;
  }
}
