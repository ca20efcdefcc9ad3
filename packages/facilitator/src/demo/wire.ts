// The demo seller's wire shapes: what its resources take (checked before the meter asks for a
// payment) and answer, and the 402 its meter answers (spec "Seller-side behaviour of a metered
// endpoint"), for seller-routes.ts's route declarations.
import { ErrorBodySchema, PaymentRequiredSchema } from '@svc/core';
import { z } from 'zod';
import type { DemoPrice } from '@svc/core';
import { SUMMARY_MAX_TOKENS } from './prices.js';
import type { RouteDoc } from '../http/openapi/document.js';

/** The most seconds GET /demo/ticker/stream streams. */
export const TICKER_MAX_SECONDS = 3600;

export const BookSchema = z.object({
  title: z.string(),
  chapters: z.array(z.string()),
  paidWith: z
    .object({ channelId: z.string(), cumulative: z.string() })
    .meta({ description: 'The voucher this request was paid with.' }),
});
export const SummarySchema = z.object({
  summary: z.string(),
  tokens: z.number().int().meta({ description: 'The tokens produced.' }),
  perToken: z.string().meta({ description: 'The price of one token (base units).' }),
  charged: z.string().meta({
    description:
      'What this request was charged: the tokens produced × perToken for a batch-settlement payment (also PAYMENT-RESPONSE extra.chargedAmount), the price for a channel voucher (exact).',
  }),
});
export const SummaryQuery = z.object({
  tokens: z.coerce.number().int().min(1).max(SUMMARY_MAX_TOKENS).default(SUMMARY_MAX_TOKENS).meta({
    description: 'The most tokens to produce; the demo text may run out first (and is charged what it produced).',
  }),
});
export const ChatBody = z
  .object({
    prompt: z
      .string()
      .max(4096)
      .optional()
      .meta({ description: 'The question (the demo answers with its built-in text).' }),
  })
  .meta({ id: 'DemoChatRequest' });
export const TickerQuery = z.object({
  seconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(TICKER_MAX_SECONDS)
    .default(60)
    .meta({ description: 'How many one-second ticks to stream.' }),
});

export const PAYMENT_HEADERS = [
  {
    name: 'PAYMENT-SIGNATURE',
    description: 'Base64 JSON payment payload (x402 v2) carrying a signed voucher (docs/protocol.md#payment-payload).',
  },
  { name: 'X-PAYMENT', description: 'The same, for x402 v1 clients.' },
];

/** The answers of a metered resource: paid, its 402, the meter's limits. */
export function metered(price: DemoPrice): RouteDoc['responses'] {
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

/** A resource's summary, with its price. */
export function priceSummary(p: DemoPrice): string {
  const per =
    p.slice === null
      ? 'per request'
      : `per ${p.unit}, paid ${p.slice} ${p.unit}s (${p.sliceAmount ?? ''} base units) per voucher`;
  return `Demo seller: ${p.description} Price ${p.price} base units ${per}; minimum deposit ${p.minDeposit}.`;
}
