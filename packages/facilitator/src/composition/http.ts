// The third step of the composition root: HTTP on the domain — the Fastify app with every route
// (the demo seller's among them), the event feed and, with the in-process ledger, the ledger's own routes.
import type { FastifyInstance } from 'fastify';
import type { SignedLedgerTx } from '@svc/core';
import { ledgerRoutes } from '@svc/ledger';
import type { LocalLedger, TxResult } from '@svc/ledger';
import { PostgresStreamPresence } from '../cluster/stream-presence.js';
import { buildHttp } from '../http/app.js';
import { EventFeed } from '../http/events/feed.js';
import type { AnyRoute } from '../http/route.js';
import type { Adapters } from './adapters.js';
import type { Domain } from './domain.js';

export interface Http {
  app: FastifyInstance;
  routes: AnyRoute[];
  feed: EventFeed;
  /** The event-stream counts shared with the other instances (null: one instance). */
  presence: PostgresStreamPresence | null;
}

export async function createHttp(a: Adapters, domain: Domain, options: { consoleDir?: string }): Promise<Http> {
  const { config, log } = a;
  const { services } = domain;
  const feed = new EventFeed(a.store, a.bus, {
    perIp: config.SSE_MAX_PER_IP,
    total: config.SSE_MAX_TOTAL,
    stallMs: config.SSE_STALL_SECONDS * 1000,
  });
  const { app, routes } = await buildHttp(services, feed, {
    logger: log,
    trustProxy: config.TRUST_PROXY,
    corsOrigins: config.CORS_ORIGINS,
    limiters: a.limiters,
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
  });
  // The in-process ledger's transactions that touch a channel (a payee's close, a top-up) are
  // applied before their answer leaves: no voucher is accepted on a channel after its close was
  // answered. A standalone ledger's are seen by the watcher's next poll.
  if (a.localLedger) {
    const ledger = afterChannelTx(a.localLedger, () => domain.watcher.tick());
    await app.register(ledgerRoutes, { prefix: '/ledger', ledger });
  }
  // The event-stream caps count every instance's streams.
  const presence =
    a.sharedSchema !== null
      ? await PostgresStreamPresence.open({
          url: config.DATABASE_URL!,
          schema: a.sharedSchema,
          local: () => feed.localCounts(),
          onError: (err) => log.warn({ err }, 'could not share the event-stream counts'),
        })
      : null;
  if (presence) feed.share(presence);
  return { app, routes, feed, presence };
}

/** The ledger, whose submit() also runs `after` (awaited, failures ignored) for a successful transaction with channel events. */
function afterChannelTx(ledger: LocalLedger, after: () => Promise<void>): LocalLedger {
  return new Proxy(ledger, {
    get(target, prop) {
      if (prop === 'submit') {
        return async (tx: SignedLedgerTx): Promise<TxResult> => {
          const result = await target.submit(tx);
          if (result.status === 'SUCCESS' && result.events.some((e) => e.type.startsWith('channel.')))
            await after().catch(() => undefined);
          return result;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
