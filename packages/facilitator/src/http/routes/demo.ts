// The demo seller, written with the public @svc/meter API exactly as an external seller would.
// Its meter reaches this facilitator over HTTP, like any other seller's.
import { fastifyMeter } from '@svc/meter/fastify';
import { svc } from '@svc/meter';
import type { SvcClient } from '@svc/meter';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

const BOOK = {
  title: 'The Cumulative Voucher',
  chapters: [
    'A buyer opens a channel with a deposit: the most it can ever lose.',
    'Each request carries a voucher for the running total, signed by the buyer.',
    'The facilitator checks each voucher in well under a millisecond and keeps the highest.',
    'Now and then it claims the highest voucher on the ledger: thousands of payments, one transaction.',
  ],
};

export interface DemoSeller {
  payTo: string;
}

export function registerDemo(app: FastifyInstance, s: Services, demo: DemoSeller): void {
  // The meter needs the facilitator's URL, known once the server listens: build it on first use.
  let client: SvcClient | null = null;
  const seller = () => (client ??= svc({ facilitator: s.selfUrl(), payTo: demo.payTo, publicUrl: s.publicUrl() }));

  app.get(
    '/demo/book',
    { preHandler: lazyMeter(() => fastifyMeter(seller(), { price: s.config.PRICE_BOOK_PER_REQUEST, unit: 'request', description: 'A short book about cumulative vouchers, per request.' })) },
    (request) => ({ ...BOOK, paidWith: { channelId: request.payment?.channelId, cumulative: request.payment?.cumulative } }),
  );
}

function lazyMeter<T extends (...args: never[]) => unknown>(make: () => T): T {
  let fn: T | null = null;
  return ((...args: Parameters<T>) => (fn ??= make())(...args)) as T;
}
