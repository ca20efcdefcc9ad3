// Seller: one payTo's revenue (GET /sellers/:payTo/revenue), its settlements as CSV, its channels
// (GET /channels?payee=) with a claim button, and an integration snippet for its address.
import { get, post } from '../api.js';
import type { ChannelList, ChannelView, ClaimResponse, DiscoveryResponse, RevenueReport } from '@svc/core';
import { timeChart } from '../charts.js';
import type { Chart } from '../charts.js';
import { fill, h, section, stat, table } from '../dom.js';
import {
  amount,
  chartUnits,
  count,
  duration,
  percent,
  resourceLabel,
  shortAddress,
  shortHash,
  time,
  units,
} from '../format.js';
import { addressProblem, href } from '../router.js';
import type { Route } from '../router.js';
import type { Context, View } from '../view.js';
import { badAddress, problem, throttle } from '../view.js';
import { picker } from './picker.js';

const RELOAD_MS = 1500;
/** Days of series per bucket: two days of hours, a month of days. */
const WINDOW_DAYS = { hour: 2, day: 30 } as const;
const BUCKET_SECONDS = { hour: 3600, day: 86_400 } as const;

export function sellerView(ctx: Context, route: Route): View {
  const payTo = route.address;
  const bucket = route.params.get('bucket') === 'day' ? 'day' : 'hour';
  const el = h('div', { class: 'view seller' }, section('Seller', picker('seller', payTo), badAddress(payTo)));
  if (!payTo || addressProblem(payTo)) return { el, destroy: () => undefined };

  const totals = h(
    'div',
    { class: 'stats', 'data-panel': 'totals' },
    h('p', { class: 'muted' }, 'Reading the revenue…'),
  );
  const chartBox = h('div', { class: 'chart', 'data-empty': 'No payment and no settlement in this window.' });
  const chartNote = h('p', { class: 'muted' });
  const byResource = h('div');
  const aging = h('div');
  const settlements = h('div');
  const channels = h('div');
  const claimStatus = h('p', { class: 'status', role: 'status' });
  const snippet = h('pre', { class: 'snippet' });
  const toggle = h(
    'p',
    { class: 'toggle' },
    'Revenue by ',
    (['hour', 'day'] as const).map((b) =>
      h('a', { href: href('seller', payTo, { bucket: b }), class: b === bucket ? 'on' : undefined }, b),
    ),
  );
  el.append(
    h('p', { class: 'mono heading-address' }, payTo),
    totals,
    section(`Revenue by ${bucket}`, toggle, chartBox, chartNote),
    h('div', { class: 'grid two' }, section('Revenue by resource', byResource), section('Receivables aging', aging)),
    section(
      'Settlements',
      h(
        'p',
        null,
        h(
          'a',
          {
            class: 'button',
            href: `/sellers/${payTo}/settlements.csv`,
            download: `settlements-${payTo}.csv`,
            'data-action': 'csv',
          },
          'Download CSV',
        ),
        ' one row per on-chain settlement, all time.',
      ),
      settlements,
    ),
    section('Channels', claimStatus, channels),
    section(
      'Integration',
      h('p', null, 'Put an endpoint behind a pay-per-use gate, paid to this address through this facilitator:'),
      snippet,
    ),
  );

  const chart: Chart = timeChart(
    chartBox,
    [
      {
        label: `earned (${ctx.asset.code})`,
        color: '#2563eb',
        kind: 'bars',
        format: (v) => v.toFixed(ctx.asset.decimals),
      },
      {
        label: `settled (${ctx.asset.code})`,
        color: '#16a34a',
        kind: 'bars',
        barWidth: 0.3,
        format: (v) => v.toFixed(ctx.asset.decimals),
      },
    ],
    { x: { bucketSeconds: BUCKET_SECONDS[bucket] }, y: { unit: `${ctx.asset.code} per ${bucket}` } },
  );

  const claim = async (channel: ChannelView, button: HTMLButtonElement) => {
    button.disabled = true;
    claimStatus.textContent = `Claiming channel ${channel.id}…`;
    try {
      const done = await post<ClaimResponse>(`/channels/${channel.id}/claim`);
      claimStatus.textContent = `Channel ${done.channelId}: ${amount(done.amount, ctx.asset)} settled in transaction ${shortHash(done.tx)}, covering ${count(done.vouchersCovered)} payment${done.vouchersCovered === 1 ? '' : 's'}.`;
    } catch (err) {
      fill(claimStatus, problem(err));
    }
    await load();
  };

  const load = async () => {
    try {
      const [revenue, list] = await Promise.all([
        get<RevenueReport>(`/sellers/${payTo}/revenue?bucket=${bucket}&days=${WINDOW_DAYS[bucket]}`),
        get<ChannelList>(`/channels?payee=${payTo}`),
      ]);
      fill(totals, ...totalCards(revenue, ctx));
      drawSeries(chart, chartNote, revenue, ctx);
      fill(byResource, resourceTable(revenue, ctx));
      fill(aging, agingTables(revenue, ctx));
      fill(settlements, settlementTable(revenue, ctx));
      fill(
        channels,
        policyNote(revenue.settlementPolicy, ctx),
        channelTable(list.channels, revenue, ctx, (c, b) => void claim(c, b)),
      );
    } catch (err) {
      fill(totals, problem(err));
    }
  };
  const reload = throttle(() => void load(), RELOAD_MS);
  void load();
  void writeSnippet(snippet, ctx, payTo);
  const unsubscribe = ctx.feed.subscribe((added) => {
    if (added.some((e) => JSON.stringify(e).includes(payTo))) reload();
  });
  return {
    el,
    destroy() {
      unsubscribe();
      reload.cancel();
      chart.destroy();
    },
  };
}

