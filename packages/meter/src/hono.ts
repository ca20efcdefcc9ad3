// Binding for Hono: a middleware that sets c.var.payment.
//
//   app.get('/book', honoMeter(client, { price: 5000n, unit: 'request' }), (c) => c.json(c.var.payment));
import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { PaymentResponse } from '@svc/core';
import type { SvcClient } from './client.js';
import type { MeterOptions } from './terms.js';

export interface SvcHonoEnv {
  Variables: { payment: PaymentResponse };
}

export function honoMeter(client: SvcClient, options: MeterOptions): MiddlewareHandler<SvcHonoEnv> {
  const gate = client.gate(options);
  return async function svcMeter(c, next) {
    const url = new URL(c.req.url);
    const outcome = await gate.handle({
      method: c.req.method,
      url: client.publicUrl ? `${client.publicUrl}${url.pathname}${url.search}` : url.href,
      header: (name) => c.req.header(name),
    });
    if (outcome.kind === 'respond') {
      return new Response(JSON.stringify(outcome.body), { status: outcome.status, headers: outcome.headers });
    }
    c.set('payment', outcome.payment);
    await next();
    for (const [name, value] of Object.entries(outcome.headers)) c.header(name, value);
    const attest = outcome.attest;
    if (attest) {
      // The body is read from a copy, after the response is handed back.
      void c.res
        .clone()
        .arrayBuffer()
        .then((body) => attest(createHash('sha256').update(new Uint8Array(body)).digest('hex')))
        .catch(() => undefined);
    }
    return undefined;
  };
}
