// Ledger.events over getEvents. The cursor is the RPC's own (an event id, or the end of a scanned
// window), opaque to callers, who persist it (docs/architecture.md#on-stellar: the RPC keeps about 7 days of events).
// One getEvents call scans at most 10,000 ledgers: a page that comes back short may only mean the
// window ended, so this keeps scanning until the page is full or the window reaches the latest
// ledger. A page shorter than `limit` therefore means "caught up", as with the local ledger.
import { MAX_LEDGER_EVENTS_PAGE } from '@svc/core';
import { xdr } from '@stellar/stellar-sdk';
import type { EventsPage, LedgerEvent } from '../port.js';
import { LedgerUnavailable } from '../port.js';
import { decodeChannelEvent } from './contract-interface.js';
import { SorobanRpcError } from '@svc/core';
import type { EventsRequest, RpcEvent, SorobanRpc } from '@svc/core';

/** Enough windows to cross the whole retention period (7 days ≈ 121,000 ledgers) in one call. */
const MAX_WINDOWS = 16;

export interface EventReaderOptions {
  channelContract: string;
  asset: string;
  /** Where a null cursor starts; the RPC's oldest ledger when unset or older. */
  startLedger?: number;
}

/** The ledger a getEvents cursor points into: the TOID's upper 32 bits. */
export function cursorLedger(cursor: string): number | null {
  const m = /^([0-9]{1,19})-[0-9]{1,10}$/.exec(cursor);
  return m ? Number(BigInt(m[1]!) >> 32n) : null;
}

export class EventReader {
  constructor(
    private readonly rpc: SorobanRpc,
    private readonly options: EventReaderOptions,
  ) {}

  async page(cursor: string | null, limit: number): Promise<EventsPage> {
    const count = Number.isFinite(limit) ? Math.min(MAX_LEDGER_EVENTS_PAGE, Math.max(0, Math.floor(limit))) : 0;
    if (count === 0) return { events: [], cursor };
    const events: LedgerEvent[] = [];
    let at = cursor;
    for (let window = 0; window < MAX_WINDOWS && events.length < count; window++) {
      const wanted = count - events.length;
      const reply = await this.#fetch(
        at === null ? { startLedger: await this.#start(), limit: wanted } : { cursor: at, limit: wanted },
      );
      for (const raw of reply.events) {
        const event = this.#toEvent(raw);
        if (event) events.push(event);
      }
      at = reply.cursor;
      const scannedTo = cursorLedger(reply.cursor);
      if (reply.events.length < wanted && (scannedTo === null || scannedTo >= reply.latestLedger)) break;
    }
    return { events, cursor: at };
  }

  async #fetch(request: EventsRequest) {
    try {
      return await this.rpc.getEvents(this.options.channelContract, request);
    } catch (err) {
      if (err instanceof SorobanRpcError && err.rpcError && /ledger range/i.test(err.rpcError.message)) {
        const from = request.cursor !== undefined ? `cursor ${request.cursor}` : `ledger ${request.startLedger}`;
        throw new LedgerUnavailable(
          `the Soroban RPC no longer keeps events from ${from} (${err.rpcError.message}); events in the gap are lost to it — resynchronise the channels from contract storage`,
          { cause: err },
        );
      }
      throw err;
    }
  }

  async #start(): Promise<number> {
    const { oldestLedger } = await this.rpc.getHealth();
    return Math.max(this.options.startLedger ?? 0, oldestLedger);
  }

  #toEvent(raw: RpcEvent): LedgerEvent | null {
    // Events of failed calls are not facts (older RPCs still list them, flagged).
    if (
      raw.type !== 'contract' ||
      raw.contractId !== this.options.channelContract ||
      raw.inSuccessfulContractCall === false
    )
      return null;
    const topics = (raw.topic ?? []).map((t) => xdr.ScVal.fromXDR(t, 'base64'));
    const decoded = decodeChannelEvent(topics, xdr.ScVal.fromXDR(raw.value, 'base64'), this.options.asset);
    if (!decoded) return null;
    return {
      id: raw.id,
      ledger: raw.ledger,
      tx: raw.txHash.toLowerCase(),
      ts: new Date(raw.ledgerClosedAt).toISOString(),
      ...decoded,
    };
  }
}
