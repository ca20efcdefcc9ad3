// The local ledger's HTTP routes (docs/protocol.md#the-local-ledger), a Fastify plugin mounted under a prefix the
// caller chooses (the facilitator and the standalone runner use `/ledger`):
//
//   await app.register(ledgerRoutes, { prefix: '/ledger', ledger });
//
// Every body, param and query is parsed with the zod schemas of wire.ts; bigints are turned into
// decimal strings before a reply is serialised.
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { z } from 'zod';
import {
  accountToWire,
  channelToWire,
  DEFAULT_LEDGER_EVENTS_PAGE,
  LedgerEventsQuerySchema,
  LedgerFaucetRequestSchema,
  LedgerTxHashSchema,
  poolToWire,
  SignedLedgerTxSchema,
  SvcError,
  safeParse,
  zAddress,
  zLedgerChannelId,
} from '@svc/core';
import type { LedgerFaucet } from './faucet.js';
import { toHttpError } from './http-errors.js';
import { LedgerTxRefused } from './port.js';
import type { Ledger } from './port.js';
import { describeIssues } from './describe-issues.js';

/** Enough for any transaction; a bigger body is refused before it is parsed. */
export const LEDGER_BODY_LIMIT = 64 * 1024;

export interface LedgerRoutesOptions {
  ledger: Ledger & LedgerFaucet;
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = safeParse(schema, value);
  if (!result.success)
    throw new SvcError('BAD_REQUEST', `Invalid ${what}: ${describeIssues(result.error)}.`, { source: 'ledger' });
  return result.data;
}

function notFound(message: string): never {
  throw new SvcError('NOT_FOUND', message, { source: 'ledger' });
}

/**
 * Answers `err` with the ledger's error body. Exported for the host server's `frameworkErrors`
 * option: errors Fastify raises before routing (a bad URL, a parameter over maxParamLength)
 * never reach a plugin's error handler.
 */
export function sendLedgerError(reply: FastifyReply, err: unknown): FastifyReply {
  const answer = toHttpError(err);
  if (answer.status >= 500) reply.log.error({ err }, 'ledger route failed');
  if (answer.retryAfter !== undefined) void reply.header('retry-after', String(answer.retryAfter));
  return reply.code(answer.status).send(answer.body);
}

export const ledgerRoutes: FastifyPluginCallback<LedgerRoutesOptions> = (app, { ledger }, done) => {
  app.setErrorHandler((err, _request, reply) => sendLedgerError(reply, err));
  app.setNotFoundHandler((_request, reply) =>
    sendLedgerError(reply, new SvcError('NOT_FOUND', 'No such ledger route.', { source: 'ledger' })),
  );

  app.get('/info', () => ledger.info());

  app.post('/faucet', { bodyLimit: LEDGER_BODY_LIMIT }, (request) => {
    const body = parse(LedgerFaucetRequestSchema, request.body, 'faucet request');
    return ledger.faucet(body.address, body.amount === undefined ? undefined : BigInt(body.amount));
  });

  app.post('/tx', { bodyLimit: LEDGER_BODY_LIMIT }, (request) => {
    const tx = safeParse(SignedLedgerTxSchema, request.body);
    if (!tx.success) throw new LedgerTxRefused(`malformed transaction: ${describeIssues(tx.error)}`);
    return ledger.submit(tx.data);
  });

  app.get('/tx/:hash', async (request) => {
    const hash = parse(LedgerTxHashSchema, (request.params as { hash?: unknown }).hash, 'transaction hash');
    return (await ledger.getTx(hash)) ?? notFound(`No transaction with hash ${hash}.`);
  });

  app.get('/events', async (request) => {
    const query = parse(LedgerEventsQuerySchema, request.query, 'events query');
    return ledger.events(query.cursor ?? null, query.limit ?? DEFAULT_LEDGER_EVENTS_PAGE);
  });

  app.get('/accounts/:address', async (request) => {
    const address = parse(zAddress, (request.params as { address?: unknown }).address, 'address');
    return accountToWire(await ledger.getAccount(address));
  });

  app.get('/channels/:id', async (request) => {
    const id = parse(zLedgerChannelId, (request.params as { id?: unknown }).id, 'channel id');
    const channel = await ledger.getChannel(id);
    return channel ? channelToWire(channel) : notFound(`No channel ${id}.`);
  });

  // The credit pool (read-only): 404 on a ledger that has none.
  app.get('/pool', async () => {
    const pool = ledger.getPool ? await ledger.getPool() : null;
    return pool ? poolToWire(pool) : notFound('This ledger has no credit pool.');
  });

  done();
};
