// The composition root: ports, adapters and domain wired into one facilitator.
//
//   const f = await createFacilitator({ config: loadConfig() });
//   const url = await f.listen();
//   …
//   await f.close();
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { formatUnits, networkOfPassphrase, seedFromSecret, voucherContext } from '@svc/core';
import type { ChannelView, SignedLedgerTx, SupportedResponse } from '@svc/core';
import { HttpLedger, LocalLedger, StellarLedger, ledgerRoutes } from '@svc/ledger';
import type { Ledger, TxResult } from '@svc/ledger';
import { MemoryBus } from './bus/memory-bus.js';
import { PostgresBus } from './bus/postgres-bus.js';
import { SoleLeadership } from './cluster/leadership.js';
import type { Leadership } from './cluster/leadership.js';
import { PostgresLeadership } from './cluster/postgres-leadership.js';
import { PostgresStreamPresence } from './cluster/stream-presence.js';
import type { Bus } from './bus/port.js';
import type { Config } from './config.js';
import { AccountBook } from './domain/account-book.js';
import { ChannelBook } from './domain/channel-book.js';
import { ClaimScheduler } from './domain/claim-scheduler.js';
import { Claimer } from './domain/claimer.js';
import { SYSTEM_CLOCK } from './domain/clock.js';
import type { Clock } from './domain/clock.js';
import { EventLog } from './domain/event-log.js';
import { FloatHistory } from './domain/float-history.js';
import { CatalogRecorder } from './domain/catalog-recorder.js';
import { LatencyWindow } from './domain/latency.js';
import { LatestLedger } from './domain/latest-ledger.js';
import { ledgerInfoOf, saveLedgerTime, startLatestLedger } from './domain/ledger-connection.js';
import { createLogger } from './logger.js';
import { StoreHealth } from './domain/store-health.js';
import { LedgerWatcher } from './domain/ledger-watcher.js';
import { Openings } from './domain/openings.js';
import { Verifier } from './domain/verifier.js';
import { voucherRate } from './domain/voucher-rate.js';
import { openLimiters } from './limits/limiter.js';
import type { LimitBackend } from './limits/limiter.js';
import { StreamSessions } from './domain/streams.js';
import { Attestations } from './domain/attestations.js';
import { SellerTokens } from './domain/seller-tokens.js';
import { Stats } from './domain/stats.js';
import { EventFeed } from './http/event-feed.js';
import { buildHttp } from './http/app.js';
import type { AnyRoute } from './http/route.js';
import { registerDemo } from './http/routes/demo.js';
import { Demo } from './demo/demo.js';
import { loadOrCreateKey } from './keys.js';
import type { Services } from './services.js';
import { openStore } from './store/index.js';
import type { ChannelRecord } from './store/port.js';

/** How often the ledger's time is kept in the store, for a restart while the ledger is down. */
const LEDGER_TIME_SAVE_MS = 10_000;

export interface FacilitatorOptions {
  config: Config;
  clock?: Clock;
  /** A ledger to use instead of the one the configuration names (tests share one). */
  ledger?: Ledger;
  /** How often the ledger watcher polls, in ms (default: about a fifth of a ledger, at most 1 s). */
  watchPollMs?: number;
  /** The web console's build to serve at / (default: packages/facilitator/console). */
  consoleDir?: string;
}