function totalCards(r: RevenueReport, ctx: Context): HTMLElement[] {
  const t = r.totals;
  return [
    stat('Earned', amount(t.earned, ctx.asset), 'earned', 'accepted vouchers, all time'),
    stat('Settled', amount(t.settled, ctx.asset), 'settled', 'claimed on the ledger'),
    stat('Receivable', amount(t.receivable, ctx.asset), 'receivable', 'owed by open channels'),
    stat('Lost', amount(t.lost, ctx.asset), 'lost', 'owed when a channel closed: never claimable'),
    stat('Payments', count(t.payments), 'payments'),
    stat(
      'Settlements',
      count(t.settlements),
      'settlements',
      t.paymentsPerSettlement === null
        ? 'none yet'
        : h(
            'span',
            null,
            'covering ',
            h('span', { 'data-field': 'paymentsPerSettlement' }, String(t.paymentsPerSettlement)),
            ' payments each, on average',
          ),
    ),
    stat('Buyers', count(t.buyers), 'buyers'),
  ];
}

/** The buckets from one before the first with anything in it to the last (the window if none): the chart zooms to the data. */
function withData(series: RevenueReport['series']): RevenueReport['series'] {
  const busy = (b: RevenueReport['series'][number]) => b.payments > 0 || b.settlements > 0;
  const first = series.findIndex(busy);
  return first === -1 ? series : series.slice(Math.max(0, first - 1), series.findLastIndex(busy) + 1);
}

function drawSeries(chart: Chart, note: HTMLElement, r: RevenueReport, ctx: Context): void {
  const shown = withData(r.series);
  const xs = shown.map((b) => Date.parse(b.start) / 1000);
  chart.set([
    xs,
    shown.map((b) => chartUnits(b.earned, ctx.asset)),
    shown.map((b) => chartUnits(b.settled, ctx.asset)),
  ]);
  const w = r.window;
  // The caption names the span the axis draws (the zoomed buckets), not the window's days; the
  // window's totals follow, said as the window's.
  const first = shown[0];
  const last = shown.at(-1);
  const drawn =
    first && last
      ? `${time(first.start)} to ${time(new Date(Date.parse(last.start) + BUCKET_SECONDS[w.bucket] * 1000).toISOString())}`
      : `${time(w.start)} to ${time(w.end)}`;
  fill(
    note,
    'Drawn: ',
    h(
      'span',
      { 'data-field': 'chartSpan' },
      `${count(shown.length)} ${w.bucket}${shown.length === 1 ? '' : 's'}, by ${w.bucket}`,
    ),
    ` (${drawn}). In the last ${count(w.days)} day${w.days === 1 ? '' : 's'}: earned ${amount(w.earned, ctx.asset)} in ${count(w.payments)} payments, settled ${amount(w.settled, ctx.asset)} in ${count(w.settlements)} settlements. As of ${time(r.asOf)}.`,
  );
}

