// The time axis's labels (format.ts tickTimes): a format chosen by the ticks' spacing, and never
// the same label twice on one axis. Run in the viewer's time zone, as the console does: the
// expectations are built with the same local clock.
import { describe, expect, it } from 'vitest';
import { axisNumbers, tickTimes } from '../src/format.js';

/** Seconds since the epoch of a local time. */
const at = (y: number, mo: number, d: number, h: number, mi = 0, s = 0) =>
  new Date(y, mo - 1, d, h, mi, s).getTime() / 1000;

describe('tickTimes', () => {
  it('gives ticks under a minute apart their seconds, not "03:50" three times', () => {
    const ticks = [0, 20, 40, 60, 80].map((s) => at(2026, 11, 24, 3, 50) + s);
    expect(tickTimes(ticks)).toEqual(['2026-11-24 03:50:00', '03:50:20', '03:50:40', '03:51:00', '03:51:20']);
  });

  it('labels ticks a day or more apart by their day alone, not "06:00" and "12:00" under day bars', () => {
    const ticks = [24, 25, 26].map((d) => at(2026, 11, d, 0));
    expect(tickTimes(ticks)).toEqual(['2026-11-24', '2026-11-25', '2026-11-26']);
  });

  it('names the day again where a time of day would repeat (two days of six-hourly ticks)', () => {
    const ticks = Array.from({ length: 9 }, (_, i) => at(2026, 11, 24, 6) + i * 6 * 3600);
    const labels = tickTimes(ticks);
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels.slice(0, 4)).toEqual(['2026-11-24 06:00', '12:00', '18:00', '2026-11-25 00:00']);
    expect(labels[4]).toBe('2026-11-25 06:00');
  });

  it('keeps an hour of ten-minute ticks short, with the day once', () => {
    const ticks = [0, 10, 20, 30].map((m) => at(2026, 11, 24, 3, m));
    expect(tickTimes(ticks)).toEqual(['2026-11-24 03:00', '03:10', '03:20', '03:30']);
  });
});

describe('axisNumbers', () => {
  it('writes small amounts with the decimals that tell them apart, not "0.001" three times', () => {
    expect(axisNumbers([0, 0.0002, 0.0004, 0.0006, 0.0008, 0.001])).toEqual([
      '0.0000',
      '0.0002',
      '0.0004',
      '0.0006',
      '0.0008',
      '0.0010',
    ]);
  });

  it('writes a quarter step exactly, not rounded to a neighbour', () => {
    expect(axisNumbers([0, 0.00025, 0.0005, 0.00075, 0.001])).toEqual([
      '0.00000',
      '0.00025',
      '0.00050',
      '0.00075',
      '0.00100',
    ]);
  });

  it('keeps whole numbers whole', () => {
    expect(axisNumbers([0, 5, 10, 15])).toEqual(['0', '5', '10', '15']);
  });
});
