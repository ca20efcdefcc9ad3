// Health (exempt from rate limits).
import { z } from 'zod';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import type { AnyRoute } from '../route.js';

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    network: z.string(),
    latestLedger: z.number().int(),
    store: z.enum(['sqlite', 'postgres']),
    storeWritable: z.boolean().meta({ description: 'Whether this instance can write to its store now (false from a failed commit until one succeeds).' }),
    ledger: z.object({ reachable: z.boolean(), mode: z.string() }),
    receiptSigner: z.string(),
    uptimeSeconds: z.number(),
    leader: z.boolean().meta({ description: 'Whether this instance runs the claim scheduler and the ledger watcher (one instance of a cluster; always, alone on SQLite).' }),
  })
  .meta({ id: 'Health' });

export const StatsSchema = z
  .object({
    vouchersAccepted: z.number().int(),
    vouchersRejected: z.number().int(),
    chainTxCount: z.number().int(),
    volume: z.string(),
    channelsOpen: z.number().int(),
    medianVerifyLatencyMs: z.number().nullable(),
    vouchersPerClaim: z.number().nullable(),
    exactEquivalent: z.object({ txCount: z.number().int(), seconds: z.number() }),
  })
  .meta({ id: 'Stats' });

export function metaRoutes(s: Services): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/stats',
      summary: 'Totals: vouchers, on-chain transactions, volume, median verification latency.',
      tags: ['meta'],
      responses: { 200: { description: 'Stats', schema: StatsSchema } },
      handler: () => s.stats.view(),
    }),
    defineRoute({
      method: 'GET',
      url: '/health',
      unlimited: true,
      summary: 'Liveness, whether this instance can write to its store, and the state of the ledger connection.',
      tags: ['meta'],
      responses: { 200: { description: 'Health', schema: HealthSchema } },
      handler: async () => {
        let reachable = true;
        try {
          await s.ledgerClock.refresh();
        } catch {
          reachable = false;
        }
        const storeWritable = s.storeHealth.writable;
        s.storeHealth.probe(s.store);
        return {
          status: reachable && storeWritable ? 'ok' : 'degraded',
          network: s.ledgerInfo.network,
          latestLedger: s.ledgerClock.latestLedger,
          store: s.store.kind,
          storeWritable,
          ledger: { reachable, mode: s.config.LEDGER_URL ? 'remote' : 'local' },
          receiptSigner: s.keys.address,
          uptimeSeconds: Math.round((s.clock.now() - s.startedAt) / 1000),
          leader: s.leadership.isLeader,
        };
      },
    }),
  ];
}