function resourceTable(r: RevenueReport, ctx: Context): HTMLElement {
  const rows = r.byResource.map((x) => [
    h('span', { class: 'mono', title: x.resource }, resourceLabel(x.resource)),
    count(x.payments),
    amount(x.earned, ctx.asset),
  ]);
  if (r.otherResources.resources > 0)
    rows.push([
      `${count(r.otherResources.resources)} other resources`,
      count(r.otherResources.payments),
      amount(r.otherResources.earned, ctx.asset),
    ]);
  return table(['resource', 'vouchers accepted', 'earned'], rows, 'No payments in this window.', {
    'data-table': 'resources',
  });
}

function agingTables(r: RevenueReport, ctx: Context): HTMLElement {
  const rec = r.receivables;
  return h(
    'div',
    null,
    table(
      ['age', 'channels', 'receivable'],
      rec.buckets.map((b) => [b.bucket, count(b.channels), amount(b.amount, ctx.asset)]),
      'Nothing receivable.',
      { 'data-table': 'aging' },
    ),
    rec.channels.length > 0
      ? table(
          ['channel', 'payer', 'receivable', 'oldest unclaimed', 'age'],
          rec.channels.map((c) => [
            c.channelId,
            payerLink(c.payer),
            amount(c.amount, ctx.asset),
            time(c.oldestUnclaimedAt),
            duration(c.ageSeconds),
          ]),
          '',
        )
      : null,
    r.losses.channels.length > 0
      ? table(
          ['closed channel', 'payer', 'lost', 'closed'],
          r.losses.channels.map((c) => [
            c.channelId,
            payerLink(c.payer),
            amount(c.amount, ctx.asset),
            time(c.closedAt),
          ]),
          '',
          { 'data-table': 'losses' },
        )
      : null,
  );
}

function payerLink(payer: string | null): HTMLElement | string {
  return payer ? h('a', { class: 'mono', href: href('account', payer), title: payer }, shortAddress(payer)) : '—';
}

function settlementTable(r: RevenueReport, ctx: Context): HTMLElement {
  const rows = r.settlements.map((s) => [
    time(s.settledAt),
    s.explorer
      ? h('a', { class: 'mono', href: s.explorer, title: s.tx, rel: 'noreferrer' }, shortHash(s.tx))
      : h('span', { class: 'mono', title: s.tx }, shortHash(s.tx)),
    s.channelId,
    s.payer ? h('a', { class: 'mono', href: href('account', s.payer), title: s.payer }, shortAddress(s.payer)) : '—',
    amount(s.amount, ctx.asset),
    s.paymentsCovered === null ? '—' : count(s.paymentsCovered),
  ]);
  return h(
    'div',
    null,
    table(
      ['settled', 'transaction', 'channel', 'payer', 'amount', 'payments'],
      rows,
      'No settlement in this window yet.',
      { 'data-table': 'settlements' },
    ),
    r.settlementsTruncated
      ? h('p', { class: 'muted' }, 'Only the newest 500 of this window are listed; the CSV has them all.')
      : null,
  );
}

/** "When do I get paid?" in one sentence: the threshold, how often it is checked, the expiry margin. */
function policyNote(p: RevenueReport['settlementPolicy'], ctx: Context): HTMLElement {
  return h(
    'p',
    { 'data-field': 'settlementPolicy' },
    'When you get paid: a channel is claimed on the ledger once it owes you ',
    h('strong', null, amount(p.threshold, ctx.asset)),
    ` (checked every ${duration(p.intervalSeconds)}), and in any case ${count(p.expiryMarginLedgers)} ledgers (about ${duration(Math.round(p.expiryMarginLedgers * p.ledgerSeconds))}) before it expires. Claim now to be paid sooner.`,
  );
}

/** What an open channel owes against the threshold, and when it is claimed at the latest. */
function settlementCells(c: ChannelView, r: RevenueReport, ctx: Context): [string | HTMLElement, string, string] {
  const p = r.settlementPolicy;
  const asOf = Date.parse(r.asOf);
  const atLedger = (ledgers: number) => new Date(asOf + Math.max(0, ledgers) * p.ledgerSeconds * 1000).toISOString();
  const expires = time(atLedger(c.expiresInLedgers));
  const unclaimed = units(c.unclaimed) ?? 0n;
  const threshold = units(p.threshold) ?? 0n;
  if (c.status === 'closed') {
    const lost = r.losses.channels.find((l) => l.channelId === c.id);
    return [
      lost ? h('span', { 'data-field': 'lost' }, `lost ${amount(lost.amount, ctx.asset)}`) : '—',
      '—',
      time(c.closedAt),
    ];
  }
  const bps = threshold > 0n ? Number((unclaimed * 10000n) / threshold) : 10000;
  const progress = h(
    'span',
    { 'data-field': 'toThreshold', title: `${amount(c.unclaimed, ctx.asset)} of ${amount(p.threshold, ctx.asset)}` },
    percent(Math.min(bps, 10000)),
  );
  if (unclaimed === 0n) return [progress, 'nothing owed', expires];
  const by =
    bps >= 10000 ? `within ${duration(p.intervalSeconds)}` : time(atLedger(c.expiresInLedgers - p.expiryMarginLedgers));
  return [progress, by, expires];
}

