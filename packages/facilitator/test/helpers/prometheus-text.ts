// A strict reader of the Prometheus text exposition format (version 0.0.4), the tests' own: it throws
// on anything a Prometheus server would refuse or misread — a sample of no family typed before it, a
// family typed twice, a series twice, a malformed name, label or value, a histogram whose buckets
// are not cumulative or whose +Inf bucket is not its count — and returns each sample's value by
// series.
//
//   const series = parsePrometheusText(text);
//   series.value('svc_payments_refused_total', { code: 'VOUCHER_UNDERPAID' });

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
/** The samples a family of each type may have, by suffix of its name. */
const SUFFIXES: Record<string, readonly string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusText {
  /** Family name → its type. */
  types: ReadonlyMap<string, string>;
  samples: readonly Sample[];
  /** The value of the one sample with this name and exactly these labels; throws if there is none. */
  value(name: string, labels?: Record<string, string>): number;
}

export function parsePrometheusText(text: string): PrometheusText {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  if (!text.endsWith('\n')) throw new Error('the text must end with a line feed');
  text.split('\n').forEach((line, i) => {
    const at = `line ${i + 1} (${JSON.stringify(line.slice(0, 120))})`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a comment
      const [, keyword, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME_RE.test(name)) throw new Error(`${at}: bad metric name`);
      if (keyword === 'HELP') {
        if (helps.has(name)) throw new Error(`${at}: a second HELP for ${name}`);
        helps.add(name);
        return;
      }
      if (!TYPES.has(rest)) throw new Error(`${at}: unknown type`);
      if (types.has(name)) throw new Error(`${at}: a second TYPE for ${name}`);
      types.set(name, rest);
      return;
    }
    const sample = parseSample(line, at);
    const family = familyOf(sample.name, types);
    if (family === null) throw new Error(`${at}: a sample of no declared family`);
    const key = seriesKey(sample.name, sample.labels);
    if (seen.has(key)) throw new Error(`${at}: a second sample of ${key}`);
    seen.add(key);
    samples.push(sample);
  });
  for (const [name, type] of types) if (type === 'histogram') checkHistogram(name, samples);
  return {
    types,
    samples,
    value(name, labels = {}) {
      const key = seriesKey(name, labels);
      const found = samples.find((s) => seriesKey(s.name, s.labels) === key);
      if (!found) throw new Error(`no sample ${key}`);
      return found.value;
    },
  };
}

function parseSample(line: string, at: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) throw new Error(`${at}: not a sample`);
  const [, name, block, raw] = m as unknown as [string, string, string | undefined, string];
  const labels: Record<string, string> = {};
  if (block !== undefined) {
    // name="value" pairs, comma-separated; a value escapes \\, \" and \n.
    const body = block.slice(1, -1);
    const pair = /\s*([^=\s]+)="((?:[^"\\]|\\[\\"n])*)"\s*(,|$)/y;
    let pos = 0;
    while (pos < body.length) {
      pair.lastIndex = pos;
      const p = pair.exec(body);
      if (!p) throw new Error(`${at}: malformed labels`);
      const [, label, value] = p as unknown as [string, string, string];
      if (!LABEL_NAME_RE.test(label) || label.startsWith('__')) throw new Error(`${at}: bad label name ${label}`);
      if (label in labels) throw new Error(`${at}: label ${label} twice`);
      labels[label] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      pos = pair.lastIndex;
    }
  }
  return { name, labels, value: parseValue(raw, at) };
}

function parseValue(raw: string, at: string): number {
  if (raw === 'NaN') return NaN;
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) throw new Error(`${at}: bad value ${raw}`);
  return Number(raw);
}

/** The declared family a sample belongs to, by its name and the family's type; null if none. */
function familyOf(name: string, types: ReadonlyMap<string, string>): string | null {
  for (const [family, type] of types)
    for (const suffix of SUFFIXES[type] ?? ['']) if (name === family + suffix) return family;
  return null;
}

/** Per label set: buckets cumulative in `le`, the +Inf bucket equal to _count, a _sum beside them. */
function checkHistogram(name: string, samples: readonly Sample[]): void {
  const groups = new Map<string, Sample[]>();
  for (const s of samples.filter((x) => x.name === `${name}_bucket`)) {
    const { le, ...rest } = s.labels;
    if (le === undefined) throw new Error(`${name}: a bucket without le`);
    const key = seriesKey(name, rest);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, buckets] of groups) {
    const les = buckets.map((b) => parseValue(b.labels['le']!, key));
    for (let i = 1; i < buckets.length; i++) {
      if (les[i]! <= les[i - 1]!) throw new Error(`${key}: buckets out of order`);
      if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${key}: buckets not cumulative`);
    }
    if (les.at(-1) !== Infinity) throw new Error(`${key}: no +Inf bucket`);
    const { le: _le, ...labels } = buckets[0]!.labels;
    const count = samples.find((s) => seriesKey(s.name, s.labels) === seriesKey(`${name}_count`, labels));
    const sum = samples.find((s) => seriesKey(s.name, s.labels) === seriesKey(`${name}_sum`, labels));
    if (!count || !sum) throw new Error(`${key}: no _count or _sum`);
    if (count.value !== buckets.at(-1)!.value) throw new Error(`${key}: the +Inf bucket is not the count`);
  }
}

function seriesKey(name: string, labels: Record<string, string>): string {
  const pairs = Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${name}{${pairs.join(',')}}`;
}
