// The composition root, in steps read top to bottom: the logger first, then the adapters the
// configuration names (composition/adapters.ts), the domain on them (composition/domain.ts), HTTP on
// the domain (composition/http.ts), the metrics on both when they are on (composition/metrics.ts),
// and the start/stop sequence below.
//
//   const f = await createFacilitator({ config: loadConfig() });
//   const url = await f.listen();
//   …
//   await f.close();
import type { FastifyInstance } from 'fastify';
import type { Ledger, LedgerInfo, LocalLedger } from '@svc/ledger';
import type { Leadership } from './cluster/leadership.js';
import { openAdapters } from './composition/adapters.js';
import type { Adapters } from './composition/adapters.js';
import { createDomain } from './composition/domain.js';
import type { Domain } from './composition/domain.js';
import { createHttp } from './composition/http.js';
import type { Http } from './composition/http.js';
import { instrument } from './composition/metrics.js';
import type { Config } from './config.js';
import type { ClaimScheduler } from './domain/claim-scheduler.js';
import { SYSTEM_CLOCK } from './domain/clock.js';
import type { Clock } from './domain/clock.js';
import type { FloatHistory } from './domain/float-history.js';
import { saveLedgerTime, startLatestLedger } from './domain/ledger-connection.js';
import type { LedgerWatcher } from './domain/ledger-watcher.js';
import type { AnyRoute } from './http/route.js';
import { createLogger } from './logger.js';
import type { Services } from './services.js';
import type { Store } from './store/port.js';

export { channelView } from './composition/domain.js';

/** How often the ledger's time is kept in the store, for a restart while the ledger is down. */
const LEDGER_TIME_SAVE_MS = 10_000;
/** How often the data directory's mark of the store's last event is brought up to date. */
const HIGH_WATER_EVERY_MS = 2_000;

export interface FacilitatorOptions {
  config: Config;
  clock?: Clock;
  /** A ledger to use instead of the one the configuration names (tests share one). */
  ledger?: Ledger;
  /** How often the ledger watcher polls, in ms (default: about a fifth of a ledger, at most 1 s). */
  watchPollMs?: number;
  /** Sign receipts on the main thread, not the threadpool (default: on machines of two cores or fewer). */
  signReceiptsInline?: boolean;
  /** The web console's build to serve at / (default: packages/facilitator/console). */
  consoleDir?: string;
}

