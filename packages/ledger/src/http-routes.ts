// The local ledger's HTTP routes (docs/protocol.md#the-local-ledger), declared once in LEDGER_ROUTES —
// method, path, the zod schemas of the inputs and of the answer, the handler — and mounted by a
// Fastify plugin under a prefix the caller chooses (the facilitator and the standalone runner use
// `/ledger`):
//
//   await app.register(ledgerRoutes, { prefix: '/ledger', ledger });
//
// A host that describes its routes (the facilitator's OpenAPI document and llms.txt) reads the same
// declarations. Inputs are parsed with core's wire schemas; bigints are turned into decimal strings
// before a reply is serialised, so every answer is its schema's wire (input) form.
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import { z } from 'zod';
import {
  accountToWire,
  channelToWire,
  DEFAULT_LEDGER_EVENTS_PAGE,
  displayAmount,
  LedgerAccountSchema,
  LedgerChannelSchema,
  LedgerEventsPageSchema,
  LedgerEventsQuerySchema,
  LedgerFaucetRequestSchema,
  LedgerInfoSchema,
  LedgerTxHashSchema,
  LedgerTxResultSchema,
  PoolStateSchema,
  poolToWire,
  SignedLedgerTxSchema,
  SvcError,
  safeParse,
  zAddress,
  zLedgerChannelId,
} from '@svc/core';
import { DEFAULT_FAUCET_AMOUNT } from './faucet.js';
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

type Schema = z.ZodType;
type Parsed<S> = S extends z.ZodType ? z.output<S> : unknown;

/** What a ledger route is given: its inputs, each parsed with the route's schema when it has one. */
export interface LedgerRouteInput<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
}

/** One route of the local ledger: what serves it and what describes it. */
export interface LedgerRoute<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
> {
  method: 'GET' | 'POST';
  /** The path under the prefix the host mounts the routes at (`:name` for a path parameter). */
  url: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /** What the inputs are, for the message of a malformed request ("Invalid transaction hash: …"). */
  what?: string;
  /**
   * The handler reads and checks the body itself (a malformed transaction is a refused
   * transaction, not a bad request); `body` then only describes it.
   */
  selfValidated?: boolean;
  /** The answer, in its wire form (amounts as decimal strings). */
  reply: z.ZodType;
  /** When the route answers 404: what it names may not exist. */
  notFound?: string;
  handler(ledger: Ledger & LedgerFaucet, input: LedgerRouteInput<Parsed<P>, Parsed<Q>, unknown>): unknown;
}

/** A route whose handler sees its parsed params and query typed (the body stays the handler's to read). */
function route<P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined>(
  r: LedgerRoute<P, Q>,
): LedgerRoute {
  return r;
}

const TxResult = LedgerTxResultSchema.meta({ id: 'LedgerTxResult' });

