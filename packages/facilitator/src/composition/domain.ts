// The second step of the composition root: the domain, built on the adapters, before any HTTP.
// What HTTP needs from it is `Services` (services.ts); the background work (the watcher, the claim
// scheduler, the float sampler, leadership) is returned beside it for the start/stop sequence.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { formatUnits, refundContext, seedFromSecret, voucherContext } from '@svc/core';
import type { ChannelView, SupportedResponse } from '@svc/core';
import { SoleLeadership } from '../cluster/leadership.js';
import type { Leadership } from '../cluster/leadership.js';
import type { Bus } from '../bus/port.js';
import { PostgresLeadership } from '../cluster/postgres-leadership.js';
import { AccountBook } from '../domain/account-book.js';
import { Attestations } from '../domain/attestations.js';
import { BatchPayments } from '../domain/batch-payments.js';
import { BatchRefunds } from '../domain/refunds.js';
import { CatalogRecorder } from '../domain/catalog-recorder.js';
import { ChannelBook } from '../domain/channel-book.js';
import { ClaimScheduler } from '../domain/claim-scheduler.js';
import { Claimer } from '../domain/claimer.js';
import type { Clock } from '../domain/clock.js';
import { EventLog } from '../domain/event-log.js';
import { FloatHistory } from '../domain/float-history.js';
import { HIGH_WATER_FILE, HighWater } from '../domain/high-water.js';
import { LatencyWindow } from '../domain/latency.js';
import { LatestLedger } from '../domain/latest-ledger.js';
import { LedgerWatcher } from '../domain/ledger-watcher.js';
import { ManualClaims } from '../domain/manual-claims.js';
import { Deposits } from '../domain/deposits.js';
import { Openings } from '../domain/openings.js';
import { PaymentChecks } from '../domain/payment-checks.js';
import { Payments } from '../domain/payments.js';
import { Reconciler } from '../domain/reconciler.js';
import { receiptSignerList } from '../domain/receipt-signers.js';
import { SellerTokens } from '../domain/seller-tokens.js';
import { Stats } from '../domain/stats.js';
import { StreamSessions } from '../domain/streams.js';
import { Verifier } from '../domain/verifier.js';
import { voucherRate } from '../domain/voucher-rate.js';
import { Demo } from '../demo/demo.js';
import { Metrics } from '../metrics/metrics.js';
import type { Services } from '../services.js';
import type { ChannelRecord } from '../store/port.js';
import type { Adapters } from './adapters.js';
import { BoundAddress } from './bound-address.js';

export interface Domain {
  services: Services;
  address: BoundAddress;
  /** The data directory's mark of the newest store it has seen (domain/high-water.ts). */
  mark: HighWater;
  /** Reconciles the store with the ledger from the start (domain/reconciler.ts). */
  reconciler: Reconciler;
  watcher: LedgerWatcher;
  scheduler: ClaimScheduler;
  floatHistory: FloatHistory;
  leadership: Leadership;
  /** How often the watcher and the latest-ledger reading poll the ledger, in ms. */
  pollMs: number;
}

/** How soon a reconciliation that found the ledger silent tries again. */
const RECONCILE_RETRY_MS = 1_000;

export interface DomainOptions {
  clock: Clock;
  /** How often the ledger watcher polls, in ms (default: about a fifth of a ledger, at most 1 s). */
  watchPollMs?: number;
  /** Sign receipts on the main thread, not the threadpool (default: on machines of two cores or fewer). */
  signReceiptsInline?: boolean;
}

