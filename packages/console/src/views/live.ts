// Live: what the facilitator is doing now. Totals from GET /stats; payments against ledger
// transactions, verification latency, the event feed and rejections from GET /events.
import { get } from '../api.js';
import type { EventView, StatsView } from '@svc/core';
import { histogram, timeChart } from '../charts.js';
import type { Chart } from '../charts.js';
import { fill, h, section, stat, table } from '../dom.js';
import { amount, clockTime, count, resourceLabel } from '../format.js';
import type { Context, View } from '../view.js';
import { eventItem, problem, throttle } from '../view.js';

const FEED_SHOWN = 200;
const REJECTIONS_SHOWN = 50;
const STATS_EVERY_MS = 1000;
/** Upper edges of the latency bins, in ms; the last bin is everything above. */
const LATENCY_EDGES = [0.25, 0.5, 1, 2, 5, 10, 20, 50];
const LATENCY_BINS = [
  ...LATENCY_EDGES.map((edge, i) => (i === 0 ? `<${edge}` : `${LATENCY_EDGES[i - 1]}–${edge}`)),
  `≥${LATENCY_EDGES.at(-1)}`,
];

export function liveView(ctx: Context): View {
  const stats = h('div', { class: 'stats', 'data-panel': 'stats' }, h('p', { class: 'muted' }, 'Reading GET /stats…'));
  const flowBox = h('div', { class: 'chart', 'data-empty': 'No payment in the feed yet.' });
  const flowNote = h('p', { class: 'muted' });
  const latencyBox = h('div', { class: 'chart', 'data-empty': 'No accepted voucher in the feed yet.' });
  const latencyNote = h('p', { class: 'muted' });
  const list = h('ol', { class: 'feed', 'data-panel': 'feed' });
  const feedNote = h('p', { class: 'muted' });
  const rejections = h('div', { 'data-panel': 'rejections' });
  const el = h(
    'div',
    { class: 'view live' },
    stats,
    h(
      'div',
      { class: 'grid two' },
      section('Payments against ledger transactions', flowBox, flowNote),
      section('Verification latency', latencyBox, latencyNote),
    ),
    h('div', { class: 'grid wide-left' }, section('Event feed', feedNote, list), section('Rejections', rejections)),
  );

  const flow: Chart = timeChart(
    flowBox,
    [
      { label: 'payments (vouchers accepted)', color: '#2563eb', kind: 'step', format: count },
      { label: 'ledger transactions', color: '#ea580c', kind: 'step', format: count },
    ],
    { y: { format: (v) => (Number.isInteger(v) ? count(v) : ''), unit: 'count, since the first event' } },
  );
  const latency = histogram(latencyBox, LATENCY_BINS, { label: 'payments', color: '#7c3aed', format: count });

  const loadStats = async () => {
    try {
      fill(stats, ...statCards(await get<StatsView>('/stats'), ctx));
    } catch (err) {
      if (stats.querySelector('.stat') === null) fill(stats, problem(err));
    }
  };
  const refreshStats = throttle(() => void loadStats(), STATS_EVERY_MS);

  const redraw = (added: readonly EventView[]) => {
    const events = ctx.feed.events;
    for (const e of added) list.prepend(eventItem(e, ctx));
    while (list.children.length > FEED_SHOWN) list.lastElementChild?.remove();
    feedNote.textContent =
      events.length === 0
        ? 'No events yet. Payments, settlements and streams appear here as they happen.'
        : `The last ${Math.min(events.length, FEED_SHOWN)} events, newest first.`;
    drawFlow(flow, flowNote, events);
    drawLatency(latency, latencyNote, events);
    fill(rejections, rejectionTable(events));
    if (added.length > 0) refreshStats();
  };

  redraw(ctx.feed.events);
  void loadStats();
  const unsubscribe = ctx.feed.subscribe(redraw);
  return {
    el,
    destroy() {
      unsubscribe();
      refreshStats.cancel();
      flow.destroy();
      latency.destroy();
    },
  };
}

function statCards(s: StatsView, ctx: Context): HTMLElement[] {
  return [
    stat('Payments', count(s.vouchersAccepted), 'vouchersAccepted', 'vouchers accepted'),
    stat('Ledger transactions', count(s.chainTxCount), 'chainTxCount', 'on-chain, all kinds'),
    stat(
      'Payments per settlement',
      s.vouchersPerClaim === null ? '—' : String(s.vouchersPerClaim),
      'vouchersPerClaim',
      s.vouchersPerClaim === null ? 'no settlement yet' : 'vouchers each claim covered, on average',
    ),
    stat('Volume', amount(s.volume, ctx.asset), 'volume', 'accepted, all time'),
    stat('Open channels', count(s.channelsOpen), 'channelsOpen'),
    stat('Rejected', count(s.vouchersRejected), 'vouchersRejected', 'vouchers refused'),
    // Not the histogram's figure: this one includes the durable write (GET /stats says so).
    stat(
      'Median verification + write',
      s.medianVerifyLatencyMs === null ? '—' : `${s.medianVerifyLatencyMs} ms`,
      'medianVerifyLatencyMs',
      'signature check and durable write, last 4,096 vouchers',
    ),
    stat(
      'As exact payments',
      `${count(s.exactEquivalent.txCount)} tx`,
      'exactEquivalent',
      `${count(s.exactEquivalent.seconds)} s of ledger closes`,
    ),
  ];
}

