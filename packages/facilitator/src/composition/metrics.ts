// The fourth step of the composition root, when METRICS_TOKEN is set: the metrics (metrics/metrics.ts)
// fed by the domain's hooks — every voucher the verifier judges, every claim, every stream session
// opened or ended, every store write — and gauges read from the domain and HTTP at each scrape.
// Without METRICS_TOKEN no hook is installed: nothing is counted, at no cost.
import { LedgerUnavailable } from '@svc/ledger';
import { toSvcError } from '../http/errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Adapters } from './adapters.js';
import type { Domain } from './domain.js';
import type { Http } from './http.js';

/** The ledger counts as reachable while it answered one of this instance's last polls … */
const REACHABLE_POLLS = 3;
/** … or within this long (a poll of the local ledger is every 200 ms to 1 s). */
const REACHABLE_MIN_MS = 5_000;

export function instrument(metrics: Metrics, a: Adapters, domain: Domain, http: Http): void {
  const { services, leadership, pollMs } = domain;
  const { verifier, batch, claimer, streams, latestLedger } = services;
  verifier.onVerified((event) => {
    const seconds = event.ms / 1000;
    if ('error' in event) metrics.paymentRefused(toSvcError(event.error).code, seconds, 'channel');
    else if (event.outcome.ok) {
      // A replay is the first answer again, not a new payment.
      if (!event.outcome.replayed) metrics.paymentAccepted(seconds, 'channel');
    } else metrics.paymentRefused(event.outcome.code, seconds, 'channel');
  });
  // batch-settlement: a /verify only reserves the channel, so a payment is accepted when it is
  // charged (/settle, a stream slice); a charge of nothing (released) is no payment.
  batch.onJudged((event) => {
    const seconds = event.ms / 1000;
    if ('error' in event) metrics.paymentRefused(toSvcError(event.error).code, seconds, 'batch-settlement');
    else if (!event.outcome.ok) metrics.paymentRefused(event.outcome.code, seconds, 'batch-settlement');
    else if (
      event.kind === 'settle' &&
      'response' in event.outcome &&
      event.outcome.response &&
      !event.outcome.replayed
    )
      metrics.paymentAccepted(seconds, 'batch-settlement');
  });
  claimer.onClaim((event) => {
    if ('error' in event) metrics.claim(event.error instanceof LedgerUnavailable ? 'unavailable' : 'failed');
    else if (event.outcome.status === 'claimed') metrics.claim('claimed', event.outcome.vouchersCovered);
    else metrics.claim(event.outcome.status);
  });
  streams.onSession((event) => {
    if (event.kind === 'opened') metrics.streamOpened();
    else metrics.streamEnded(event.reason);
  });
  a.storeHealth.onWrite(({ ms, failed }) => metrics.storeWrite(ms / 1000, failed));
  const silenceMs = Math.max(REACHABLE_POLLS * pollMs, REACHABLE_MIN_MS);
  metrics.read({
    streamSessionsOpen: () => a.store.countOpenStreams(),
    eventStreamsOpen: () => http.feed.size,
    storeWritesPending: () => a.storeHealth.pending,
    storeWritable: () => a.storeHealth.writable,
    ledgerReachable: () => {
      const silent = latestLedger.silentForMs;
      return silent !== null && silent <= silenceMs;
    },
    latestLedger: () => latestLedger.latestLedger,
    leader: () => leadership.isLeader,
  });
}