export interface Facilitator {
  readonly app: FastifyInstance;
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

export async function createFacilitator(options: FacilitatorOptions): Promise<Facilitator> {
  const { config } = options;
  const log = createLogger(config.LOG_LEVEL);
  const clock = options.clock ?? SYSTEM_CLOCK;
  fs.mkdirSync(config.DATA_DIR, { recursive: true });
  const keys = loadOrCreateKey(config.DATA_DIR, 'facilitator.secret', config.FACILITATOR_SECRET);
  // In-process local ledger by default; LEDGER_URL names a standalone one (`svc ledger`);
  // LEDGER=stellar the real test network over Soroban RPC.
  const stellar = !options.ledger && config.LEDGER === 'stellar';
  const localLedger =
    options.ledger || config.LEDGER_URL || stellar
      ? null
      : await LocalLedger.open({ dataDir: config.DATA_DIR, ledgerSeconds: config.LEDGER_SECONDS });
  const ledger: Ledger =
    options.ledger ??
    localLedger ??
    (stellar
      ? await StellarLedger.create({
          rpcUrl: config.STELLAR_RPC_URL!,
          channelContract: config.CHANNEL_CONTRACT_ID!,
          assetContract: config.ASSET_CONTRACT_ID!,
          ...(config.STELLAR_START_LEDGER ? { startLedger: config.STELLAR_START_LEDGER } : {}),
        })
      : new HttpLedger({ url: config.LEDGER_URL! }));
  const storeHealth = new StoreHealth();
  // openStore applies pending migrations before it returns.
  const store = storeHealth.watch(
    await openStore({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      lockTimeoutMs: config.PG_LOCK_TIMEOUT_MS,
    }),
  );
  // Several instances share a PostgreSQL store: events, signals and leadership go through it.
  const sharedSchema = store.sharedSchema;
  // The ledger may be down: start from what the last run saw of it, and catch up when it answers.
  const ledgerInfo = await ledgerInfoOf(ledger, store, log);
  networkOfPassphrase(ledgerInfo.passphrase); // refuses the public network

  const limiters = await openLimiters(limitBackend(config));
  // On PostgreSQL several instances may share the database: events and signals go through it.
  const bus: Bus =
    sharedSchema !== null && config.DATABASE_URL
      ? await PostgresBus.open({
          url: config.DATABASE_URL,
          schema: sharedSchema,
          store,
          onError: (err, what) => log.warn({ err }, what),
        })
      : new MemoryBus();
  const events = new EventLog(store, bus);
  const latestLedger = new LatestLedger(ledger, ledgerInfo.ledgerSeconds);
  await startLatestLedger(latestLedger, store, clock.now());
  const vouchers = voucherContext(ledgerInfo.passphrase, ledgerInfo.contracts.channel);
  const channelSource = { network: ledgerInfo.network, channelContract: ledgerInfo.contracts.channel };
  const openings = new Openings(ledger, store, events, channelSource);
  const book = new ChannelBook(store, ledger, channelSource, clock, openings);
  const latency = new LatencyWindow();
  const claimer = new Claimer({ ledger, store, book, events, keys, clock });
  const accounts = new AccountBook(ledger);
  let boundUrl = '';
  const catalog = new CatalogRecorder(store, { warn: (obj, msg) => log.warn(obj, msg) });
  const demo = config.DEMO
    ? new Demo({
        dataDir: config.DATA_DIR,
        ledgerUrl: () => config.LEDGER_URL?.replace(/\/+$/, '') ?? (localLedger ? `${boundUrl}/ledger` : null),
        baseUrl: () => boundUrl,
        receiptSigner: keys.address,
        tickerSliceSeconds: config.TICKER_SLICE_SECONDS,
        isFrozen: (account) => accounts.isFrozen(account),
        events,
        clock,
        log: { info: (obj, msg) => log.info(obj, msg), warn: (obj, msg) => log.warn(obj, msg) },
      })
    : null;
  const floatHistory = new FloatHistory(
    store,
    async () => (await ledger.getPool?.()) ?? null,
    clock,
    config.FLOAT_SAMPLE_SECONDS * 1000,
    {
      warn: (obj, msg) => log.warn(obj, msg),
    },
  );

  const verifier = new Verifier({
    network: ledgerInfo.network,
    asset: ledgerInfo.contracts.asset,
    vouchers,
    signer: keys,
    book,
    store,
    events,
    latestLedger,
    clock,
    latency,
    rate: voucherRate(
      await limiters.limiter({ name: 'vouchers', points: config.CHANNEL_VOUCHER_LIMIT_PER_MINUTE, seconds: 60 }),
    ),
    safetyLedgers: config.VOUCHER_EXPIRY_SAFETY_LEDGERS,
    isFrozen: (account) => accounts.isFrozen(account),
    onRejected: (r) => {
      void events
        .commit([
          {
            op: 'event',
            event: {
              type: 'voucher.rejected',
              source: 'facilitator',
              ts: new Date(clock.now()).toISOString(),
              ...(r.channelId !== undefined ? { channelId: r.channelId } : {}),
              data: { channelId: r.channelId?.toString() ?? null, code: r.code, resource: r.resource ?? null },
            },
          },
        ])
        .catch((err: unknown) => log.warn({ err }, 'could not record a rejected voucher'));
    },
  });

  const streams = new StreamSessions({
    store,
    events,
    bus,
    book,
    verifier,
    clock,
    network: ledgerInfo.network,
    asset: ledgerInfo.contracts.asset,
    channelContract: ledgerInfo.contracts.channel,
    limits: {
      maxPerChannel: config.STREAM_MAX_PER_CHANNEL,
      maxPerPayer: config.STREAM_MAX_PER_PAYER,
      maxPerPayee: config.STREAM_MAX_PER_PAYEE,
      maxTotal: config.STREAM_MAX_TOTAL,
    },
    idleMs: config.STREAM_IDLE_SECONDS * 1000,
    isFrozen: (account) => accounts.isFrozen(account),
    log,
  });

  // The scheduler, the watcher and the float sampler run on one instance at a time.
  const shared = sharedSchema !== null && config.DATABASE_URL !== undefined;
  const leadership: Leadership = shared
    ? PostgresLeadership.open({
        url: config.DATABASE_URL!,
        schema: sharedSchema,
        log,
        canLead: (timeoutMs) => storeHealth.check(store, timeoutMs),
      })
    : new SoleLeadership();

  const services: Services = {
    config,
    clock,
    store,
    storeHealth,
    ledger,
    ledgerInfo,
    latestLedger,
    bus,
    leadership,
    claimCooldown:
      config.MANUAL_CLAIM_COOLDOWN_SECONDS > 0
        ? await limiters.limiter({ name: 'manual-claim', points: 1, seconds: config.MANUAL_CLAIM_COOLDOWN_SECONDS })
        : null,
    keys,
    vouchers,
    book,
    accounts,
    claimer,
    latency,
    floatHistory,
    catalog,
    demo,
    startedAt: clock.now(),
    internalToken: randomBytes(24).toString('hex'),
    verifier,
    streams,
    attestations: new Attestations(seedFromSecret(keys.secret()), store, clock),
    sellerTokens: new SellerTokens(seedFromSecret(keys.secret()), clock),
    stats: new Stats(store, latency, ledgerInfo.ledgerSeconds),
    events,
    publicUrl: () => config.PUBLIC_URL?.replace(/\/+$/, '') ?? boundUrl,
    selfUrl: () => boundUrl,
    supported: () => supported(services),
    channelView: (record) => channelView(record, latestLedger.currentLedger),
  };
  const feed = new EventFeed(store, bus, {
    perIp: config.SSE_MAX_PER_IP,
    total: config.SSE_MAX_TOTAL,
    stallMs: config.SSE_STALL_SECONDS * 1000,
  });
  const { app, routes } = await buildHttp(services, feed, {
    logger: log,
    trustProxy: config.TRUST_PROXY,
    corsOrigins: config.CORS_ORIGINS,
    limiters,
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
  });
  const demoPayTo = demo?.payTo ?? null;
  if (demo) registerDemo(app, services, { payTo: demo.payTo });

  // Each tick on Stellar costs RPC calls (getLatestLedger, getEvents): poll about twice a ledger.
  const pollMs = options.watchPollMs ?? (stellar ? 2500 : Math.max(100, Math.min(1000, config.LEDGER_SECONDS * 200)));
  const watcher = new LedgerWatcher(
    ledger,
    store,
    events,
    book,
    claimer,
    accounts,
    latestLedger,
    openings,
    { pollMs },
    log,
  );
  // The in-process ledger's transactions that touch a channel (a payee's close, a top-up) are
  // applied before their answer leaves: no voucher is accepted on a channel after its close was
  // answered. A standalone ledger's are seen by the watcher's next poll.
  if (localLedger)
    await app.register(ledgerRoutes, { prefix: '/ledger', ledger: afterChannelTx(localLedger, () => watcher.tick()) });
  const scheduler = new ClaimScheduler(
    store,
    claimer,
    latestLedger,
    clock,
    {
      intervalMs: config.CLAIM_INTERVAL_SECONDS * 1000,
      threshold: config.CLAIM_THRESHOLD,
      expiryMarginLedgers: config.CLAIM_EXPIRY_MARGIN_LEDGERS,
    },
    log,
  );
  // Every instance follows what the leader's watcher records: channel changes and frozen accounts.
  if (shared) followLedgerEvents(bus, book, accounts);
  // The event-stream caps count every instance's streams.
  const presence = shared
    ? await PostgresStreamPresence.open({
        url: config.DATABASE_URL!,
        schema: sharedSchema,
        local: () => feed.localCounts(),
        onError: (err) => log.warn({ err }, 'could not share the event-stream counts'),
      })
    : null;
  if (presence) feed.share(presence);

  return {
    app,
    services,
    routes,
    scheduler,
    watcher,
    floatHistory,
    localLedger,
    demoPayTo,
    async listen() {
      // Catch up with the ledger before serving, so no channel state is stale at the first voucher
      // (on a shared database the leader's watcher keeps the store current instead). A ledger that
      // does not answer is no reason not to serve: the watcher keeps trying.
      if (!shared)
        await watcher
          .tick()
          .catch((err: unknown) =>
            log.warn({ err }, 'could not catch up with the ledger before serving; the watcher keeps trying'),
          );
      // Every instance reads the ledger's time (the verifier's expiry check), and keeps the reading
      // for a restart while the ledger is down.
      latestLedger.start({
        pollMs,
        saveEveryMs: LEDGER_TIME_SAVE_MS,
        save: () => saveLedgerTime(latestLedger, store, clock.now()),
      });
      // No seller loop survives a restart: sessions left open end now, with what they were charged.
      // On a shared database other instances may be serving open sessions right now: there the
      // idle sweep ends an orphan (STREAM_IDLE_SECONDS without a wait or a voucher) instead.
      if (!shared) {
        const orphans = await services.streams.abortOrphans();
        if (orphans > 0)
          log.warn({ sessions: orphans }, 'ended stream sessions left open by the previous run (ABORTED)');
      }
      await services.stats.start(bus);
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
      });
      catalog.start();
      services.streams.start(Math.max(100, Math.min(5_000, (config.STREAM_IDLE_SECONDS * 1000) / 3)));
      const address = await app.listen({ port: config.PORT, host: config.HOST });
      const port = new URL(address).port;
      const host =
        config.HOST === '0.0.0.0' || config.HOST === '::'
          ? '127.0.0.1'
          : config.HOST.includes(':')
            ? `[${config.HOST}]`
            : config.HOST;
      boundUrl = `http://${host}:${port}`;
      if (demo?.available && config.DEMO_SEED) {
        demo
          .world()
          .catch((err: unknown) => log.warn({ err }, 'could not seed the demo world; the next demo request retries'));
      }
      return boundUrl;
    },
    async close() {
      latestLedger.stop();
      await demo?.close();
      services.streams.stop();
      feed.close();
      await app.close();
      await leadership.close();
      await presence?.close();
      await scheduler.stop();
      await watcher.stop();
      await floatHistory.stop();
      await catalog.stop();
      await bus.close();
      await store.close();
      await limiters.close();
      await ledger.close();
    },
  };
}

