// Float: the credit pool, read-only (GET /float): size, share price over time, utilisation,
// credit lines with their health against the liquidation threshold, and investor positions.
import { get } from '../api.js';
import type { FloatView } from '@svc/core';
import { timeChart } from '../charts.js';
import type { Chart } from '../charts.js';
import { fill, h, section, stat, table } from '../dom.js';
import { amount, chartUnits, count, percent, shortAddress, time, units } from '../format.js';
import { href } from '../router.js';
import type { Context, View } from '../view.js';
import { problem } from '../view.js';

const HISTORY = 500;
const POLL_MIN_MS = 2000;
const POLL_MAX_MS = 15_000;

export function floatView(ctx: Context): View {
  const stats = h('div', { class: 'stats', 'data-panel': 'pool' }, h('p', { class: 'muted' }, 'Reading GET /float…'));
  const chartBox = h('div', { class: 'chart' });
  const chartNote = h('p', { class: 'muted' });
  const lines = h('div');
  const positions = h('div');
  const el = h(
    'div',
    { class: 'view float' },
    stats,
    section('Share price and utilisation', chartBox, chartNote),
    section('Credit lines', lines),
    section('Positions', positions),
  );
  const chart: Chart = timeChart(
    chartBox,
    [
      {
        label: `share price (${ctx.asset.code})`,
        color: '#0891b2',
        kind: 'line',
        format: (v) => v.toFixed(ctx.asset.decimals),
      },
      { label: 'utilisation (%)', color: '#d97706', kind: 'step', right: true, format: (v) => `${v.toFixed(2)} %` },
    ],
    {
      // The share price moves little: its own range around it; utilisation on 0–100 %.
      y: {
        range: (_u, min, max) =>
          min === max ? [min * 0.9, max * 1.1] : [min - (max - min) * 0.2, max + (max - min) * 0.2],
      },
      right: { format: (v) => `${v} %`, range: [0, 100] },
    },
  );

  let timer: number | null = null;
  const load = async () => {
    let every = POLL_MAX_MS;
    try {
      const f = await get<FloatView>(`/float?history=${HISTORY}`);
      every = Math.max(POLL_MIN_MS, Math.min(POLL_MAX_MS, f.sampleSeconds * 1000));
      fill(stats, ...poolCards(f, ctx));
      chart.set([
        f.history.map((s) => Date.parse(s.at) / 1000),
        f.history.map((s) => chartUnits(s.sharePrice, ctx.asset)),
        f.history.map((s) => s.utilizationBps / 100),
      ]);
      chartNote.textContent =
        f.history.length === 0
          ? 'No sample yet.'
          : `${count(f.history.length)} samples, one every ${f.sampleSeconds} s, from ${time(f.history[0]?.at)} to ${time(f.history.at(-1)?.at)}. Share price: ${ctx.asset.code} per whole share.`;
      fill(lines, lineTable(f, ctx));
      fill(positions, positionTable(f, ctx));
    } catch (err) {
      fill(stats, problem(err));
    }
    timer = window.setTimeout(() => void load(), every);
  };
  void load();
  return {
    el,
    destroy() {
      if (timer !== null) window.clearTimeout(timer);
      chart.destroy();
    },
  };
}

function poolCards(f: FloatView, ctx: Context): HTMLElement[] {
  const p = f.pool;
  return [
    stat('Pool size', amount(p.size, ctx.asset), 'size', 'idle + lent'),
    stat('Idle', amount(p.idle, ctx.asset), 'idle'),
    stat('Lent', amount(p.lent, ctx.asset), 'lent'),
    stat('Utilisation', percent(p.utilizationBps), 'utilization', 'lent ÷ size'),
    stat('Share price', amount(p.sharePrice, ctx.asset), 'sharePrice', 'per whole share'),
    stat('Shares', amount(p.totalShares, { ...ctx.asset, code: 'shares' }), 'totalShares'),
    stat(
      'Credit lines',
      count(p.lineCount),
      'lineCount',
      `liquidatable below ${(p.liquidationThresholdBps / 10000).toFixed(2)}`,
    ),
    stat('Investors', count(p.investorCount), 'investorCount'),
  ];
}

/** Health against the threshold: the bar's scale runs to twice the threshold, the mark is the threshold. */
function healthBar(healthBps: number, thresholdBps: number): HTMLElement {
  const scale = thresholdBps * 2;
  const width = Math.min(100, (healthBps / scale) * 100);
  return h(
    'div',
    {
      class: `health${healthBps < thresholdBps ? ' bad' : ''}`,
      title: `${healthBps} bps; liquidatable below ${thresholdBps} bps`,
    },
    h('span', { class: 'fill', style: `width:${width}%` }),
    h('span', { class: 'mark', style: 'left:50%' }),
  );
}

function lineTable(f: FloatView, ctx: Context): HTMLElement {
  const threshold = f.pool.liquidationThresholdBps;
  const rows = f.lines.map((l) => [
    h('a', { class: 'mono', href: href('account', l.account), title: l.account }, shortAddress(l.account)),
    amount(l.debt, ctx.asset),
    amount(l.value, ctx.asset),
    h(
      'div',
      { class: 'health-cell' },
      healthBar(l.healthBps, threshold),
      h('span', null, `${(l.healthBps / 10000).toFixed(4)} vs ${(threshold / 10000).toFixed(2)}`),
    ),
    l.liquidatable ? h('span', { class: 'chip bad' }, 'liquidatable') : h('span', { class: 'chip good' }, 'healthy'),
  ]);
  const more =
    f.pool.lineCount > f.lines.length
      ? h('p', { class: 'muted' }, `The ${f.lines.length} largest of ${f.pool.lineCount} lines.`)
      : null;
  return h(
    'div',
    null,
    table(['account', 'debt', 'value', 'health against the threshold', ''], rows, 'No credit line.', {
      'data-table': 'lines',
    }),
    more,
  );
}

function positionTable(f: FloatView, ctx: Context): HTMLElement {
  const total = units(f.pool.totalShares) ?? 0n;
  const rows = f.positions.map((p) => {
    const shares = units(p.shares) ?? 0n;
    return [
      h('a', { class: 'mono', href: href('account', p.address), title: p.address }, shortAddress(p.address)),
      amount(p.shares, { ...ctx.asset, code: 'shares' }),
      amount(p.value, ctx.asset),
      total > 0n ? percent(Number((shares * 10000n) / total)) : '—',
    ];
  });
  const more =
    f.pool.investorCount > f.positions.length
      ? h('p', { class: 'muted' }, `The ${f.positions.length} largest of ${f.pool.investorCount} positions.`)
      : null;
  return h(
    'div',
    null,
    table(['investor', 'shares', 'value', 'of the pool'], rows, 'No investor.', { 'data-table': 'positions' }),
    more,
  );
}