function channelTable(
  channels: readonly ChannelView[],
  r: RevenueReport,
  ctx: Context,
  claim: (c: ChannelView, b: HTMLButtonElement) => void,
): HTMLElement {
  const rows = channels.map((c) => {
    const button = h(
      'button',
      {
        type: 'button',
        'data-action': 'claim',
        'data-channel': c.id,
        disabled: c.status === 'closed' || c.unclaimed === '0',
      },
      'Claim',
    );
    button.addEventListener('click', () => claim(c, button));
    const [progress, claimedBy, expires] = settlementCells(c, r, ctx);
    return h(
      'tr',
      { 'data-channel': c.id },
      [
        button,
        c.id,
        h('a', { class: 'mono', href: href('account', c.payer), title: c.payer }, shortAddress(c.payer)),
        c.status,
        amount(c.deposit, ctx.asset),
        amount(c.lastAccepted, ctx.asset),
        amount(c.claimed, ctx.asset),
        amount(c.unclaimed, ctx.asset),
        progress,
        claimedBy,
        count(c.vouchers),
        expires,
      ].map((cell, i) => h('td', { 'data-label': CHANNEL_COLUMNS[i] }, cell)),
    );
  });
  return table(CHANNEL_COLUMNS, rows, 'No channels pay this seller yet.', { 'data-table': 'channels', class: 'cards' });
}

/** A listing's `channel` option (its batch-settlement one, second, is the same price). */
function channelOption(item: DiscoveryResponse['items'][number]) {
  return item.accepts.find(
    (a): a is Extract<DiscoveryResponse['items'][number]['accepts'][number], { scheme: 'channel' }> =>
      a.scheme === 'channel',
  );
}

/**
 * The channel table's columns. The Claim button comes first, beside the channel it claims: twelve
 * columns are wider than a laptop's window, and the button must not be the one scrolled out of
 * sight. On a phone each row is a card of label–value lines (style.css, table.cards).
 */
const CHANNEL_COLUMNS = [
  '',
  'id',
  'payer',
  'status',
  'deposit',
  'accepted',
  'claimed',
  'unclaimed',
  'to threshold',
  'claimed at the latest',
  'vouchers',
  'expires (closed)',
];

/** The meter, filled with this facilitator and this address (and the seller's first listing, if any). */
async function writeSnippet(el: HTMLElement, ctx: Context, payTo: string): Promise<void> {
  const listing = await get<DiscoveryResponse>(`/discovery/resources?payTo=${payTo}&limit=50`)
    .then((d) => d.items.find((i) => channelOption(i)?.unit === 'request') ?? null)
    .catch(() => null);
  const terms = listing ? channelOption(listing) : undefined;
  const path = listing ? new URL(listing.resource).pathname : '/weather';
  const price = terms ? `${terms.amount}n` : '5000n';
  const note =
    terms && listing
      ? `// ${amount(terms.amount, ctx.asset)} per request, as ${resourceLabel(listing.resource)} is listed`
      : `// your price in base units: 5000n is ${amount('5000', ctx.asset)}`;
  el.textContent = [
    `// npm install express @svc/meter   — save as server.mjs, run with: node server.mjs`,
    `import express from 'express';`,
    `import { svc } from '@svc/meter';`,
    ``,
    `const { meter } = svc({ facilitator: '${ctx.facilitatorUrl}', payTo: '${payTo}' });`,
    `const app = express();`,
    note,
    `app.get('${path}', meter({ price: ${price}, unit: 'request', description: ${JSON.stringify(listing?.description ?? 'Weather, per request')} }), (req, res) => {`,
    `  res.json({ ok: true }); // req.payment holds the receipt; PAYMENT-RESPONSE is set`,
    `});`,
    `app.listen(3000);`,
  ].join('\n');
}
