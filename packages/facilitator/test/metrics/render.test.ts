// What a scrape renders, before anything has happened: prom-client writes a value that is not a
// number as `Nan` (the event loop's mean delay before its first sample), which Prometheus's own
// parser takes but the text format spells `NaN`, and stricter scrapers refuse. Every value must be
// in the format's spelling from the first scrape.
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';

describe('Metrics.render', () => {
  it('spells every value as the text format does, even before the process metrics have a sample', async () => {
    const text = await new Metrics().render();
    expect(text).not.toMatch(/ Nan$/m);
    const parsed = parsePrometheusText(text);
    expect(parsed.types.get('svc_payments_accepted_total')).toBe('counter');
  });
});
