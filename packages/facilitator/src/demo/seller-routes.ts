// The demo seller, metered with the public @svc/meter API exactly as an external seller's would be:
// GET /demo/book (per request), GET /demo/summary (per request, charged per token produced),
// GET /demo/ticker/stream (per second), POST /demo/chat (per token).
// Each route is declared once, like the facilitator's own: the server, the OpenAPI document and
// llms.txt come from the declaration, its price from the same options the meter charges (prices.ts).
// Its inputs are checked before the meter asks for a payment: a malformed request is never paid for.
// The meter calls this facilitator's routes like any other seller's — in process: the same routes,
// validation and seller authentication as over HTTP, without the socket (localFetch for the rare
// calls, localPost over the route table for the per-request /verify and attestation).
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { svc, FacilitatorError } from '@svc/meter';
import type { MeterOptions, PaidStream, StreamOptions, SvcClient } from '@svc/meter';
import { fastifyMeter } from '@svc/meter/fastify';
import type { DemoPrice, SupportedResponse } from '@svc/core';
import { demoPrices, demoResources } from './prices.js';
import { ChatBody, PAYMENT_HEADERS, SummaryQuery, TickerQuery, metered, priceSummary } from './wire.js';
import { localFetch } from '../http/in-process/get.js';
import { localPost } from '../http/in-process/post.js';
import { defineRoute } from '../http/route.js';
import type { AnyRoute } from '../http/route.js';
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { SellerTokens } from '../domain/seller-tokens.js';

/** What this module uses of the domain. */
export interface DemoSellerDeps {
  clock: Clock;
  config: Config;
  /** Marks the facilitator's own in-process requests (random per process, never logged). */
  internalToken: string;
  /** The facilitator's public base URL (PUBLIC_URL, or derived from the bound address). */
  publicUrl: () => string;
  /** The base URL this process reaches itself on (the demo seller's meter uses it). */
  selfUrl: () => string;
  /** Seller tokens: the credential of a payee's side (http/seller-auth.ts). */
  sellerTokens: SellerTokens;
  /** What GET /supported answers: the demo's terms are built from it, as any seller's. */
  supported: () => SupportedResponse;
}

const BOOK = {
  title: 'The Cumulative Voucher',
  chapters: [
    'A buyer opens a channel with a deposit: the most it can ever lose.',
    'Each request carries a voucher for the running total, signed by the buyer.',
    'The facilitator checks each voucher in well under a millisecond and keeps the highest.',
    'Now and then it claims the highest voucher on the ledger: thousands of payments, one transaction.',
  ],
};

const CHAT_TEXT =
  'A payment channel is a deposit with a promise. The buyer locks funds once, then signs small ' +
  'vouchers for the running total as it reads, listens or watches. The seller keeps the highest ' +
  'voucher and claims it when it is worth a transaction. Nobody waits for a block to pay for a ' +
  'word, and nobody trusts anybody with more than one slice. That is the whole trick: cumulative ' +
  'vouchers turn a stream of tiny payments into one settlement, and a deposit turns trust into ' +
  'arithmetic.';
const TOKEN_DELAY_MS = 25;
const TICK_MS = 1000;
const TAGS = ['demo'];
const DEMO_TOKEN_DAYS = 366;

export interface DemoSeller {
  payTo: string;
}

/**
 * The demo seller's routes. `host` is the facilitator's app and route table, which its meter calls
 * in process (read on first use: the table is complete by then).
 */