/** Every route of the local ledger. */
export const LEDGER_ROUTES: readonly LedgerRoute[] = [
  route({
    method: 'GET',
    url: '/info',
    summary: 'The local ledger: network, passphrase, latest ledger, contracts, asset.',
    reply: LedgerInfoSchema.meta({ id: 'LedgerInfo' }),
    handler: (ledger) => ledger.info(),
  }),
  route({
    method: 'POST',
    url: '/faucet',
    summary: `Funds a test account (${displayAmount(DEFAULT_FAUCET_AMOUNT)} asset units by default; limited per address and per hour).`,
    body: LedgerFaucetRequestSchema,
    what: 'faucet request',
    reply: TxResult,
    handler: (ledger, { body }) => {
      const request = body as z.output<typeof LedgerFaucetRequestSchema>;
      return ledger.faucet(request.address, request.amount === undefined ? undefined : BigInt(request.amount));
    },
  }),
  route({
    method: 'POST',
    url: '/tx',
    summary:
      'Submits a signed transaction (ops: transfer, channel.open, channel.top_up, channel.claim, channel.close, account.*, dex.swap, pool.*). A contract failure is recorded as FAILED with its code.',
    body: SignedLedgerTxSchema.meta({
      id: 'LedgerSignedTx',
      description: 'ed25519 over sha256("svc:tx:v1" ‖ network id ‖ RFC 8785 JSON of { source, seq, op, args }).',
    }),
    selfValidated: true,
    reply: TxResult,
    handler: (ledger, { body }) => {
      const tx = safeParse(SignedLedgerTxSchema, body);
      if (!tx.success) throw new LedgerTxRefused(`malformed transaction: ${describeIssues(tx.error)}`);
      return ledger.submit(tx.data);
    },
  }),
  route({
    method: 'GET',
    url: '/tx/:hash',
    summary: 'A transaction record by hash.',
    params: z.object({ hash: LedgerTxHashSchema }),
    what: 'transaction hash',
    reply: TxResult,
    notFound: 'No transaction with that hash',
    handler: async (ledger, { params }) => {
      const { hash } = params;
      return (await ledger.getTx(hash)) ?? notFound(`No transaction with hash ${hash}.`);
    },
  }),
  route({
    method: 'GET',
    url: '/events',
    summary: 'Ledger events in order, paged by cursor.',
    query: LedgerEventsQuerySchema,
    what: 'events query',
    reply: LedgerEventsPageSchema.meta({ id: 'LedgerEventsPage' }),
    handler: (ledger, { query }) => {
      const { cursor, limit } = query;
      return ledger.events(cursor ?? null, limit ?? DEFAULT_LEDGER_EVENTS_PAGE);
    },
  }),
  route({
    method: 'GET',
    url: '/accounts/:address',
    summary: 'An account on the ledger: sequence number, balances, smart-account state.',
    params: z.object({ address: zAddress }),
    what: 'address',
    reply: LedgerAccountSchema.meta({ id: 'LedgerAccount' }),
    handler: async (ledger, { params }) => accountToWire(await ledger.getAccount(params.address)),
  }),
  route({
    method: 'GET',
    url: '/channels/:id',
    summary: "The channel contract's own record.",
    params: z.object({ id: zLedgerChannelId }),
    what: 'channel id',
    reply: LedgerChannelSchema.meta({ id: 'LedgerChannel' }),
    notFound: 'No such channel',
    handler: async (ledger, { params }) => {
      const { id } = params;
      const channel = await ledger.getChannel(id);
      return channel ? channelToWire(channel) : notFound(`No channel ${id}.`);
    },
  }),
  route({
    method: 'GET',
    url: '/pool',
    summary:
      'The credit pool, read-only: size, share price, utilization, credit lines, investor positions (404 on a ledger without one).',
    reply: PoolStateSchema,
    notFound: 'This ledger has no credit pool',
    handler: async (ledger) => {
      const pool = ledger.getPool ? await ledger.getPool() : null;
      return pool ? poolToWire(pool) : notFound('This ledger has no credit pool.');
    },
  }),
];

export const ledgerRoutes: FastifyPluginCallback<LedgerRoutesOptions> = (app, { ledger }, done) => {
  app.setErrorHandler((err, _request, reply) => sendLedgerError(reply, err));
  app.setNotFoundHandler((_request, reply) =>
    sendLedgerError(reply, new SvcError('NOT_FOUND', 'No such ledger route.', { source: 'ledger' })),
  );
  for (const route of LEDGER_ROUTES) {
    app.route({
      method: route.method,
      url: route.url,
      ...(route.method === 'POST' ? { bodyLimit: LEDGER_BODY_LIMIT } : {}),
      handler: (request) => {
        const what = route.what ?? 'request';
        const input: LedgerRouteInput = {
          params: route.params ? parse(route.params, request.params, what) : request.params,
          query: route.query ? parse(route.query, request.query, what) : request.query,
          body: route.body && !route.selfValidated ? parse(route.body, request.body, what) : request.body,
        };
        return route.handler(ledger, input);
      },
    });
  }
  done();
};
