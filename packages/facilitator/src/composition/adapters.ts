// The first step of the composition root: the adapters the configuration names — the ledger, the
// store, the limiter backend, the bus — opened, with the ledger's description read (or restored).
import fs from 'node:fs';
import { networkOfPassphrase } from '@svc/core';
import { HttpLedger, LocalLedger, StellarLedger, lockDataDir } from '@svc/ledger';
import type { DataDirLock, Ledger, LedgerInfo } from '@svc/ledger';
import { MemoryBus } from '../bus/memory-bus.js';
import { PostgresBus } from '../bus/postgres-bus.js';
import type { Bus } from '../bus/port.js';
import type { Config } from '../config.js';
import { ledgerInfoOf } from '../domain/ledger-connection.js';
import type { RetiredSigner } from '../domain/receipt-signers.js';
import { StoreHealth } from '../domain/store-health.js';
import { openLimiters } from '../limits/limiter.js';
import type { LimitBackend, Limiters } from '../limits/limiter.js';
import type { Logger } from '../logger.js';
import { SQLITE_FILE_NAME, openStore } from '../store/index.js';
import type { Store } from '../store/port.js';
import type { Keypair } from '@svc/core';
import { openReceiptSigner } from './receipt-signer.js';

export interface Adapters {
  config: Config;
  log: Logger;
  /** This process's hold on DATA_DIR's SQLite store (null on PostgreSQL: instances share the store). */
  dataDirLock: DataDirLock | null;
  /** The receipt signer's key: the store's signer (composition/receipt-signer.ts). */
  keys: Keypair;
  /** Signers a rotation retired: their receipts still count (GET /supported lists them). */
  retiredSigners: RetiredSigner[];
  ledger: Ledger;
  /** The in-process local ledger, when this facilitator runs one (it then serves /ledger). */
  localLedger: LocalLedger | null;
  /** LEDGER=stellar: the real test network over Soroban RPC (slower polling). */
  stellar: boolean;
  ledgerInfo: LedgerInfo;
  store: Store;
  storeHealth: StoreHealth;
  /**
   * The schema other instances share, when the store is a PostgreSQL database (events, signals,
   * leadership and stream counts then go through it); null on SQLite, where one instance runs.
   */
  sharedSchema: string | null;
  limiters: Limiters;
  bus: Bus;
}

export interface AdapterOptions {
  /** A ledger to use instead of the one the configuration names (tests share one). */
  ledger?: Ledger;
}

export async function openAdapters(config: Config, log: Logger, options: AdapterOptions = {}): Promise<Adapters> {
  // What is open so far, closed in reverse when a later step fails (a refused start in a process
  // that goes on, as in tests, keeps no lock, file or connection).
  const opened: (() => Promise<void> | void)[] = [];
  try {
    return await open(config, log, options, opened);
  } catch (err) {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => undefined);
    throw err;
  }
}

async function open(
  config: Config,
  log: Logger,
  options: AdapterOptions,
  opened: (() => Promise<void> | void)[],
): Promise<Adapters> {
  fs.mkdirSync(config.DATA_DIR, { recursive: true });
  // The SQLite store is one process's (its caches, its claim scheduler, the sessions it ends at
  // start): a second facilitator on this DATA_DIR is refused before it touches anything. The
  // embedded ledger takes its own lock when it opens.
  const dataDirLock =
    config.DATABASE_URL === undefined
      ? lockDataDir(config.DATA_DIR, 'facilitator', `the SQLite store ${SQLITE_FILE_NAME}`)
      : null;
  if (dataDirLock) opened.push(() => dataDirLock.release());
  const storeHealth = new StoreHealth();
  // openStore applies pending migrations before it returns.
  const store = storeHealth.watch(
    await openStore({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      lockTimeoutMs: config.PG_LOCK_TIMEOUT_MS,
    }),
  );
  opened.push(() => store.close());
  // Before this start writes anything of its own (even the embedded ledger's file): a key that is
  // not the store's signer stops it here.
  const { keys, retired: retiredSigners } = await openReceiptSigner(store, config);
  const stellar = !options.ledger && config.LEDGER === 'stellar';
  const { ledger, localLedger } = await openLedger(config, options.ledger, stellar);
  // A ledger the caller gave is the caller's to close.
  if (!options.ledger) opened.push(() => ledger.close());
  const sharedSchema = config.DATABASE_URL !== undefined ? store.sharedSchema : null;
  // The ledger may be down: start from what the last run saw of it, and catch up when it answers.
  const ledgerInfo = await ledgerInfoOf(ledger, store, log);
  networkOfPassphrase(ledgerInfo.passphrase); // refuses the public network
  const limiters = await openLimiters(limitBackend(config));
  opened.push(() => limiters.close());
  const bus: Bus =
    sharedSchema !== null && config.DATABASE_URL
      ? await PostgresBus.open({
          url: config.DATABASE_URL,
          schema: sharedSchema,
          store,
          onError: (err, what) => log.warn({ err }, what),
        })
      : new MemoryBus();
  return {
    config,
    log,
    dataDirLock,
    keys,
    retiredSigners,
    ledger,
    localLedger,
    stellar,
    ledgerInfo,
    store,
    storeHealth,
    sharedSchema,
    limiters,
    bus,
  };
}

/**
 * In-process local ledger by default; LEDGER_URL names a standalone one (`svc ledger`); LEDGER=stellar
 * the real test network over Soroban RPC.
 */
async function openLedger(
  config: Config,
  given: Ledger | undefined,
  stellar: boolean,
): Promise<{ ledger: Ledger; localLedger: LocalLedger | null }> {
  if (given) return { ledger: given, localLedger: null };
  if (stellar) {
    const ledger = await StellarLedger.create({
      rpcUrl: config.STELLAR_RPC_URL!,
      channelContract: config.CHANNEL_CONTRACT_ID!,
      assetContract: config.ASSET_CONTRACT_ID!,
      ...(config.STELLAR_START_LEDGER ? { startLedger: config.STELLAR_START_LEDGER } : {}),
    });
    return { ledger, localLedger: null };
  }
  if (config.LEDGER_URL) return { ledger: new HttpLedger({ url: config.LEDGER_URL }), localLedger: null };
  const localLedger = await LocalLedger.open({ dataDir: config.DATA_DIR, ledgerSeconds: config.LEDGER_SECONDS });
  return { ledger: localLedger, localLedger };
}

/** RATE_LIMIT_STORE: counters in memory (one instance), or shared in Redis or the PostgreSQL database. */
function limitBackend(config: Config): LimitBackend {
  const prefix = config.RATE_LIMIT_PREFIX;
  if (config.RATE_LIMIT_STORE === 'redis') return { kind: 'redis', url: config.REDIS_URL, prefix };
  if (config.RATE_LIMIT_STORE === 'postgres') return { kind: 'postgres', url: config.DATABASE_URL!, prefix };
  return { kind: 'memory', prefix };
}
