// The embedded local ledger's routes (docs/protocol.md#the-local-ledger), mounted under /ledger by @svc/ledger's
// Fastify plugin when the ledger runs in-process. Buyers use them (faucet, open a channel), so the
// document lists them, with the wire schemas the ledger's routes validate and answer with.
import {
  ErrorBodySchema,
  LedgerAccountSchema,
  LedgerChannelSchema,
  LedgerEventsPageSchema,
  LedgerEventsQuerySchema,
  LedgerFaucetRequestSchema,
  LedgerInfoSchema,
  LedgerTxHashSchema,
  LedgerTxResultSchema,
  PoolStateSchema,
  SignedLedgerTxSchema,
  displayAmount,
  zAddress,
} from '@svc/core';
import { DEFAULT_FAUCET_AMOUNT } from '@svc/ledger';
import { z } from 'zod';
import type { RouteDoc } from './document.js';

export const LEDGER_PREFIX = '/ledger';
const TAGS = ['ledger'];
const errors = {
  400: { description: 'Malformed request', schema: ErrorBodySchema },
  404: { description: 'Not found', schema: ErrorBodySchema },
};

/** A ledger route; replies are described in their wire (input) form: amounts as decimal strings. */
function doc(
  method: RouteDoc['method'],
  path: string,
  summary: string,
  reply: z.ZodType,
  extra: Partial<RouteDoc> = {},
): RouteDoc {
  return {
    method,
    url: `${LEDGER_PREFIX}${path}`,
    summary,
    tags: TAGS,
    responses: { 200: { description: 'OK', schema: reply, io: 'input' }, ...errors },
    ...extra,
  };
}

export function ledgerRouteDocs(): RouteDoc[] {
  const tx = LedgerTxResultSchema.meta({ id: 'LedgerTxResult' });
  return [
    doc(
      'GET',
      '/info',
      'The local ledger: network, passphrase, latest ledger, contracts, asset.',
      LedgerInfoSchema.meta({ id: 'LedgerInfo' }),
    ),
    doc(
      'POST',
      '/faucet',
      `Funds a test account (${displayAmount(DEFAULT_FAUCET_AMOUNT)} asset units by default; limited per address and per hour).`,
      tx,
      { body: LedgerFaucetRequestSchema },
    ),
    doc(
      'POST',
      '/tx',
      'Submits a signed transaction (ops: transfer, channel.open, channel.top_up, channel.claim, channel.close, account.*, dex.swap, pool.*). A contract failure is recorded as FAILED with its code.',
      tx,
      {
        body: SignedLedgerTxSchema.meta({
          id: 'LedgerSignedTx',
          description: 'ed25519 over sha256("svc:tx:v1" ‖ network id ‖ RFC 8785 JSON of { source, seq, op, args }).',
        }),
      },
    ),
    doc('GET', '/tx/:hash', 'A transaction record by hash.', tx, { params: z.object({ hash: LedgerTxHashSchema }) }),
    doc(
      'GET',
      '/events',
      'Ledger events in order, paged by cursor.',
      LedgerEventsPageSchema.meta({ id: 'LedgerEventsPage' }),
      { query: LedgerEventsQuerySchema },
    ),
    doc(
      'GET',
      '/accounts/:address',
      'An account on the ledger: sequence number, balances, smart-account state.',
      LedgerAccountSchema.meta({ id: 'LedgerAccount' }),
      { params: z.object({ address: zAddress }) },
    ),
    doc(
      'GET',
      '/channels/:id',
      "The channel contract's own record.",
      LedgerChannelSchema.meta({ id: 'LedgerChannel' }),
      {
        params: z.object({ id: z.string().regex(/^[0-9]{1,20}$/) }),
      },
    ),
    doc(
      'GET',
      '/pool',
      'The credit pool, read-only: size, share price, utilization, credit lines, investor positions (404 on a ledger without one).',
      PoolStateSchema,
      {
        responses: {
          200: { description: 'The pool, amounts as decimal strings', schema: PoolStateSchema, io: 'input' },
          404: errors[404],
        },
      },
    ),
  ];
}
