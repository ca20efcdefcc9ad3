// The demo's controls (spec: GET /demo/info, POST /demo/agent/run, POST /demo/owner/freeze). When
// DEMO_CONTROL_KEY is set, the two POSTs need it in `x-demo-key` (compared in constant time); both
// count as costly for the per-IP rate limit.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AgentRunSchema, DemoInfoSchema, ErrorBodySchema, SvcError, zAddress } from '@svc/core';
import { z } from 'zod';
import type { Demo } from './demo.js';
import { demoPrices } from './prices.js';
import { defineRoute } from '../http/route.js';
import type { AnyRoute } from '../http/route.js';
import type { Config } from '../config.js';
import type { SupportedResponse } from '@svc/core';

/** What this module uses of the domain. */
export interface DemoControlDeps {
  config: Config;
  supported: () => SupportedResponse;
}

const TAGS = ['demo'];

const FreezeBody = z.strictObject({ frozen: z.boolean({ error: 'frozen must be true or false' }) });
const FreezeResultSchema = z
  .object({ account: zAddress, frozen: z.boolean(), tx: z.string() })
  .meta({ id: 'DemoFreezeResult' });

export function demoControlRoutes(deps: DemoControlDeps, demo: Demo): AnyRoute[] {
  const requireKey = controlKeyCheck(deps.config.DEMO_CONTROL_KEY);
  // The key is asked for only when DEMO_CONTROL_KEY is set: the document says what this server wants.
  const controlAuth = deps.config.DEMO_CONTROL_KEY === undefined ? undefined : ({ scheme: 'demoKey' } as const);
  const refusals = {
    401: { description: 'Missing or wrong x-demo-key (when DEMO_CONTROL_KEY is set)', schema: ErrorBodySchema },
    409: { description: 'A run is under way, or the ledger cannot hold the demo world', schema: ErrorBodySchema },
    429: { description: 'Costly-request rate limit (Retry-After)', schema: ErrorBodySchema },
  };
  const needWorld = () => {
    if (!demo.available)
      throw new SvcError(
        'CONFLICT',
        'The demo agent and its world need the local ledger; this facilitator runs on another ledger.',
      );
  };
  return [
    defineRoute({
      method: 'GET',
      url: '/demo/info',
      summary:
        'The demo: live prices and slices, the seller, the seeded world (smart account, owner, agent key, investors), whether a control key is required, and the agent’s current or last run.',
      tags: TAGS,
      responses: { 200: { description: 'The demo', schema: DemoInfoSchema } },
      handler: () => {
        const known = demo.ready?.account ?? demo.seeder.knownAccount();
        return {
          seller: demo.payTo,
          resources: demoPrices(deps.config, deps.supported()),
          controlKeyRequired: deps.config.DEMO_CONTROL_KEY !== undefined,
          world: demo.available
            ? {
                ready: demo.ready !== null,
                account: known,
                owner: demo.seeder.owner.address,
                agentKey: demo.seeder.agent.address,
                investors: demo.seeder.investors.map((k) => k.address),
              }
            : null,
          agent: { available: demo.available, running: demo.agent.busy, run: demo.agent.current() },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/demo/agent/run',
      summary:
        'Starts the built-in buyer agent: it opens a channel from its smart account, buys the book, streams the ticker and the chat, and is stopped once by its owner. One run at a time; follow it in GET /demo/info and GET /events.',
      tags: TAGS,
      costly: true,
      auth: controlAuth,
      responses: { 202: { description: 'The run, started', schema: AgentRunSchema }, ...refusals },
      handler: ({ request, reply }) => {
        requireKey(request);
        needWorld();
        const run = demo.agent.start();
        void reply.code(202);
        return run;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/demo/owner/freeze',
      summary:
        "Freezes or unfreezes the demo smart account on the ledger (account.freeze, signed by its owner): a frozen account's vouchers are refused with ACCOUNT_FROZEN and its streams end.",
      tags: TAGS,
      costly: true,
      auth: controlAuth,
      body: FreezeBody,
      responses: {
        200: { description: 'Done', schema: FreezeResultSchema },
        ...refusals,
        503: { description: 'Ledger unavailable', schema: ErrorBodySchema },
      },
      handler: async ({ body, request }) => {
        requireKey(request);
        needWorld();
        const world = await demo.world().catch((err: unknown) => {
          throw new SvcError('LEDGER_UNAVAILABLE', `The demo world could not be seeded: ${(err as Error).message}`);
        });
        const { tx } = await demo.ledger().freeze({ owner: world.owner, account: world.account, frozen: body.frozen });
        return { account: world.account, frozen: body.frozen, tx };
      },
    }),
  ];
}

/** Checks x-demo-key against the configured key in constant time (digests of equal length). */
function controlKeyCheck(key: string | undefined): (request: FastifyRequest) => void {
  if (key === undefined) return () => undefined;
  const expected = createHash('sha256').update(key).digest();
  return (request) => {
    const given = request.headers['x-demo-key'];
    const digest = createHash('sha256')
      .update(typeof given === 'string' ? given : '')
      .digest();
    if (typeof given !== 'string' || !timingSafeEqual(digest, expected))
      throw new SvcError('UNAUTHORIZED', 'This demo control needs the x-demo-key header with the demo control key.');
  };
}
