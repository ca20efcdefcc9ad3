// The domain as HTTP sees it, built once by composition/domain.ts. Only the wiring sees it whole
// (http/app.ts, composition/http.ts): each HTTP module names the capabilities it uses in a deps
// interface of its own, and the wiring hands it exactly those (test/route-capabilities.test.ts).
import type { ChannelView, Keypair, SupportedResponse, VoucherContext } from '@svc/core';
import type { Ledger, LedgerInfo } from '@svc/ledger';
import type { Bus } from './bus/port.js';
import type { Leadership } from './cluster/leadership.js';
import type { Config } from './config.js';
import type { AccountBook } from './domain/account-book.js';
import type { ChannelBook } from './domain/channel-book.js';
import type { Claimer } from './domain/claimer.js';
import type { Clock } from './domain/clock.js';
import type { LatencyWindow } from './domain/latency.js';
import type { LatestLedger } from './domain/latest-ledger.js';
import type { StreamSessions } from './domain/streams.js';
import type { Verifier } from './domain/verifier.js';
import type { BatchPayments } from './domain/batch-payments.js';
import type { Payments } from './domain/payments.js';
import type { BatchRefunds } from './domain/refunds.js';
import type { ManualClaims } from './domain/manual-claims.js';
import type { Attestations } from './domain/attestations.js';
import type { StoreHealth } from './domain/store-health.js';
import type { SellerTokens } from './domain/seller-tokens.js';
import type { Stats } from './domain/stats.js';
import type { EventLog } from './domain/event-log.js';
import type { CatalogRecorder } from './domain/catalog-recorder.js';
import type { Demo } from './demo/demo.js';
import type { FloatHistory } from './domain/float-history.js';
import type { Reconciler } from './domain/reconciler.js';
import type { Metrics } from './metrics/metrics.js';
import type { ChannelRecord, Store } from './store/port.js';

export interface Services {
  config: Config;
  clock: Clock;
  store: Store;
  /** Whether this instance can write to its store (/health). */
  storeHealth: StoreHealth;
  /** Reconciling the store with the ledger, from the start (/health). */
  reconciler: Reconciler;
  ledger: Ledger;
  ledgerInfo: LedgerInfo;
  latestLedger: LatestLedger;
  bus: Bus;
  /** Whether this instance runs the singleton work (always, on SQLite). */
  leadership: Leadership;
  keys: Keypair;
  /** Every signer whose receipts count here: this key's address first, then those a rotation retired. */
  receiptSigners: readonly string[];
  vouchers: VoucherContext;
  book: ChannelBook;
  accounts: AccountBook;
  verifier: Verifier;
  /** `batch-settlement` payments: /verify, /settle and a batch stream's slices. */
  batch: BatchPayments;
  /** Accepting a payment (POST /verify, POST /settle), with its hooks. */
  payments: Payments;
  /** batch-settlement refund payloads at POST /verify and /settle (domain/refunds.ts). */
  refunds: BatchRefunds;
  /** The manual claim's rules (POST /channels/:id/claim). */
  manualClaims: ManualClaims;
  claimer: Claimer;
  streams: StreamSessions;
  attestations: Attestations;
  /** Seller tokens: the credential of a payee's side (http/seller-auth.ts). */
  sellerTokens: SellerTokens;
  stats: Stats;
  events: EventLog;
  latency: LatencyWindow;
  floatHistory: FloatHistory;
  /** Tallies verified payments into the discovery catalog, written every second. */
  catalog: CatalogRecorder;
  /** GET /metrics's counters and gauges (METRICS_TOKEN set), else null: nothing is counted. */
  metrics: Metrics | null;
  /** The demo seller, world and agent (DEMO on), else null. */
  demo: Demo | null;
  /** The facilitator's public base URL (PUBLIC_URL, or derived from the bound address). */
  publicUrl: () => string;
  /** The base URL this process reaches itself on (the demo seller's meter uses it). */
  selfUrl: () => string;
  supported: () => SupportedResponse;
  channelView: (record: ChannelRecord) => ChannelView;
  startedAt: number;
  /** Marks the facilitator's own in-process requests (random per process, never logged). */
  internalToken: string;
}
