// A thin Soroban JSON-RPC client: the few methods StellarLedger needs, each reply parsed with its
// schema (@svc/core's soroban-rpc-schemas.ts). The SDK's rpc.Server is not used: its parsers
// demand more than the methods return on some servers (SDK 15's getLatestLedger insists on
// headerXdr and metadataXdr), and its HTTP goes through axios, where a recorded exchange is harder
// to inject than a `fetch`.
//
//   const rpc = new SorobanRpc({ url: 'https://soroban-testnet.stellar.org', fetch });
//   const { sequence } = await rpc.getLatestLedger();
//
// Anything that is not a proper answer (no connection, timeout, non-200, malformed reply) is
// LedgerUnavailable; a JSON-RPC error object is RpcError, a LedgerUnavailable with the server's code.
import type { z } from 'zod';
import type { FeeBumpTransaction, Transaction, xdr } from '@stellar/stellar-sdk';
import { LedgerUnavailable } from '../port.js';
import {
  RpcEventsSchema,
  RpcHealthSchema,
  RpcLatestLedgerSchema,
  RpcLedgerEntriesSchema,
  RpcNetworkSchema,
  RpcSendSchema,
  RpcSimulationSchema,
  RpcTransactionSchema,
} from '@svc/core';
import type { RpcEvents, RpcSend, RpcSimulation, RpcTransaction } from '@svc/core';

export const DEFAULT_RPC_TIMEOUT_MS = 15_000;

export class RpcError extends LedgerUnavailable {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
  ) {
    super(`Soroban RPC ${method} failed: ${rpcMessage} (JSON-RPC error ${code})`);
    this.name = 'RpcError';
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
    this.#fetch = options.fetch ?? globalThis.fetch;
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

  getLedgerEntries(keys: xdr.LedgerKey[]) {
    return this.call('getLedgerEntries', { keys: keys.map((k) => k.toXDR('base64')) }, RpcLedgerEntriesSchema);
  }

  simulateTransaction(tx: Transaction): Promise<RpcSimulation> {
    return this.call('simulateTransaction', { transaction: tx.toEnvelope().toXDR('base64') }, RpcSimulationSchema);
  }

  sendTransaction(tx: Transaction | FeeBumpTransaction): Promise<RpcSend> {
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
      throw new LedgerUnavailable(
        `Soroban RPC ${method} at ${this.url} did not answer: ${err instanceof Error ? err.message : String(err)}`,
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
      throw new RpcError(
        method,
        code,
        typeof envelope.error.message === 'string' ? envelope.error.message : 'no message',
      );
    }
    const parsed = schema.safeParse(envelope.result);
    if (!parsed.success)
      throw new LedgerUnavailable(
        `Soroban RPC ${method} sent a malformed result: ${parsed.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.')}: ${i.message}`)
          .join('; ')}`,
      );
    return parsed.data;
  }
}
