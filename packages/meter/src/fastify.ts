// Binding for Fastify: a preHandler hook.
//
//   app.get('/book', { preHandler: fastifyMeter(client, { price: 5000n, unit: 'request' }) }, (req) => req.payment);
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PaymentResponse } from '@svc/core';
import { hashResponse } from './attest.js';
import type { SvcClient } from './client.js';
import type { MeterOptions } from './terms.js';

declare module 'fastify' {
  interface FastifyRequest {
    payment?: PaymentResponse;
  }
}

export function fastifyMeter(client: SvcClient, options: MeterOptions) {
  const gate = client.gate(options);
  return async function svcMeter(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const origin = client.publicUrl ?? `${request.protocol}://${request.host}`;
    // The raw body where the seller kept it (fastify-raw-body, or a parser with parseAs: 'buffer'):
    // by the preHandler, request.body is already parsed, and the receipt hashes bytes.
    const body: unknown = (request as { rawBody?: unknown }).rawBody ?? request.body;
    const outcome = await gate.handle({
      method: request.method,
      url: `${origin}${request.url}`,
      header: (name) => {
        const v = request.headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      },
      rawBody: typeof body === 'string' || body instanceof Uint8Array ? body : null,
    });
    void reply.headers(outcome.headers);
    if (outcome.kind === 'paid') {
      request.payment = outcome.payment;
      const attest = outcome.attest;
      if (attest) hashResponse(reply.raw, (hash) => void attest(hash));
      return;
    }
    await reply.code(outcome.status).send(outcome.body);
  };
}
