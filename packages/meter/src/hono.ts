// Binding for Hono: a middleware that sets c.var.payment. It imports no Node module (its imports are
// checked by packages/facilitator/test/layering.test.ts), so it also runs on workers and Deno.
//
//   app.get('/book', honoMeter(client, { price: 5000n, unit: 'request' }), (c) => c.json(c.var.payment));
import type { MiddlewareHandler } from 'hono';
import { hashWebResponse } from './attest.js';
import type { SvcClient } from './client.js';
import type { GateRequest } from './gate-outcome.js';
import { holdWebResponse } from './hold-web.js';
import { channelPayment } from './payment.js';
import type { Payment } from './payment.js';
import { headerReader, publicRequestUrl } from './request-parts.js';
import type { MeterOptions } from './terms.js';

export interface SvcHonoEnv {
  Variables: { payment: Payment };
}

export function honoMeter(client: SvcClient, options: MeterOptions): MiddlewareHandler<SvcHonoEnv> {
  const gate = client.gate(options);
  return async function svcMeter(c, next) {
    const outcome = await gate.handle(await gateRequestOf(c.req.raw, client.publicUrl));
    if (outcome.kind === 'respond') {
      return new Response(JSON.stringify(outcome.body), { status: outcome.status, headers: outcome.headers });
    }
    if (outcome.kind === 'held') {
      // batch-settlement: the handler's Response is held until the charge is settled.
      c.set('payment', outcome.hold.payment);
      await next();
      const { response, attest } = await holdWebResponse(c.res, outcome.hold, c.error !== undefined);
      // Unset first: Hono would copy the held answer's headers onto a refusal.
      c.res = undefined;
      c.res = response;
      if (attest) hashWebResponse(c.res, (hash) => void attest(hash));
      return undefined;
    }
    c.set('payment', channelPayment(outcome.payment));
    await next();
    for (const [name, value] of Object.entries(outcome.headers)) c.header(name, value);
    const attest = outcome.attest;
    if (attest) hashWebResponse(c.res, (hash) => void attest(hash));
    return undefined;
  };
}

async function gateRequestOf(req: Request, publicUrl: string | undefined): Promise<GateRequest> {
  const url = new URL(req.url);
  return {
    method: req.method,
    url: publicRequestUrl(publicUrl, url.origin, `${url.pathname}${url.search}`),
    header: headerReader(req.headers),
    // The body counts in the receipt's requestHash, as on node:http; read from a copy, so the
    // handler still reads it.
    rawBody: await rawBodyOf(req),
  };
}

async function rawBodyOf(req: Request): Promise<Uint8Array | null> {
  if (req.body === null || req.method === 'GET' || req.method === 'HEAD') return null;
  return new Uint8Array(await req.clone().arrayBuffer());
}