/** RATE_LIMIT_STORE: counters in memory (one instance), or shared in Redis or the PostgreSQL database. */
function limitBackend(config: Config): LimitBackend {
  const prefix = config.RATE_LIMIT_PREFIX;
  if (config.RATE_LIMIT_STORE === 'redis') return { kind: 'redis', url: config.REDIS_URL, prefix };
  if (config.RATE_LIMIT_STORE === 'postgres') return { kind: 'postgres', url: config.DATABASE_URL!, prefix };
  return { kind: 'memory', prefix };
}

function supported(s: Services): SupportedResponse {
  const extra = {
    asset: s.ledgerInfo.contracts.asset,
    assetCode: s.ledgerInfo.asset.code,
    decimals: s.ledgerInfo.asset.decimals,
    channelContract: s.ledgerInfo.contracts.channel,
    areFeesSponsored: true,
    facilitator: s.publicUrl(),
    receiptSigner: s.keys.address,
  };
  return {
    kinds: [2, 1].map((v) => ({
      x402Version: v as 1 | 2,
      scheme: 'channel' as const,
      network: s.ledgerInfo.network,
      extra,
    })),
    extensions: ['bazaar'],
    signers: { 'stellar:*': [s.keys.address] },
  };
}

export function channelView(r: ChannelRecord, latestLedger: number): ChannelView {
  const unclaimed = r.lastAccepted > r.claimed ? r.lastAccepted - r.claimed : 0n;
  return {
    id: r.id.toString(),
    network: r.network,
    channelContract: r.channelContract,
    payer: r.payer,
    payee: r.payee,
    asset: r.asset,
    voucherKey: r.voucherKey,
    deposit: formatUnits(r.deposit),
    claimed: formatUnits(r.claimed),
    lastAccepted: formatUnits(r.lastAccepted),
    unclaimed: formatUnits(unclaimed),
    remaining: formatUnits(r.deposit - r.lastAccepted),
    expiryLedger: r.expiryLedger,
    expiresInLedgers: r.expiryLedger - latestLedger,
    status: r.status,
    vouchers: r.vouchers,
    vouchersSinceClaim: r.vouchers - r.vouchersClaimed,
    openedAt: r.openedAt,
    lastVoucherAt: r.lastVoucherAt,
    closedAt: r.closedAt,
    refunded: r.refunded === null ? null : formatUnits(r.refunded),
  };
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

/** On a follower, the leader's ledger events invalidate cached channels and update frozen accounts. */
function followLedgerEvents(bus: Bus, book: ChannelBook, accounts: AccountBook): void {
  bus.subscribe((event) => {
    if (event.source !== 'ledger') return;
    if (event.channelId !== null && event.channelId !== undefined) book.invalidate(event.channelId);
    if (event.type === 'account.frozen' && typeof event.data['account'] === 'string')
      accounts.setFrozen(event.data['account'], event.data['frozen'] === true);
  });
}
