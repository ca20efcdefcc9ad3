// The embedded local ledger's routes (PROTOCOL.md §9), mounted under /ledger by @svc/ledger's
// Fastify plugin when the ledger runs in-process. Buyers use them (faucet, open a channel), so the
// document lists them. Their wire schemas live in @svc/ledger's wire.ts and are not exported from
// the package (except the pool's), so the other bodies and replies are described in words here.
import { ErrorBodySchema, displayAmount, zAddress } from '@svc/core';
import { DEFAULT_FAUCET_AMOUNT, PoolWireSchema } from '@svc/ledger';
import { z } from 'zod';
import type { RouteDoc } from './openapi.js';

export const LEDGER_PREFIX = '/ledger';
const TAGS = ['ledger'];
const AnyJson = z.record(z.string(), z.unknown());
const Hash = z.object({ hash: z.string().regex(/^[0-9a-fA-F]{64}$/).meta({ description: 'Transaction hash, 64 hex characters.' }) });
const errors = { 400: { description: 'Malformed request', schema: ErrorBodySchema }, 404: { description: 'Not found', schema: ErrorBodySchema } };

function doc(method: RouteDoc['method'], path: string, summary: string, returns: string, extra: Partial<RouteDoc> = {}): RouteDoc {
  return { method, url: `${LEDGER_PREFIX}${path}`, summary, tags: TAGS, responses: { 200: { description: returns, schema: AnyJson }, ...errors }, ...extra };
}

export function ledgerRouteDocs(): RouteDoc[] {
  return [
    doc('GET', '/info', 'The local ledger: network, passphrase, latest ledger, contracts, asset.', '{ network, passphrase, latestLedger, ledgerSeconds, contracts { channel, asset, creditPool }, asset { code, decimals } }'),
    doc('POST', '/faucet', `Funds a test account (${displayAmount(DEFAULT_FAUCET_AMOUNT)} asset units by default; limited per address and per hour).`, 'The transaction record', {
      body: z.object({ address: zAddress, amount: z.string().regex(/^[0-9]{1,39}$/).optional() }),
    }),
    doc('POST', '/tx', 'Submits a signed transaction { source, seq, op, args, signature } (ops: transfer, channel.open, channel.top_up, channel.claim, channel.close, account.*, pool.*).', '{ hash, status: SUCCESS|FAILED, ledger, result?, code?, events }', {
      body: AnyJson.meta({ description: '{ source, seq, op, args, signature }: ed25519 over sha256("svc:tx:v1" ‖ network id ‖ RFC 8785 JSON of { source, seq, op, args }).' }),
    }),
    doc('GET', '/tx/:hash', 'A transaction record by hash.', '{ hash, status, ledger, source, op, result?, code?, events, ts }', { params: Hash }),
    doc('GET', '/events', 'Ledger events in order, paged by cursor.', '{ events: [{ id, ledger, tx, ts, type, data }], cursor }', {
      query: z.object({ cursor: z.string().regex(/^[0-9]{1,15}$/).optional(), limit: z.string().regex(/^[0-9]{1,7}$/).optional() }),
    }),
    doc('GET', '/accounts/:address', 'An account on the ledger: sequence number, balances, smart-account state.', '{ address, seq, balances: [{ asset, amount }], account? }', { params: z.object({ address: zAddress }) }),
    doc('GET', '/channels/:id', "The channel contract's own record.", '{ id, payer, payee, asset, deposit, claimed, voucherKey, expiryLedger, open }', {
      params: z.object({ id: z.string().regex(/^[0-9]{1,20}$/) }),
    }),
    doc('GET', '/pool', 'The credit pool, read-only: size, share price, utilization, credit lines, investor positions (404 on a ledger without one).', 'The pool', {
      responses: { 200: { description: 'The pool, amounts as decimal strings', schema: PoolWireSchema, io: 'input' }, 404: errors[404] },
    }),
  ];
}