export async function createDomain(a: Adapters, options: DomainOptions): Promise<Domain> {
  const { config, log, ledger, ledgerInfo, store, bus, keys } = a;
  const { clock } = options;
  const address = new BoundAddress(config.PUBLIC_URL);
  const events = new EventLog(store, bus);
  const latestLedger = new LatestLedger(ledger, ledgerInfo.ledgerSeconds);
  const vouchers = voucherContext(ledgerInfo.passphrase, ledgerInfo.contracts.channel);
  const channelSource = { network: ledgerInfo.network, channelContract: ledgerInfo.contracts.channel };
  const openings = new Openings(ledger, store, events, channelSource);
  // The ledger is the floor of what was paid: a store older than it is brought up to it (reconciler.ts).
  const mark = new HighWater(path.join(config.DATA_DIR, HIGH_WATER_FILE), store, log);
  const reconciler = new Reconciler({
    store,
    ledger,
    // The book is built on the reconciler (whether the store may stand in for the ledger), and the
    // reconciler drops the book's copy of a channel it brings up to the ledger.
    book: { invalidate: (id) => book.invalidate(id) },
    mark,
    clock,
    log,
    retryMs: RECONCILE_RETRY_MS,
  });
  const book = new ChannelBook(store, ledger, channelSource, clock, openings, reconciler);
  const latency = new LatencyWindow();
  const claimer = new Claimer({ ledger, store, book, events, keys, clock });
  const accounts = new AccountBook(ledger);
  const isFrozen = (account: string) => accounts.isFrozen(account);
  const catalog = new CatalogRecorder(store, log);
  const attestations = new Attestations(seedFromSecret(keys.secret()), store, clock);
  // The checks every payment passes, `channel` or `batch-settlement` (one voucher rate per channel).
  const checks = new PaymentChecks({
    network: ledgerInfo.network,
    asset: ledgerInfo.contracts.asset,
    vouchers,
    book,
    latestLedger,
    rate: voucherRate(
      await a.limiters.limiter({ name: 'vouchers', points: config.CHANNEL_VOUCHER_LIMIT_PER_MINUTE, seconds: 60 }),
    ),
    safetyLedgers: config.VOUCHER_EXPIRY_SAFETY_LEDGERS,
    isFrozen,
  });
  const signReceiptsInline = options.signReceiptsInline ?? os.availableParallelism() <= 2;
  const verifier = new Verifier({
    network: ledgerInfo.network,
    checks,
    signer: keys,
    signReceiptsInline,
    book,
    store,
    events,
    clock,
    latency,
    log,
  });
  const depositLimit = async (name: string, points: number) => {
    // 0 takes none: every deposit waits the whole window (a facilitator that sponsors no openings).
    if (points === 0) return { take: () => Promise.resolve(3600) };
    return a.limiters.limiter({ name, points, seconds: 3600 });
  };
  const [perPayer, perIp] = await Promise.all([
    depositLimit('deposits-payer', config.DEPOSIT_LIMIT_PER_PAYER_PER_HOUR),
    depositLimit('deposits-ip', config.DEPOSIT_LIMIT_PER_IP_PER_HOUR),
  ]);
  const deposits = new Deposits({
    ledger,
    book,
    latestLedger,
    passphrase: ledgerInfo.passphrase,
    channelContract: ledgerInfo.contracts.channel,
    asset: ledgerInfo.contracts.asset,
    vouchers,
    receiverAuthorizer: keys.address,
    safetyLedgers: config.VOUCHER_EXPIRY_SAFETY_LEDGERS,
    limits: { perPayer: (payer) => perPayer.take(payer), perIp: (ip) => perIp.take(ip) },
    sponsor: keys,
    // A top-up's deposit reaches the store through the watcher's ordered events (built below).
    caughtUp: () => watcher.tick(),
  });
  const batch = new BatchPayments({
    network: ledgerInfo.network,
    checks,
    signer: keys,
    signReceiptsInline,
    book,
    store,
    events,
    clock,
    latency,
    log,
    deposits,
  });
  const streams = new StreamSessions({
    store,
    events,
    bus,
    book,
    verifier,
    batch,
    receiverAuthorizer: keys.address,
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
    isFrozen,
    log,
  });
  const payments = new Payments({ verifier, batch, streams, store, book, vouchers, attestations, clock, log });
  const refunds = new BatchRefunds({
    network: ledgerInfo.network,
    keys,
    refunds: refundContext(ledgerInfo.passphrase, ledgerInfo.contracts.channel),
    ledger,
    book,
    store,
    events,
    claimer,
    clock,
    checkRate: (channelId) => checks.checkRate(channelId),
  });
  // What the payee's side publishes about its resource is listed in discovery (domain/catalog.ts).
  payments.onAccepted(({ attempt, accepted }) => {
    if (attempt.payeeSide && attempt.listing)
      catalog.record(attempt.listing, attempt.input.requirements, accepted.response.receipt);
  });
  const manualClaims = new ManualClaims({
    store,
    book,
    claimer,
    network: ledgerInfo.network,
    minimum: config.MANUAL_CLAIM_MIN,
    cooldown:
      config.MANUAL_CLAIM_COOLDOWN_SECONDS > 0
        ? await a.limiters.limiter({ name: 'manual-claim', points: 1, seconds: config.MANUAL_CLAIM_COOLDOWN_SECONDS })
        : null,
    cooldownSeconds: config.MANUAL_CLAIM_COOLDOWN_SECONDS,
  });
  const demo = config.DEMO
    ? new Demo({
        dataDir: config.DATA_DIR,
        ledgerUrl: () => config.LEDGER_URL?.replace(/\/+$/, '') ?? (a.localLedger ? `${address.bound()}/ledger` : null),
        baseUrl: () => address.bound(),
        receiptSigner: keys.address,
        tickerSliceSeconds: config.TICKER_SLICE_SECONDS,
        isFrozen,
        events,
        clock,
        log,
      })
    : null;
  const floatHistory = new FloatHistory(
    store,
    async () => (await ledger.getPool?.()) ?? null,
    clock,
    config.FLOAT_SAMPLE_SECONDS * 1000,
    log,
  );
  // Each tick on Stellar costs RPC calls (getLatestLedger, getEvents): poll about twice a ledger.
  const pollMs = options.watchPollMs ?? (a.stellar ? 2500 : Math.max(100, Math.min(1000, config.LEDGER_SECONDS * 200)));
  const watcher = new LedgerWatcher({
    ledger,
    store,
    events,
    book,
    claimer,
    accounts,
    latestLedger,
    openings,
    pollMs,
    onClaimAbove: (id, accepted, claimed) => reconciler.claimAbove(id, accepted, claimed),
    log,
  });
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
  // The scheduler, the watcher and the float sampler run on one instance at a time.
  const leadership: Leadership =
    a.sharedSchema !== null
      ? PostgresLeadership.open({
          url: config.DATABASE_URL!,
          schema: a.sharedSchema,
          log,
          canLead: (timeoutMs) => a.storeHealth.check(store, timeoutMs),
        })
      : new SoleLeadership();
  // Every instance follows what the leader's watcher records: channel changes and frozen accounts.
  if (a.sharedSchema !== null) followLedgerEvents(bus, book, accounts);
  const receiptSigners = receiptSignerList(keys.address, a.retiredSigners);
  const supported = supportedOf(a, address, receiptSigners);
  const services: Services = {
    config,
    clock,
    store,
    storeHealth: a.storeHealth,
    reconciler,
    ledger,
    ledgerInfo,
    latestLedger,
    bus,
    leadership,
    keys,
    receiptSigners,
    vouchers,
    book,
    accounts,
    claimer,
    manualClaims,
    latency,
    floatHistory,
    catalog,
    // Fed and read by composition/metrics.ts once HTTP is built (the event streams are HTTP's).
    metrics: config.METRICS_TOKEN === undefined ? null : new Metrics(),
    demo,
    startedAt: clock.now(),
    internalToken: randomBytes(24).toString('hex'),
    verifier,
    batch,
    payments,
    refunds,
    streams,
    attestations,
    sellerTokens: new SellerTokens(seedFromSecret(keys.secret()), clock),
    stats: new Stats(store, latency, ledgerInfo.ledgerSeconds),
    events,
    publicUrl: () => address.public(),
    selfUrl: () => address.bound(),
    supported,
    channelView: (record) => channelView(record, latestLedger.currentLedger),
  };
  return { services, address, mark, reconciler, watcher, scheduler, floatHistory, leadership, pollMs };
}

