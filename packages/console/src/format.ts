// How the console writes values: amounts with every decimal of the asset and its code, addresses
// shortened (the whole one in the title), times in the reader's locale. Nothing here invents a
// value: what cannot be read is shown as a dash.
import { displayAmount } from '@svc/core';

/** The asset every amount is in, from GET /supported. */
export interface Asset {
  code: string;
  decimals: number;
}

const UNITS_RE = /^-?[0-9]{1,40}$/;

/** Base units from the wire (a decimal string), or null for anything else. */
export function units(value: unknown): bigint | null {
  if (typeof value === 'string' && UNITS_RE.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return null;
}

/** "0.0005000 USDC" for 5000 base units; a dash when the value is not an amount. */
export function amount(value: unknown, asset: Asset): string {
  const v = units(value);
  return v === null ? '—' : `${displayAmount(v, asset.decimals)} ${asset.code}`;
}

/** An amount in asset units as a plain number, for chart axes only (never for shown totals). */
export function chartUnits(value: unknown, asset: Asset): number {
  const v = units(value);
  return v === null ? 0 : Number(v) / 10 ** asset.decimals;
}

/** "GDTC…7QTH". */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

/** "be4f51f8…" for a transaction hash. */
export function shortHash(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 8)}…` : hash;
}

/** The path (and query) of a same-origin resource URL, the whole URL otherwise. */
export function resourceLabel(resource: string): string {
  try {
    const url = new URL(resource);
    return url.host === window.location.host ? url.pathname + url.search : url.host + url.pathname + url.search;
  } catch {
    return resource;
  }
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** The console's one date-time format, in the viewer's time zone: "2026-11-24 03:53:17" (or without seconds). */
export function stamp(d: Date, seconds = true): string {
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return `${day} ${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ''}`;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : stamp(new Date(t));
}

/** The time of day of the same format: "03:53:17". */
export function clockTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : stamp(new Date(t)).slice(11);
}

/**
 * A chart's time ticks, in a format chosen by their spacing and never the same label twice:
 * "2026-11-24" for ticks a day or more apart; otherwise "03:50" (with seconds, "03:50:20", for
 * ticks less than a minute apart), with the day ("2026-11-24 03:50") where a new day begins or
 * where the time of day alone was already used on the axis (two days of hourly ticks).
 */
export function tickTimes(seconds: readonly number[]): string[] {
  const gaps = seconds.slice(1).map((v, i) => v - seconds[i]!);
  const step = gaps.length > 0 ? Math.min(...gaps) : 0;
  const withSeconds = step > 0 && step < 60;
  const daysOnly = step >= 86_400;
  const used = new Set<string>();
  let previousDay: string | null = null;
  return seconds.map((v) => {
    const full = stamp(new Date(v * 1000), withSeconds);
    const day = full.slice(0, 10);
    const clock = full.slice(11);
    const label = daysOnly ? day : day !== previousDay || used.has(clock) ? full : clock;
    previousDay = day;
    // Two ticks the format cannot tell apart: the second is left blank rather than repeated.
    if (used.has(label)) return '';
    used.add(label);
    used.add(clock);
    return label;
  });
}

/**
 * A value axis's tick labels with the fewest decimals that tell them apart: 0.0002, 0.0004, …
 * rather than uPlot's rounding to "0.001, 0.001, 0.001, 0, 0" under small amounts.
 */
export function axisNumbers(values: readonly number[]): string[] {
  let distinct: string[] | null = null;
  for (let decimals = 0; decimals <= 10; decimals++) {
    const labels = values.map((v) => v.toFixed(decimals));
    // Exact where a few decimals can be (0.00025 is not written 0.0003); else the first that differ.
    if (values.every((v, i) => Math.abs(Number(labels[i]) - v) <= 1e-9 * Math.max(1, Math.abs(v)))) return labels;
    if (
      distinct === null &&
      new Set(labels).size === new Set(values).size &&
      values.every((v, i) => v === 0 || Number(labels[i]) !== 0)
    )
      distinct = labels;
  }
  return distinct ?? values.map((v) => String(v));
}

/** "1 h 5 min" from seconds. */
export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3600)} h`;
}

/** Basis points as a percentage: 1333 → "13.33 %". */
export function percent(bps: number): string {
  return `${(bps / 100).toFixed(2)} %`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}
