// Health (exempt from rate limits).
import { StatsSchema } from '@svc/core';
import { z } from 'zod';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';
import type { Leadership } from '../../cluster/leadership.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../domain/clock.js';
import type { LatestLedger } from '../../domain/latest-ledger.js';
import type { Reconciler } from '../../domain/reconciler.js';
import type { Stats } from '../../domain/stats.js';
import type { StoreHealth } from '../../domain/store-health.js';
import type { Store } from '../../store/port.js';
import type { Keypair } from '@svc/core';
import type { LedgerInfo } from '@svc/ledger';

/** What this module uses of the domain. */
export interface MetaDeps {
  clock: Clock;
  config: Config;
  keys: Keypair;
  latestLedger: LatestLedger;
  /** Whether this instance runs the singleton work (always, on SQLite). */
  leadership: Leadership;
  ledgerInfo: LedgerInfo;
  /** Reconciling the store with the ledger, from the start (/health). */
  reconciler: Reconciler;
  startedAt: number;
  stats: Stats;
  store: Store;
  /** Whether this instance can write to its store (/health). */
  storeHealth: StoreHealth;
}

/** Retry-After of /health while the store cannot write: about one leadership poll. */
const STORE_RETRY_AFTER_S = 1;

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    network: z.string(),
    latestLedger: z.number().int(),
    store: z.enum(['sqlite', 'postgres']),
    storeWritable: z.boolean().meta({
      description: 'Whether this instance can write to its store now (false from a failed commit until one succeeds).',
    }),
    ledger: z.object({ reachable: z.boolean(), mode: z.string() }),
    reconciliation: z
      .object({
        state: z.enum(['running', 'waiting-for-ledger', 'done']).meta({
          description:
            'The comparison of every open channel in the store with the ledger, from the start: running, waiting for a ledger that does not answer, or done.',
        }),
        storeWasBehind: z.boolean().meta({
          description:
            'The store was older than this data directory had seen (an older copy or an empty store put in place): until the reconciliation is done, no voucher is taken on a channel the ledger cannot be read for.',
        }),
      })
      .meta({ description: 'While it lasts, status is degraded.' }),
    receiptSigner: z.string(),
    uptimeSeconds: z.number(),
    leader: z.boolean().meta({
      description:
        'Whether this instance runs the claim scheduler and the ledger watcher (one instance of a cluster; always, alone on SQLite).',
    }),
  })
  .meta({ id: 'Health' });

export function metaRoutes(deps: MetaDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/stats',
      summary: 'Totals: vouchers, on-chain transactions, volume, median verification latency.',
      tags: ['meta'],
      responses: { 200: { description: 'Stats', schema: StatsSchema } },
      handler: () => deps.stats.view(),
    }),
    defineRoute({
      method: 'GET',
      url: '/health',
      unlimited: true,
      summary:
        'Liveness, whether this instance can write to its store, and the state of the ledger connection. 503 while this instance cannot write: a load balancer should send payments elsewhere.',
      tags: ['meta'],
      responses: {
        200: {
          description: 'Health: this instance can write (status degraded: the ledger does not answer)',
          schema: HealthSchema,
        },
        503: {
          description: 'Health: this instance cannot write to its store now (storeWritable false)',
          schema: HealthSchema,
        },
      },
      handler: async ({ reply }) => {
        let reachable = true;
        try {
          await deps.latestLedger.refresh();
        } catch {
          reachable = false;
        }
        const storeWritable = deps.storeHealth.writable;
        deps.storeHealth.probe(deps.store);
        if (!storeWritable) void reply.code(503).header('retry-after', String(STORE_RETRY_AFTER_S));
        const reconciliation = {
          state: deps.reconciler.state,
          storeWasBehind: deps.reconciler.storeWasBehind,
        };
        return {
          status: reachable && storeWritable && reconciliation.state === 'done' ? 'ok' : 'degraded',
          network: deps.ledgerInfo.network,
          latestLedger: deps.latestLedger.latestLedger,
          store: deps.store.kind,
          storeWritable,
          ledger: { reachable, mode: deps.config.LEDGER_URL ? 'remote' : 'local' },
          reconciliation,
          receiptSigner: deps.keys.address,
          uptimeSeconds: Math.round((deps.clock.now() - deps.startedAt) / 1000),
          leader: deps.leadership.isLeader,
        };
      },
    }),
  ];
}