/**
 * GET /supported: the kinds this facilitator handles, with what a seller needs to build terms.
 * `extra.receiptSigner` is the key signing now; `signers` lists it first, then every signer a
 * rotation retired, whose receipts still count (a buyer checks a receipt against that list).
 */
function supportedOf(a: Adapters, address: BoundAddress, receiptSigners: readonly string[]): () => SupportedResponse {
  const { ledgerInfo, keys } = a;
  return () => {
    const extra = {
      asset: ledgerInfo.contracts.asset,
      assetCode: ledgerInfo.asset.code,
      decimals: ledgerInfo.asset.decimals,
      channelContract: ledgerInfo.contracts.channel,
      areFeesSponsored: true,
      facilitator: address.public(),
      receiptSigner: keys.address,
    };
    return {
      kinds: [
        ...[2, 1].map((version) => ({
          x402Version: version as 1 | 2,
          scheme: 'channel' as const,
          network: ledgerInfo.network,
          extra,
        })),
        // The standard's name for the same channels: this key authorises claims below a voucher's
        // ceiling and refunds, and a channel is bound to it when it opens.
        {
          x402Version: 2 as const,
          scheme: 'batch-settlement' as const,
          network: ledgerInfo.network,
          extra: { receiverAuthorizer: keys.address, ...extra },
        },
      ],
      extensions: ['bazaar'],
      signers: { 'stellar:*': [...receiptSigners] },
    };
  };
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

export function channelView(r: ChannelRecord, latestLedger: number): ChannelView {
  const unclaimed = r.charged > r.claimed ? r.charged - r.claimed : 0n;
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
    charged: formatUnits(r.charged),
    unclaimed: formatUnits(unclaimed),
    remaining: formatUnits(r.deposit - r.charged),
    expiryLedger: r.expiryLedger,
    expiresInLedgers: r.expiryLedger - latestLedger,
    status: r.status === 'open' && r.expiryLedger <= latestLedger ? 'expired' : r.status,
    vouchers: r.vouchers,
    vouchersSinceClaim: r.vouchers - r.vouchersClaimed,
    openedAt: r.openedAt,
    lastVoucherAt: r.lastVoucherAt,
    closedAt: r.closedAt,
    refunded: r.refunded === null ? null : formatUnits(r.refunded),
  };
}
