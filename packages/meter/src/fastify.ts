// Binding for Fastify: a preHandler hook.
//
//   app.get('/book', { preHandler: fastifyMeter(client, { price: 5000n, unit: 'request' }) }, (req) => req.payment);
//
// By the preHandler Fastify has parsed the body: the raw body counts in the receipt's requestHash
// when the seller keeps it as request.rawBody (the fastify-raw-body plugin, or a content-type
// parser with parseAs: 'buffer'), or when request.body is bytes or text.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashResponse } from './attest.js';
import type { SvcClient } from './client.js';
import type { GateRequest } from './gate-outcome.js';
import { holdNodeResponse } from './hold-node.js';
import { channelPayment } from './payment.js';
import type { Payment } from './payment.js';
import { bodyBytes, headerReader, originOf, publicRequestUrl } from './request-parts.js';
import type { MeterOptions } from './terms.js';

declare module 'fastify' {
  interface FastifyRequest {
    payment?: Payment;
  }
}

export function fastifyMeter(client: SvcClient, options: MeterOptions) {
  const gate = client.gate(options);
  return async function svcMeter(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const outcome = await gate.handle(gateRequestOf(request, client.publicUrl));
    if (outcome.kind === 'held') {
      // batch-settlement: Fastify writes its answer (a handler's error included) to reply.raw,
      // which holds it until the charge is settled.
      holdNodeResponse(reply.raw, outcome.hold);
      request.payment = outcome.hold.payment;
      return;
    }
    void reply.headers(outcome.headers);
    if (outcome.kind === 'paid') {
      request.payment = channelPayment(outcome.payment);
      const attest = outcome.attest;
      if (attest) hashResponse(reply.raw, (hash) => void attest(hash));
      return;
    }
    await reply.code(outcome.status).send(outcome.body);
  };
}

function gateRequestOf(request: FastifyRequest, publicUrl: string | undefined): GateRequest {
  return {
    method: request.method,
    url: publicRequestUrl(publicUrl, originOf(request.protocol, request.host), request.url),
    header: headerReader(request.headers),
    rawBody: bodyBytes((request as { rawBody?: unknown }).rawBody, request.body),
  };
}
