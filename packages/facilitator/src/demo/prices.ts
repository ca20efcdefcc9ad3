// The demo seller's live prices: its meter options from configuration (PRICE_* and *_SLICE_*,
// docs/operating.md#configuration, the settings seller-routes.ts reads), turned into terms by the meter's own
// requirementsFor(). llms.txt, the OpenAPI document and the MCP price list all take them from
// here, so none of them can disagree with what the demo's 402 asks.
import type { DemoPrice, SupportedResponse } from '@svc/core';
import { requirementsFor } from '@svc/meter';
import type { MeterOptions } from '@svc/meter';
import type { Config } from '../config.js';

export interface DemoResource {
  method: 'GET' | 'POST';
  path: string;
  options: MeterOptions & { description: string };
}

/** The most tokens GET /demo/summary produces: its price is this many tokens at the chat's per-token price. */
export const SUMMARY_MAX_TOKENS = 100;

/** The demo seller's resources and the meter options it sells them with. */
export function demoResources(c: Config): DemoResource[] {
  return [
    {
      method: 'GET',
      path: '/demo/book',
      options: {
        price: c.PRICE_BOOK_PER_REQUEST,
        unit: 'request',
        description: 'A short book about cumulative vouchers, per request (JSON).',
      },
    },
    {
      method: 'GET',
      path: '/demo/summary',
      options: {
        // A ceiling: the answer charges the tokens it produced (payment.charge), at most this.
        price: c.PRICE_CHAT_PER_TOKEN * BigInt(SUMMARY_MAX_TOKENS),
        unit: 'request',
        description: `A summary, per request, charged per token produced: the price is the most (${SUMMARY_MAX_TOKENS} tokens); a batch-settlement payment is charged the tokens produced (JSON).`,
      },
    },
    {
      method: 'GET',
      path: '/demo/ticker/stream',
      options: {
        price: c.PRICE_TICKER_PER_SECOND,
        unit: 'second',
        sliceSeconds: c.TICKER_SLICE_SECONDS,
        description: 'A price ticker, per second, streamed as server-sent events.',
      },
    },
    {
      method: 'POST',
      path: '/demo/chat',
      options: {
        price: c.PRICE_CHAT_PER_TOKEN,
        unit: 'token',
        sliceTokens: c.CHAT_SLICE_TOKENS,
        description: 'A chat answer, per token, streamed as server-sent events.',
      },
    },
  ];
}

export function demoPrices(c: Config, supported: SupportedResponse): DemoPrice[] {
  return demoResources(c).map(({ method, path, options }) => {
    const terms = requirementsFor(options, '', supported);
    const slice = terms.extra.sliceSeconds ?? terms.extra.sliceTokens ?? null;
    return {
      method,
      path,
      unit: terms.unit,
      price: terms.amount,
      slice,
      sliceAmount: terms.extra.sliceAmount ?? null,
      minDeposit: terms.extra.minDeposit,
      description: options.description,
    };
  });
}
