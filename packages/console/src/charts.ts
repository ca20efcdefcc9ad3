// Time series and a histogram, drawn by uPlot (a small canvas chart library for time series).
// Charts only draw what the API gave; the exact figures are always shown as text beside them.
import uPlot from 'uplot';
import { axisNumbers, stamp, tickTimes } from './format.js';

const HEIGHT = 220;
const AXIS = { stroke: '#52525b', grid: { stroke: '#e4e4e7', width: 1 }, ticks: { stroke: '#e4e4e7', width: 1 } };
/** The time axis: at least this many pixels between labels. */
// Ticks and legend in the console's one date-time format (format.ts), not uPlot's own.
// The labels drawn are also written on the chart's box (data-x-ticks): a canvas has no text to read
// otherwise, for a screen reader's user or a test.
const X_AXIS = {
  ...AXIS,
  space: 110,
  values: (u: uPlot, splits: number[]) => {
    const labels = tickTimes(splits);
    u.root.parentElement?.setAttribute('data-x-ticks', labels.filter((l) => l !== '').join(' | '));
    return labels;
  },
};
const X_SERIES = { value: (_u: uPlot, v: number | null) => (v === null ? '—' : stamp(new Date(v * 1000), false)) };

export interface SeriesSpec {
  label: string;
  color: string;
  kind?: 'line' | 'step' | 'bars';
  /** A second y scale, drawn on the right. */
  right?: boolean;
  /** The value as the legend shows it. */
  format?: (v: number) => string;
  /** Bars: the share of the slot a bar takes (0.7 by default); a narrower one draws inside a wider. */
  barWidth?: number;
}

export interface Chart {
  readonly el: HTMLElement;
  set(data: uPlot.AlignedData): void;
  destroy(): void;
}

function pathsFor(spec: SeriesSpec): uPlot.Series.PathBuilder | undefined {
  const { bars, stepped } = uPlot.paths;
  const width = spec.barWidth ?? 0.7;
  if (spec.kind === 'bars' && bars) return bars({ size: [width, Math.round((48 * width) / 0.7)] });
  if (spec.kind === 'step' && stepped) return stepped({ align: 1 });
  return undefined;
}

function series(spec: SeriesSpec): uPlot.Series {
  const value = spec.format;
  return {
    label: spec.label,
    stroke: spec.color,
    // Bars are filled, not outlined: an empty bucket draws nothing rather than a dash.
    width: spec.kind === 'bars' ? 0 : 2,
    scale: spec.right ? 'right' : 'y',
    ...(spec.kind === 'bars' ? { fill: `${spec.color}bb` } : {}),
    ...(pathsFor(spec) ? { paths: pathsFor(spec) } : {}),
    // Lines get uPlot's own choice (points while they are sparse); bars and steps none.
    ...(spec.kind === 'bars' || spec.kind === 'step' ? { points: { show: false } } : {}),
    ...(value ? { value: (_u: uPlot, v: number | null) => (v === null ? '—' : value(v)) } : {}),
  };
}

/** Keeps a chart as wide as its box. */
function mount(el: HTMLElement, make: (width: number) => uPlot): Chart {
  const plot = make(Math.max(240, el.clientWidth));
  const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height: HEIGHT }));
  observer.observe(el);
  // Without the cursor on it, uPlot's legend reads "--": show the latest point instead, again
  // each time the cursor leaves (after uPlot's own handler has cleared it).
  const latest = () => {
    const n = plot.data[0]?.length ?? 0;
    if (n > 0) plot.setLegend({ idx: n - 1 });
  };
  el.addEventListener('mouseleave', () => window.setTimeout(latest, 0));
  return {
    el,
    set: (data) => {
      // Nothing to draw: say so instead of an empty frame on a made-up time axis.
      const empty = data
        .slice(1)
        .every((ys) =>
          Array.from(ys as ArrayLike<number | null | undefined>).every((y) => y === null || y === undefined || y === 0),
        );
      el.classList.toggle('empty', empty);
      plot.setData(data);
      latest();
    },
    destroy: () => {
      observer.disconnect();
      plot.destroy();
    },
  };
}

