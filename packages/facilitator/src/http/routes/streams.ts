// Streaming sessions for `token` and `second` units (spec state table; docs/protocol.md#streams), and the
// voucher endpoint buyers post each slice's voucher to. The session's wire is @svc/core's
// (stream-wire.ts), shared with the meter; imported here under this module's short names.
import {
  ErrorBodySchema,
  STREAM_WAIT_DEFAULT_MS as WAIT_DEFAULT_MS,
  STREAM_WAIT_MAX_MS as WAIT_MAX_MS,
  STREAM_WAIT_MIN_MS as WAIT_MIN_MS,
  StreamEndSchema as EndSchema,
  StreamEndedSchema as EndedSchema,
  StreamOpenSchema as OpenSchema,
  StreamOpenedSchema as OpenedSchema,
  StreamVoucherSchema as VoucherSchema,
  StreamWaitResultSchema as WaitResultSchema,
  StreamWaitSchema as WaitSchema,
  SvcError,
  VoucherAcceptedSchema,
  formatUnits,
  zChannelId,
  zStreamId,
} from '@svc/core';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requireSeller } from '../seller-auth.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import type { SellerTokens } from '../../domain/seller-tokens.js';
import type { StreamSessions } from '../../domain/streams.js';
import type { Store } from '../../store/port.js';

/** What this module uses of the domain. */
export interface StreamDeps {
  /** The facilitator's public base URL (PUBLIC_URL, or derived from the bound address). */
  publicUrl: () => string;
  /** Seller tokens: the credential of a payee's side (http/seller-auth.ts). */
  sellerTokens: SellerTokens;
  store: Store;
  streams: StreamSessions;
}
const TAGS = ['streams'];

const StreamParams = z.object({ id: zStreamId });

/** The session's seller: its token. */
const SELLER_AUTH = { scheme: 'sellerToken' } as const;

/** A session's seller only: stream ids are public in stream.started events. */
async function ownSession(deps: StreamDeps, request: FastifyRequest, id: string): Promise<void> {
  const stream = await deps.store.getStream(id);
  if (!stream) throw new SvcError('STREAM_NOT_FOUND', `No stream session ${id}.`);
  requireSeller(deps.sellerTokens, request, stream.payTo);
}

const errors = (codes: Record<number, string>) =>
  Object.fromEntries(
    Object.entries(codes).map(([status, description]) => [status, { description, schema: ErrorBodySchema }]),
  );

export function streamRoutes(deps: StreamDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/streams',
      summary: 'Opens a streaming session for a first slice already paid (receiptId).',
      tags: TAGS,
      body: OpenSchema,
      auth: SELLER_AUTH,
      responses: {
        200: { description: 'Opened', schema: OpenedSchema },
        ...errors({
          400: 'Malformed',
          401: 'No valid seller token',
          403: 'Another seller’s token',
          409: 'receiptId unusable or channel not open',
          429: 'Too many open sessions',
        }),
      },
      handler: async ({ body, request }) => {
        // Only the payee's side: receipt ids are public (events, receipts), a seller token is not.
        requireSeller(deps.sellerTokens, request, body.payTo);
        const { stream, deposit } = await deps.streams.open({
          channelId: BigInt(body.channelId),
          payTo: body.payTo,
          resource: body.resource,
          unit: body.unit,
          sliceCost: BigInt(body.sliceCost),
          initialCharge: BigInt(body.initialCharge),
          receiptId: body.receiptId,
          ...(body.scheme ? { scheme: body.scheme } : {}),
        });
        return {
          streamId: stream.id,
          requiredCumulative: formatUnits(stream.required),
          voucherUrl: `${deps.publicUrl()}/channels/${stream.channelId}/voucher`,
          deposit: formatUnits(deposit),
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/streams/:id/wait',
      summary: 'Waits (long poll, 1–30 s, default 10 s) for the voucher of the next slice.',
      tags: TAGS,
      params: StreamParams,
      body: WaitSchema,
      auth: SELLER_AUTH,
      responses: {
        200: { description: 'paid, or why the session stopped', schema: WaitResultSchema },
        ...errors({
          401: 'No valid seller token',
          403: 'Another seller’s session',
          404: 'No such session',
          409: 'The session ended',
        }),
      },
      handler: async ({ params, body, request, reply }) => {
        await ownSession(deps, request, params.id);
        const timeoutMs = Math.min(WAIT_MAX_MS, Math.max(WAIT_MIN_MS, body.timeoutMs ?? WAIT_DEFAULT_MS));
        // The seller hung up: stop waiting (the request's own 'close' fires once its body is read).
        const gone = new AbortController();
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        const result = await deps.streams.wait(params.id, timeoutMs, gone.signal);
        if (result.kind !== 'paid') return result;
        return {
          kind: 'paid',
          receipt: result.receipt,
          requiredCumulative: formatUnits(result.requiredCumulative),
          deposit: formatUnits(result.deposit),
        };
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/streams/:id',
      summary: 'The seller ends the session with the reason and the units it delivered.',
      tags: TAGS,
      params: StreamParams,
      body: EndSchema,
      auth: SELLER_AUTH,
      responses: {
        200: { description: 'What the session was charged', schema: EndedSchema },
        ...errors({ 401: 'No valid seller token', 403: 'Another seller’s session', 404: 'No such session' }),
      },
      handler: async ({ params, body, request }) => {
        await ownSession(deps, request, params.id);
        const ended = await deps.streams.end(params.id, body.reason, body.units);
        return {
          charged: formatUnits(ended.charged),
          vouchers: ended.vouchers,
          reason: ended.reason ?? body.reason,
          units: ended.units,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/channels/:id/voucher',
      summary: "A voucher for a stream session's next slice (or a bare voucher for the channel).",
      description:
        'With a streamId, one voucher pays one slice, and one wait of the seller delivers it: sign the requiredCumulative of the latest payment-required event, and post it after that event. A voucher that adds more than one slice to the channel, or one posted while the slice before it is paid and not yet taken by the seller’s wait, is refused with 409 CONFLICT and nothing is charged.',
      tags: TAGS,
      params: z.object({ id: zChannelId }),
      body: VoucherSchema,
      responses: {
        200: { description: 'Accepted', schema: VoucherAcceptedSchema },
        ...errors({
          402: 'The voucher was rejected (reason code)',
          404: 'No such session',
          409: 'The session ended, a slice is already paid and waiting, or the voucher adds more than one slice (nothing charged)',
          429: 'Voucher rate limit',
        }),
      },
      handler: async ({ params, body }) => {
        const out = await deps.streams.voucher(
          BigInt(params.id),
          {
            ...(body.streamId ? { streamId: body.streamId } : {}),
            cumulative: BigInt(body.cumulative),
            signature: body.signature.toLowerCase(),
          },
          deps.publicUrl(),
        );
        return {
          accepted: true,
          streamId: out.streamId,
          requiredCumulative: out.requiredCumulative === null ? null : formatUnits(out.requiredCumulative),
          receipt: out.receipt,
        };
      },
    }),
  ];
}
