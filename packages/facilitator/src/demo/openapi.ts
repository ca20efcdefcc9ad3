// The demo seller's resources for the OpenAPI document. seller-routes.ts serves them with plain
// Fastify and the public @svc/meter API, as an external seller would, so they are not in the route
// table; they are described here instead, with their prices from configuration and the 402 that
// the meter answers (spec "Seller-side behaviour of a metered endpoint").
import { ErrorBodySchema, PaymentRequiredSchema } from '@svc/core';
import { z } from 'zod';
import type { DemoPrice, SupportedResponse } from '@svc/core';
import type { Config } from '../config.js';
import { SUMMARY_MAX_TOKENS, demoPrices } from './prices.js';
import type { RouteDoc } from '../http/openapi/document.js';

const TAGS = ['demo'];
const BookSchema = z.object({
  title: z.string(),
  chapters: z.array(z.string()),
  paidWith: z
    .object({ channelId: z.string(), cumulative: z.string() })
    .meta({ description: 'The voucher this request was paid with.' }),
});
const SummarySchema = z.object({
  summary: z.string(),
  tokens: z.number().int().meta({ description: 'The tokens produced.' }),
  perToken: z.string().meta({ description: 'The price of one token (base units).' }),
  charged: z.string().meta({
    description:
      'What this request was charged: the tokens produced × perToken for a batch-settlement payment (also PAYMENT-RESPONSE extra.chargedAmount), the price for a channel voucher (exact).',
  }),
});
const SummaryQuery = z.object({
  tokens: z.coerce.number().int().min(1).max(SUMMARY_MAX_TOKENS).default(SUMMARY_MAX_TOKENS).meta({
    description: 'The most tokens to produce; the demo text may run out first (and is charged what it produced).',
  }),
});
const ChatBody = z
  .object({
    prompt: z
      .string()
      .max(4096)
      .optional()
      .meta({ description: 'The question (the demo answers with its built-in text).' }),
  })
  .meta({ id: 'DemoChatRequest' });
const TickerQuery = z.object({
  seconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(60)
    .meta({ description: 'How many one-second ticks to stream.' }),
});

const PAYMENT_HEADERS = [
  {
    name: 'PAYMENT-SIGNATURE',
    description: 'Base64 JSON payment payload (x402 v2) carrying a signed voucher (docs/protocol.md#payment-payload).',
  },
  { name: 'X-PAYMENT', description: 'The same, for x402 v1 clients.' },
];

function metered(price: DemoPrice): RouteDoc['responses'] {
  const stream = price.unit !== 'request';
  return {
    200: stream
      ? {
          description: `Paid: a server-sent-event stream (session, ${price.unit === 'second' ? 'tick' : 'token'}, payment-required with the next requiredCumulative, done)`,
          contentType: 'text/event-stream',
          headers: { 'PAYMENT-RESPONSE': 'Base64 JSON receipt of the first slice' },
        }
      : {
          description: 'Paid: the resource',
          schema: price.path === '/demo/summary' ? SummarySchema : BookSchema,
          headers: {
            'PAYMENT-RESPONSE':
              'Base64 JSON receipt (docs/protocol.md#receipts); for batch-settlement the settle answer, with extra.chargedAmount',
          },
        },
    402: {
      description:
        'No payment (error PAYMENT_REQUIRED) or a rejected one (error = the reason code): the payment terms, also base64-encoded in PAYMENT-REQUIRED',
      schema: PaymentRequiredSchema,
      headers: { 'PAYMENT-REQUIRED': 'Base64 JSON of the same 402 body' },
    },
    429: { description: 'Voucher rate limit of the channel (Retry-After)', schema: ErrorBodySchema },
    503: { description: 'The facilitator is unavailable', schema: ErrorBodySchema },
  };
}

function summary(p: DemoPrice): string {
  const per =
    p.slice === null
      ? 'per request'
      : `per ${p.unit}, paid ${p.slice} ${p.unit}s (${p.sliceAmount ?? ''} base units) per voucher`;
  return `Demo seller: ${p.description} Price ${p.price} base units ${per}; minimum deposit ${p.minDeposit}.`;
}

/** The demo seller's routes, described from the same prices its meter charges. */
export function demoRouteDocs(config: Config, supported: SupportedResponse): RouteDoc[] {
  return demoPrices(config, supported).map((p) => ({
    method: p.method,
    url: p.path,
    summary: summary(p),
    tags: TAGS,
    ...(p.path === '/demo/ticker/stream' ? { query: TickerQuery } : {}),
    ...(p.path === '/demo/summary' ? { query: SummaryQuery } : {}),
    ...(p.path === '/demo/chat' ? { body: ChatBody, bodyOptional: true } : {}),
    headers: PAYMENT_HEADERS,
    responses: metered(p),
  }));
}
