// GET /events: server-sent events, the last 200 then live (exempt from the general rate limit;
// at most SSE_MAX_PER_IP per address and SSE_MAX_TOTAL in all, the next refused with 429).
import { ErrorBodySchema, SvcError, zAddress, zChannelId } from '@svc/core';
import { z } from 'zod';
import { BACKLOG, REPLAY_MAX } from './feed.js';
import type { EventFeed } from './feed.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

const SSE_RETRY_SECONDS = 5;
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

export function eventRoutes(feed: EventFeed): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/events',
      unlimited: true,
      summary: `Server-sent events: the last ${BACKLOG} events, then live ones. Last-Event-ID resumes after that id, from the store (up to ${REPLAY_MAX} events; past that a feed.gap frame names the ids not sent, then the last ${BACKLOG}); an id beyond the newest gets a feed.reset frame, then the last ${BACKLOG}. account.frozen with frozen false is a thaw.`,
      tags: ['events'],
      query: z.object({ account: zAddress.optional(), channelId: zChannelId.optional() }),
      headers: [
        { name: 'Last-Event-ID', description: 'Resume after this event id (what the last frame’s `id:` said).' },
      ],
      responses: {
        200: {
          description: 'An event stream: `id:`, `event: <type>`, `data: <event JSON>`',
          contentType: 'text/event-stream',
        },
        400: { description: 'Bad filter or Last-Event-ID', schema: ErrorBodySchema },
        429: { description: 'Too many open event streams', schema: ErrorBodySchema },
      },
      handler: async ({ query, request, reply }) => {
        const header = request.headers['last-event-id'];
        const last = typeof header === 'string' && header !== '' ? header : null;
        if (last !== null && !/^[0-9]{1,15}$/.test(last))
          throw new SvcError('BAD_REQUEST', 'Last-Event-ID must be the id of an event.');
        const refusal = feed.refusal(request.ip);
        if (refusal)
          throw new SvcError('RATE_LIMITED', `Too many event streams: ${refusal}.`, { retryAfter: SSE_RETRY_SECONDS });
        // HEAD: the stream's headers, and no stream. (Node drops a HEAD answer's body writes and
        // never flushes its head, so a stream attached to one would answer nothing and hold a slot.)
        if (request.method === 'HEAD') return reply.headers(STREAM_HEADERS).code(200).send();
        void reply.hijack();
        const res = reply.raw;
        for (const [name, value] of Object.entries(reply.getHeaders()))
          if (value !== undefined) res.setHeader(name, value);
        res.writeHead(200, { ...STREAM_HEADERS, connection: 'keep-alive' });
        res.write(`retry: ${SSE_RETRY_SECONDS * 1000}\n\n`);
        res.socket?.setNoDelay(true);
        await feed.attach(
          res,
          request.ip,
          {
            ...(query.account ? { account: query.account } : {}),
            ...(query.channelId ? { channelId: BigInt(query.channelId) } : {}),
          },
          last === null ? null : Number(last),
        );
      },
    }),
  ];
}