export interface Scales {
  /** The time axis of a bucketed series: ticks only on whole buckets of this many seconds. */
  x?: { bucketSeconds: number };
  /** Left axis: tick labels (default uPlot's), a range (default from zero up), and its unit. */
  y?: { format?: (v: number) => string; range?: uPlot.Scale.Range; unit?: string };
  /** A right axis for the series marked `right`. */
  right?: { format?: (v: number) => string; range?: uPlot.Scale.Range; unit?: string };
}

const FROM_ZERO: uPlot.Scale.Range = (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1];

function axis(scale: string, format: ((v: number) => string) | undefined, side: 1 | 3, unit?: string): uPlot.Axis {
  return {
    ...AXIS,
    scale,
    side,
    size: 64,
    ...(unit ? { label: unit, labelSize: 18 } : {}),
    ...(side === 1 ? { grid: { show: false } } : {}),
    values: (u: uPlot, splits: number[]) => {
      const labels = format ? splits.map(format) : axisNumbers(splits);
      // As the time axis's: the labels drawn, readable off the canvas (data-y-ticks, data-right-ticks).
      u.root.parentElement?.setAttribute(`data-${scale}-ticks`, labels.filter((l) => l !== '').join(' | '));
      return labels;
    },
  };
}

/** Half a bucket either side, so the first and last bars are whole. */
const BARS_X: uPlot.Scale.Range = (u, min, max) => {
  const xs = u.data[0];
  const step = xs.length > 1 ? (xs[1] ?? 0) - (xs[0] ?? 0) : 3600;
  return [min - step / 2, max + step / 2];
};

/** A minute either side of a single instant (uPlot would otherwise span years around it). */
const LINE_X: uPlot.Scale.Range = (_u, min, max) => (max - min < 60 ? [min - 60, max + 60] : [min, max]);

/** Tick spacings of a bucketed axis, in buckets: a day's bars get day ticks, never 06:00 and 12:00. */
const BUCKET_MULTIPLES = [1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 720];

/** A time series chart; x in seconds since the epoch. */
export function timeChart(el: HTMLElement, specs: readonly SeriesSpec[], scales: Scales = {}): Chart {
  const bars = specs.some((s) => s.kind === 'bars');
  return mount(
    el,
    (width) =>
      new uPlot(
        {
          width,
          height: HEIGHT,
          scales: {
            x: { time: true, range: bars ? BARS_X : LINE_X },
            y: { range: scales.y?.range ?? FROM_ZERO },
            right: { range: scales.right?.range ?? FROM_ZERO },
          },
          series: [X_SERIES, ...specs.map(series)],
          axes: [
            scales.x ? { ...X_AXIS, incrs: BUCKET_MULTIPLES.map((k) => k * scales.x!.bucketSeconds) } : X_AXIS,
            axis('y', scales.y?.format, 3, scales.y?.unit),
            ...(scales.right ? [axis('right', scales.right.format, 1, scales.right.unit)] : []),
          ],
          legend: { live: true },
        },
        [[], ...specs.map(() => [])],
        el,
      ),
  );
}

/** Room a bin's label takes ("10–20", "0.25–0.5"), in CSS pixels. */
const BIN_LABEL_PX = 60;

/** Label every bin, or every second (third…) one when a narrow chart would overlap them. */
function binLabelStep(width: number, bins: number): number {
  return Math.max(1, Math.ceil((bins * BIN_LABEL_PX) / Math.max(1, width - 60)));
}

/** Bars over named bins (a histogram). */
export function histogram(el: HTMLElement, bins: readonly string[], spec: SeriesSpec): Chart {
  const ticks = bins.map((_b, i) => i);
  return mount(
    el,
    (width) =>
      new uPlot(
        {
          width,
          height: HEIGHT,
          scales: {
            x: { time: false, range: [-0.5, bins.length - 0.5] },
            y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.15))] },
          },
          series: [{ label: 'bin', value: (_u, v) => bins[v] ?? '' }, series({ ...spec, kind: 'bars' })],
          axes: [
            {
              ...AXIS,
              splits: () => ticks,
              values: (u, splits) =>
                splits.map((i) => (i % binLabelStep(u.width, bins.length) === 0 ? (bins[i] ?? '') : '')),
            },
            { ...AXIS, size: 50, values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : '')) },
          ],
          legend: { live: true },
        },
        [ticks, bins.map(() => 0)],
        el,
      ),
  );
}