export function demoSellerRoutes(
  deps: DemoSellerDeps,
  demo: DemoSeller,
  host: { app: FastifyInstance; routes: () => readonly AnyRoute[] },
): AnyRoute[] {
  // The meter needs the facilitator's URL, known once the server listens: build it on first use.
  let client: SvcClient | null = null;
  // Its seller token is minted here directly (the facilitator holds the key the token would prove).
  const sellerToken = () => deps.sellerTokens.mint(demo.payTo, deps.clock.now() + DEMO_TOKEN_DAYS * 86_400_000).token;
  const seller = () =>
    (client ??= svc({
      facilitator: deps.selfUrl(),
      payTo: demo.payTo,
      publicUrl: deps.publicUrl(),
      sellerToken: sellerToken(),
      fetch: localFetch(host.app, deps.internalToken),
      post: localPost(host.routes(), host.app.log),
    }));
  // The same options the price list, llms.txt and the MCP price list read (prices.ts).
  const options = (path: string) => demoResources(deps.config).find((r) => r.path === path)!.options;
  const prices = demoPrices(deps.config, deps.supported());
  const price = (path: string) => prices.find((p) => p.path === path)!;
  /** What every demo route declares: its price in the summary, the payment headers, the meter's answers. */
  const paid = (p: DemoPrice, meter: MeterOptions) => ({
    method: p.method,
    url: p.path,
    summary: priceSummary(p),
    tags: TAGS,
    headers: PAYMENT_HEADERS,
    responses: metered(p),
    preHandler: lazyMeter(() => fastifyMeter(seller(), meter)),
  });
  const book = options('/demo/book');
  const summary = options('/demo/summary');
  const ticker = streamed(options('/demo/ticker/stream'));
  const chat = streamed(options('/demo/chat'));

  return [
    defineRoute({
      ...paid(price('/demo/book'), book),
      handler: ({ request }) => ({
        ...BOOK,
        paidWith: {
          channelId: request.payment?.channelId,
          // A batch-settlement payment is charged once this answer is complete: its ceiling is what it signed.
          cumulative:
            request.payment?.scheme === 'batch-settlement' && !request.payment.prepaid
              ? request.payment.ceiling
              : request.payment?.cumulative,
        },
      }),
    }),

    // Priced at its most tokens, charged the tokens it produced: the seller's dynamic charge
    // (payment.charge). A channel voucher is exact, so a channel payment is charged the price.
    defineRoute({
      ...paid(price('/demo/summary'), summary),
      query: SummaryQuery,
      handler: ({ request, query }) => {
        const tokens = CHAT_TEXT.split(/(?<= )/).slice(0, query.tokens);
        const perToken = deps.config.PRICE_CHAT_PER_TOKEN;
        const used = perToken * BigInt(tokens.length);
        request.payment?.charge(used);
        return {
          summary: tokens.join('').trim(),
          tokens: tokens.length,
          perToken: perToken.toString(),
          charged: (request.payment?.scheme === 'batch-settlement' ? used : summary.price).toString(),
        };
      },
    }),

    defineRoute({
      ...paid(price('/demo/ticker/stream'), ticker),
      query: TickerQuery,
      handler: ({ request, reply, query }) =>
        streamWith(seller(), request, reply, ticker, async (stream) => {
          let value = 10_000_000n; // 1.0000000 in base units, then a deterministic walk
          for (let tick = 1; tick <= query.seconds && (await stream.next()); tick++) {
            value += BigInt(((tick * 7919) % 21) - 10) * 1000n;
            stream.send('tick', { tick, price: value.toString(), at: new Date().toISOString() });
            if (tick < query.seconds) await sleep(TICK_MS);
          }
        }),
    }),

    defineRoute({
      ...paid(price('/demo/chat'), chat),
      body: ChatBody,
      bodyOptional: true,
      handler: ({ request, reply }) =>
        streamWith(seller(), request, reply, chat, async (stream) => {
          const tokens = CHAT_TEXT.split(/(?<= )/);
          for (const [index, text] of tokens.entries()) {
            if (!(await stream.next())) return;
            stream.send('token', { index, text });
            await sleep(TOKEN_DELAY_MS);
          }
        }),
    }),
  ];
}

/** Hands the raw request and response to the stream, as any Node framework would. */
async function streamWith(
  client: SvcClient,
  request: FastifyRequest,
  reply: FastifyReply,
  options: StreamOptions,
  body: (stream: PaidStream) => Promise<void>,
): Promise<void> {
  void reply.hijack();
  const res: ServerResponse = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
  let stream: PaidStream;
  try {
    stream = await client.stream(request.raw, res, {
      ...options,
      // The receipt of the first slice, charged before the handler under either scheme.
      ...(request.payment?.scheme === 'channel' || request.payment?.prepaid ? { payment: request.payment } : {}),
    });
  } catch (err) {
    // No session (e.g. too many open on this channel): answer like the facilitator did.
    const f =
      err instanceof FacilitatorError
        ? err
        : new FacilitatorError(
            503,
            'FACILITATOR_UNAVAILABLE',
            'The payment facilitator is unavailable; try again shortly.',
          );
    res.writeHead(f.status, {
      'content-type': 'application/json; charset=utf-8',
      ...(f.retryAfter ? { 'retry-after': f.retryAfter } : {}),
    });
    res.end(JSON.stringify({ error: f.code, source: 'facilitator', message: f.message }));
    return;
  }
  try {
    await body(stream);
  } finally {
    await stream.end();
  }
}

/** Meter options of a streamed resource (token or second units). */
function streamed(options: MeterOptions): MeterOptions & StreamOptions {
  if (options.unit === 'request') throw new Error('a streamed demo resource is priced per token or per second');
  return { ...options, unit: options.unit };
}

function lazyMeter<T extends (...args: never[]) => unknown>(make: () => T): T {
  let fn: T | null = null;
  return ((...args: Parameters<T>) => (fn ??= make())(...args)) as T;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
