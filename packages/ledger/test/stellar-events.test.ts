// StellarLedger.events against recorded getEvents exchanges: catching up after a gap longer than
// one RPC scan window, skipping events the port does not know, and paging on from the cursor the
// previous page returned (the watcher persists it).
import { describe, expect, it } from 'vitest';
import { LedgerUnavailable } from '../src/index.js';
import { cursorLedger } from '../src/stellar/event-reader.js';
import { GAP_CURSOR, GAP_FROM_LEDGER } from './fixtures/soroban/generate.js';
import {
  ASSET_CONTRACT,
  CHANNEL_CONTRACT,
  CLAIM,
  LATEST_LEDGER,
  PASSPHRASE,
  PAYEE,
  PAYER,
  RPC_URL,
  VOUCHER_KEY,
} from './fixtures/soroban/scenario.js';
import { eventId, txHashOf, windowCursor } from './fixtures/soroban/xdr-builders.js';
import { SorobanReplay } from './helpers/soroban-replay.js';
import { stellarLedger, useReplays } from './helpers/stellar.js';

const replay = useReplays();

describe('StellarLedger.events', () => {
  it('catches up after a gap: across scan windows, past an unknown event, in two pages joined by the returned cursor', async () => {
    const r = replay('events-gap');
    const ledger = await stellarLedger(r);
    const pageA = await ledger.events(GAP_CURSOR, 3);
    expect(pageA.events.map((e) => [e.type, e.data])).toEqual([
      [
        'channel.opened',
        {
          channelId: '42',
          payer: PAYER.address,
          payee: PAYEE.address,
          asset: ASSET_CONTRACT,
          deposit: '1000000',
          expiryLedger: CLAIM.expiryLedger,
          voucherKey: VOUCHER_KEY.publicKeyHex,
          receiverAuthorizer: null,
        },
      ],
      [
        'channel.topped_up',
        { channelId: '42', amount: '200000', deposit: '1200000', expiryLedger: CLAIM.expiryLedger },
      ],
      ['channel.claimed', { channelId: '42', payee: PAYEE.address, amount: '35000', cumulative: '35000' }],
    ]);
    expect(pageA.events.map((e) => [e.id, e.ledger, e.tx])).toEqual([
      [eventId(GAP_FROM_LEDGER + 100, 2, 1), GAP_FROM_LEDGER + 100, txHashOf('open 42')],
      [eventId(GAP_FROM_LEDGER + 5_000, 2, 1), GAP_FROM_LEDGER + 5_000, txHashOf('top up 42')],
      [eventId(GAP_FROM_LEDGER + 21_000, 2, 1), GAP_FROM_LEDGER + 21_000, txHashOf('claim 42')],
    ]);
    // A full page ends at its last event; the caller persists that cursor and passes it back.
    expect(pageA.cursor).toBe(pageA.events[2]!.id);
    const pageB = await ledger.events(pageA.cursor, 3);
    expect(pageB.events.map((e) => [e.type, e.data])).toEqual([
      ['channel.closed', { channelId: '41', refunded: '400000', claimed: '600000' }],
    ]);
    expect(pageB.events[0]!.ts).toBe(new Date(pageB.events[0]!.ts).toISOString());
    // Short page: caught up to the latest ledger; the cursor is the end of the scanned window.
    expect(pageB.cursor).toBe(windowCursor(LATEST_LEDGER));
    expect(cursorLedger(pageB.cursor!)).toBe(LATEST_LEDGER);
  });

  it('a cursor older than the RPC keeps is LedgerUnavailable that says events were lost', async () => {
    const r = new SorobanReplay({
      description: 'a cursor from before the retention window',
      mode: 'sequence',
      rpcUrl: RPC_URL,
      passphrase: PASSPHRASE,
      exchanges: [
        SorobanReplay.load('info-testnet').fixture.exchanges[0]!,
        {
          request: {
            method: 'getEvents',
            params: {
              filters: [{ type: 'contract', contractIds: [CHANNEL_CONTRACT] }],
              pagination: { cursor: GAP_CURSOR, limit: 10 },
            },
          },
          response: {
            error: {
              code: -32600,
              message: `startLedger must be within the ledger range: ${LATEST_LEDGER - 17_280} - ${LATEST_LEDGER}`,
            },
          },
        },
      ],
    });
    const ledger = await stellarLedger(r);
    const page = ledger.events(GAP_CURSOR, 10);
    await expect(page).rejects.toBeInstanceOf(LedgerUnavailable);
    await expect(page).rejects.toThrow(/no longer keeps events .* lost/);
    r.assertDone();
  });

  it('a zero limit asks nothing and keeps the cursor', async () => {
    const r = SorobanReplay.load('info-testnet');
    const ledger = await stellarLedger(new SorobanReplay({ ...r.fixture, exchanges: r.fixture.exchanges.slice(0, 1) }));
    expect(await ledger.events(GAP_CURSOR, 0)).toEqual({ events: [], cursor: GAP_CURSOR });
    expect(await ledger.events(null, Number.NaN)).toEqual({ events: [], cursor: null });
  });

  it('reads the ledger out of a getEvents cursor (event ids and window ends)', () => {
    expect(cursorLedger(eventId(1_234_567, 3, 2))).toBe(1_234_567);
    expect(cursorLedger(windowCursor(1_234_567))).toBe(1_234_567);
    expect(cursorLedger('not-a-cursor')).toBeNull();
  });
});