export interface Facilitator {
  readonly app: FastifyInstance;
  /** The facilitator's key: it signs receipts, and batch-settlement channels are bound to it (receiver authorizer). */
  readonly address: string;
  /** Its records: channels, vouchers, receipts, streams and the event log. */
  readonly store: Store;
  /** The ledger it settles on: network, passphrase, contracts, asset. */
  readonly ledgerInfo: LedgerInfo;
  /** Whether this instance does the cluster's background work now (claims, reconciliation). */
  readonly leadership: Leadership;
  /** The domain's parts, for tools and tests that drive them below HTTP. */
  readonly services: Services;
  readonly routes: AnyRoute[];
  readonly scheduler: ClaimScheduler;
  readonly watcher: LedgerWatcher;
  readonly floatHistory: FloatHistory;
  /** The in-process local ledger, when this facilitator runs one. */
  readonly localLedger: LocalLedger | null;
  readonly demoPayTo: string | null;
  /** Starts the background work and the HTTP server; resolves the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** One step of the start/stop sequence: started in order, stopped in reverse order. */
interface Step {
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export async function createFacilitator(options: FacilitatorOptions): Promise<Facilitator> {
  const { config } = options;
  const log = createLogger(config.LOG_LEVEL);
  const clock = options.clock ?? SYSTEM_CLOCK;
  const adapters = await openAdapters(config, log, options.ledger ? { ledger: options.ledger } : {});
  const domain = await createDomain(adapters, {
    clock,
    ...(options.watchPollMs !== undefined ? { watchPollMs: options.watchPollMs } : {}),
    ...(options.signReceiptsInline !== undefined ? { signReceiptsInline: options.signReceiptsInline } : {}),
  });
  await startLatestLedger(domain.services.latestLedger, adapters.store, clock.now());
  const http = await createHttp(adapters, domain, options.consoleDir ? { consoleDir: options.consoleDir } : {});
  if (domain.services.metrics) instrument(domain.services.metrics, adapters, domain, http);
  const steps = lifecycle(adapters, domain, http, clock);
  return {
    app: http.app,
    address: domain.services.keys.address,
    store: domain.services.store,
    ledgerInfo: domain.services.ledgerInfo,
    leadership: domain.services.leadership,
    services: domain.services,
    routes: http.routes,
    scheduler: domain.scheduler,
    watcher: domain.watcher,
    floatHistory: domain.floatHistory,
    localLedger: adapters.localLedger,
    demoPayTo: domain.services.demo?.payTo ?? null,
    async listen() {
      for (const step of steps) await step.start?.();
      return domain.address.bound();
    },
    async close() {
      // Every step's stop runs, started or not (a listen() that failed half-way is closed too).
      for (const step of [...steps].reverse()) await step.stop?.();
    },
  };
}

/**
 * The start/stop sequence. Stopped in reverse: the demo and the event streams end before the HTTP
 * server closes (it waits for open connections), the background work before the store and bus, the
 * adapters last.
 */
function lifecycle(a: Adapters, domain: Domain, http: Http, clock: Clock): Step[] {
  const { config, log, store, bus } = a;
  const { services, watcher, scheduler, floatHistory, leadership, pollMs } = domain;
  const { latestLedger, streams, stats, catalog, demo } = services;
  const shared = a.sharedSchema !== null;
  return [
    // DATA_DIR is let go last, once nothing of this process writes there any more.
    { stop: () => a.dataDirLock?.release() },
    { stop: () => a.ledger.close() },
    { stop: () => a.limiters.close() },
    { stop: () => store.close() },
    { stop: () => bus.close() },
    // Whether the store is older than this data directory has seen: then no stored record stands
    // in for the ledger until the two are reconciled (domain/reconciler.ts).
    { start: () => domain.reconciler.prepare() },
    { start: () => domain.mark.start(HIGH_WATER_EVERY_MS), stop: () => domain.mark.stop() },
    {
      // Catch up with the ledger before serving, so no channel state is stale at the first voucher
      // (on a shared database the leader's watcher keeps the store current instead). A ledger that
      // does not answer is no reason not to serve: the watcher keeps trying.
      start: async () => {
        if (shared) return;
        await watcher
          .tick()
          .catch((err: unknown) =>
            log.warn({ err }, 'could not catch up with the ledger before serving; the watcher keeps trying'),
          );
      },
    },
    {
      // Every open channel compared with the ledger, in the background; a channel's first voucher
      // reads the ledger itself meanwhile (domain/channel-book.ts).
      start: () => domain.reconciler.start(),
      stop: () => domain.reconciler.stop(),
    },
    {
      // Every instance reads the ledger's time (the verifier's expiry check), and keeps the reading
      // for a restart while the ledger is down.
      start: () =>
        latestLedger.start({
          pollMs,
          saveEveryMs: LEDGER_TIME_SAVE_MS,
          save: () => saveLedgerTime(latestLedger, store, clock.now()),
        }),
      stop: () => latestLedger.stop(),
    },
    {
      // No seller loop survives a restart: sessions left open end now, with what they were charged.
      // On a shared database other instances may be serving open sessions right now: there the
      // idle sweep ends an orphan (STREAM_IDLE_SECONDS without a wait or a voucher) instead.
      start: async () => {
        if (shared) return;
        const orphans = await streams.abortOrphans();
        if (orphans > 0)
          log.warn({ sessions: orphans }, 'ended stream sessions left open by the previous run (ABORTED)');
      },
    },
    { start: () => stats.start(bus) },
    { start: () => catalog.start(), stop: () => catalog.stop() },
    { stop: () => http.presence?.close() },
    {
      // The scheduler, the watcher and the float sampler run on the leader only.
      start: () =>
        leadership.run({
          gain: async () => {
            watcher.start();
            scheduler.start();
            floatHistory.start();
            // Taking over from a leader that died: what was due is claimed now, not an interval later.
            if (shared) await scheduler.tick();
          },
          lose: async () => {
            await scheduler.stop();
            await watcher.stop();
            await floatHistory.stop();
          },
        }),
      stop: async () => {
        await leadership.close();
        await scheduler.stop();
        await watcher.stop();
        await floatHistory.stop();
      },
    },
    {
      start: async () => {
        const address = await http.app.listen({ port: config.PORT, host: config.HOST });
        domain.address.listening(address, config.HOST);
      },
      stop: () => http.app.close(),
    },
    {
      start: () => streams.start(Math.max(100, Math.min(5_000, (config.STREAM_IDLE_SECONDS * 1000) / 3))),
      stop: () => streams.stop(),
    },
    { stop: () => http.feed.close() },
    {
      start: () => {
        if (demo?.available && config.DEMO_SEED)
          demo
            .world()
            .catch((err: unknown) => log.warn({ err }, 'could not seed the demo world; the next demo request retries'));
      },
      stop: () => demo?.close(),
    },
  ];
}