function seconds(iso: string): number {
  return Date.parse(iso) / 1000;
}

/** Cumulative payments and distinct ledger transactions over the events received, in time order. */
function drawFlow(chart: Chart, note: HTMLElement, events: readonly EventView[]): void {
  const sorted = [...events]
    .filter((e) => !Number.isNaN(Date.parse(e.ts)))
    .sort((a, b) => seconds(a.ts) - seconds(b.ts));
  const xs: number[] = [];
  const payments: number[] = [];
  const txs: number[] = [];
  const seen = new Set<string>();
  let paid = 0;
  for (const e of sorted) {
    const tx = e.data['tx'];
    const isTx = typeof tx === 'string' && tx !== '' && !seen.has(tx);
    if (isTx) seen.add(tx);
    if (e.type === 'voucher.accepted') paid++;
    else if (!isTx) continue;
    xs.push(seconds(e.ts));
    payments.push(paid);
    txs.push(seen.size);
  }
  chart.set([xs, payments, txs]);
  const first = sorted[0];
  note.textContent = first
    ? `Counted over the events received since ${clockTime(first.ts)}: ${count(paid)} payments, ${count(seen.size)} ledger transactions. Totals since the start are above.`
    : 'No payments in the feed yet.';
}

/** The latencies the feed's voucher.accepted events report, in ms. */
function latencies(events: readonly EventView[]): number[] {
  return events.flatMap((e) => {
    const ms = e.type === 'voucher.accepted' ? e.data['latencyMs'] : undefined;
    return typeof ms === 'number' && Number.isFinite(ms) ? [ms] : [];
  });
}

/** The median as GET /stats takes it: the middle sample (the upper one of an even count). */
function median(samples: readonly number[]): number | null {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? null;
}

function drawLatency(chart: Chart, note: HTMLElement, events: readonly EventView[]): void {
  const samples = latencies(events);
  const counts = LATENCY_BINS.map(() => 0);
  for (const ms of samples) {
    const found = LATENCY_EDGES.findIndex((edge) => ms < edge);
    const bin = found === -1 ? LATENCY_EDGES.length : found;
    counts[bin] = (counts[bin] ?? 0) + 1;
  }
  chart.set([LATENCY_BINS.map((_b, i) => i), counts]);
  const mid = median(samples);
  fill(
    note,
    mid === null
      ? 'No accepted vouchers in the feed yet.'
      : [
          `Signature check only, before the durable write (as each voucher.accepted event reports it), of the ${count(samples.length)} accepted vouchers in the feed, in milliseconds. Their median: `,
          h('strong', { 'data-field': 'feedMedianLatencyMs' }, `${mid} ms`),
          '. The figure above also counts the write.',
        ],
  );
}

/** A rejection's code: the reason code of a voucher, the ledger's code name of a transaction. */
function rejectionCode(e: EventView): string {
  const pick = (key: string) => {
    const v = e.data[key];
    return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
  };
  return e.type === 'chain.rejected' ? `ledger ${pick('codeName') ?? pick('code') ?? '?'}` : (pick('code') ?? '?');
}

function rejectionTable(events: readonly EventView[]): HTMLElement {
  const rejected = events.filter((e) => e.type === 'voucher.rejected' || e.type === 'chain.rejected');
  const byCode = new Map<string, number>();
  for (const e of rejected) byCode.set(rejectionCode(e), (byCode.get(rejectionCode(e)) ?? 0) + 1);
  const rows = rejected
    .slice(-REJECTIONS_SHOWN)
    .reverse()
    .map((e) => {
      const resource = e.data['resource'];
      const op = e.data['op'];
      return [
        h('time', { datetime: e.ts }, clockTime(e.ts)),
        h('span', { class: 'mono' }, rejectionCode(e)),
        e.channelId ?? '—',
        typeof resource === 'string'
          ? h('span', { class: 'mono', title: resource }, resourceLabel(resource))
          : typeof op === 'string'
            ? h('span', { class: 'mono' }, op)
            : '—',
      ];
    });
  return h(
    'div',
    null,
    h(
      'p',
      { class: 'chips' },
      byCode.size === 0
        ? h('span', { class: 'muted' }, 'No rejections in the feed.')
        : [...byCode].map(([code, n]) => h('span', { class: 'chip bad', 'data-code': code }, `${code} × ${n}`)),
    ),
    table(['time', 'code', 'channel', 'resource'], rows, 'Nothing refused.', { 'data-table': 'rejections' }),
  );
}
