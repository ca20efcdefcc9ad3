// Generators for the HTTP fuzz suites: nasty values, JSON-schema-shaped values (from the routes'
// own zod schemas, so a route added later gets near-valid inputs without new code), raw body
// mutations (deep nesting, __proto__, invalid UTF-8, huge), query strings and content types.
import fc from 'fast-check';
import { I128_MAX, U64_MAX } from '@svc/core';

/** Harness values by field name: real ids and addresses mixed into generated inputs. */
export interface Pool {
  valuesFor(key: string): readonly string[];
  all: readonly string[];
}

export const NASTY_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  'null',
  'undefined',
  'true',
  'false',
  '0',
  '-0',
  '00',
  '007',
  '1e308',
  '-1e308',
  '1e400',
  'NaN',
  'Infinity',
  '-Infinity',
  '-1',
  '1.5',
  '0x10',
  '0b1',
  ' 42',
  '42 ',
  '+42',
  '4\u00a02',
  '٤٢',
  '１２',
  String(U64_MAX),
  String(U64_MAX + 1n),
  String(I128_MAX),
  String(I128_MAX + 1n),
  '9'.repeat(39),
  '9'.repeat(40),
  '0'.repeat(40) + '1',
  '-' + String(I128_MAX),
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  '[object Object]',
  '\ud800',
  '\udfff',
  '\ud83d',
  '😀',
  '👩‍👩‍👧',
  '\u202e',
  '\ufeff',
  'ǅ',
  'İ',
  'ß',
  '\u0085',
  '\u2028',
  '\r\n',
  '\t',
  '\\',
  '"',
  "'",
  '`',
  '%00',
  '%',
  '%zz',
  '%2F',
  '../',
  '..',
  '.',
  '/',
  '//',
  '?',
  '#',
  '&',
  '=',
  '<script>alert(1)</script>',
  "'; DROP TABLE channels; --",
  '${7*7}',
  '{{7*7}}',
  'stellar:local',
  'stellar:testnet',
  'stellar:pubnet',
  'eip155:1',
  'channel',
  'exact',
  'request',
  'token',
  'second',
  'Bearer ',
  'Bearer x',
  'G' + 'A'.repeat(55),
  'C' + 'A'.repeat(55),
  'g' + 'a'.repeat(55),
  'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  'S' + 'A'.repeat(55),
  '0'.repeat(64),
  'f'.repeat(64),
  'F'.repeat(64),
  'g'.repeat(64),
  '0'.repeat(63),
  '0'.repeat(128),
  '0'.repeat(127),
  'ff'.repeat(64),
  'a'.repeat(257),
  'x'.repeat(2049),
  'y'.repeat(10_000),
];

export const NASTY_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  1.5,
  -1.5,
  1e21,
  1e308,
  -1e308,
  5e-324,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  2 ** 64,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE,
  59,
  60,
  61,
  999,
  1000,
  1001,
  29_999,
  30_000,
  30_001,
  86_400,
  86_401,
  3_600_000,
  3_600_001,
  200,
  201,
  1_000_000,
  1_000_001,
];

/** Number literals JSON.stringify never writes, swapped into a body's text. */
const RAW_NUMBERS = [
  '-0',
  '1e400',
  '-1e400',
  '1E-400',
  '0.0',
  '1.0',
  '-0.0',
  '1e308',
  '100000000000000000000000',
  '0e0',
  '9007199254740993',
];
const NASTY_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '',
  ' ',
  '\u0000',
  '😀',
  'a'.repeat(300),
  'then',
  'length',
  '0',
];

export const CONTENT_TYPES: readonly string[] = [
  'application/json; charset=utf-8',
  'application/JSON',
  'application/json;charset=UTF-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json;;',
  'application/json; boundary=x',
  'application/problem+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/json',
  'application/octet-stream',
  '*/*',
  'json',
  '',
  ';',
  'application/',
  '\u00e9',
  'application/json, text/plain',
];

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 4 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
  { arbitrary: fc.bigInt({ min: -(I128_MAX * 2n), max: I128_MAX * 2n }).map(String), weight: 1 },
);

export const nastyNumber: fc.Arbitrary<number> = fc.oneof(fc.constantFrom(...NASTY_NUMBERS), fc.integer(), fc.double());

const nastyKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 12 }));

/** Any JSON value, biased to awkward ones. */
export const nastyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: false },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(nastyKey, tie('value'), { maxKeys: 5 }),
  ),
})).value;

// ---- values shaped by a JSON schema (z.toJSONSchema of the route's zod schema) -----------------

export interface JsonSchema {
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  description?: string;
}

const NUMERIC_PATTERN = /^\^\[0-9\]\{1,(\d+)\}\$$/;
const BOUNDARY_DIGITS = [
  '0',
  '1',
  String(U64_MAX),
  String(U64_MAX + 1n),
  String(I128_MAX),
  String(I128_MAX + 1n),
  '9'.repeat(39),
  '0'.repeat(39),
  '000001',
];

/** A value for `schema`: mostly valid, sometimes a nasty replacement; field names pick harness values. */
export function shaped(
  schema: JsonSchema,
  pool: Pool,
  root: JsonSchema = schema,
  key = '',
  depth = 0,
): fc.Arbitrary<unknown> {
  const valid = validFor(schema, pool, root, key, depth);
  return fc.oneof({ arbitrary: valid, weight: 9 }, { arbitrary: depth > 3 ? nastyString : nastyJson, weight: 1 });
}

function validFor(schema: JsonSchema, pool: Pool, root: JsonSchema, key: string, depth: number): fc.Arbitrary<unknown> {
  if (schema.$ref) return validFor(resolve(schema.$ref, root), pool, root, key, depth);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => validFor(s, pool, root, key, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
      return objectFor(schema, pool, root, depth);
    case 'array':
      return fc.array(schema.items ? shaped(schema.items, pool, root, key, depth + 1) : nastyJson, { maxLength: 4 });
    case 'string':
      return stringFor(schema, pool, key);
    case 'integer':
    case 'number':
      return numberFor(schema);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return depth > 3 ? nastyString : nastyJson;
  }
}

function objectFor(schema: JsonSchema, pool: Pool, root: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const props = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const fields = props.map(([name, s]) => {
    const value = shaped(s, pool, root, name, depth + 1);
    // Required fields are there 19 times in 20; optional ones half of the time.
    const keep = required.has(name) ? fc.nat(19).map((n) => n > 0) : fc.boolean();
    return fc.tuple(fc.constant(name), keep, value);
  });
  const free = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : null;
  const extras = fc.dictionary(nastyKey, free ? shaped(free, pool, root, '', depth + 1) : nastyJson, {
    maxKeys: free ? 3 : 1,
  });
  return fc
    .tuple(fc.tuple(...fields), fc.oneof({ arbitrary: fc.constant({}), weight: 6 }, { arbitrary: extras, weight: 1 }))
    .map(([chosen, extra]) => {
      const out: Record<string, unknown> = {};
      for (const [name, keep, value] of chosen) if (keep) out[name] = value;
      for (const [k, v] of Object.entries(extra))
        Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
      return out;
    });
}

function stringFor(schema: JsonSchema, pool: Pool, key: string): fc.Arbitrary<string> {
  const known = pool.valuesFor(key);
  const numeric = schema.pattern ? NUMERIC_PATTERN.exec(schema.pattern) : null;
  const options: fc.WeightedArbitrary<string>[] = [];
  if (known.length > 0) options.push({ arbitrary: fc.constantFrom(...known), weight: 6 });
  if (numeric) options.push({ arbitrary: fc.constantFrom(...BOUNDARY_DIGITS), weight: 2 });
  const matching = schema.pattern ? patternArb(schema.pattern) : null;
  if (matching) options.push({ arbitrary: matching, weight: 3 });
  else
    options.push({
      arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 64, 64) }),
      weight: 2,
    });
  if (schema.maxLength !== undefined)
    options.push({ arbitrary: fc.constant('x'.repeat(schema.maxLength + 1)), weight: 1 });
  options.push({ arbitrary: fc.constantFrom(...pool.all), weight: 1 });
  return fc.oneof(...options);
}

const patterns = new Map<string, fc.Arbitrary<string> | null>();

function patternArb(pattern: string): fc.Arbitrary<string> | null {
  if (!patterns.has(pattern)) {
    try {
      patterns.set(pattern, fc.stringMatching(new RegExp(pattern)));
    } catch {
      patterns.set(pattern, null);
    }
  }
  return patterns.get(pattern) ?? null;
}

function numberFor(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1_000_000);
  const max = Math.min(
    schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1_000_000),
    Number.MAX_SAFE_INTEGER,
  );
  const lo = Math.max(min, Number.MIN_SAFE_INTEGER);
  return fc.oneof(
    { arbitrary: fc.integer({ min: lo, max: Math.max(lo, max) }), weight: 6 },
    { arbitrary: fc.constantFrom(lo, max, lo - 1, max + 1, lo + 0.5), weight: 2 },
    { arbitrary: nastyNumber, weight: 1 },
  );
}

function resolve(ref: string, root: JsonSchema): JsonSchema {
  const name = ref.replace('#/$defs/', '');
  return root.$defs?.[name] ?? {};
}

// ---- bodies ----------------------------------------------------------------------------------

export interface Body {
  body?: string;
  bodyBase64?: string;
}

/** A string value replaced by deep nesting once the body is text (JSON.stringify would overflow). */
export const DEEP = '@@deep@@';
const DEEP_MARK = JSON.stringify(DEEP);

/** Nesting far past what a recursive walk survives, inside the 64 KiB body limit. */
const deepText: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(100, 1000, 5000, 12_000, 30_000),
    fc.constantFrom('[', '{"a":', '{"constructor":', '{"__proto__":'),
  )
  .map(([n, open]) => {
    const depth = open === '[' ? n : Math.min(n, Math.floor(60_000 / (open.length + 1)));
    return open.repeat(depth) + (open === '[' ? '' : '1') + (open === '[' ? ']' : '}').repeat(depth);
  });

const hugeText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(30_000, 60_000).map((n) => `[${'0,'.repeat(n / 2)}0]`),
  fc.constantFrom(60_000, 70_000).map((n) => JSON.stringify({ s: 'x'.repeat(n) })),
  fc.constant(JSON.stringify(Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i])))),
);

const invalidUtf8: fc.Arbitrary<Body> = fc
  .tuple(
    fc.constantFrom('{"a":"', '{"', '', '["'),
    fc.constantFrom(
      [0xff],
      [0xfe, 0xff],
      [0xc0, 0xaf],
      [0x80],
      [0xe2, 0x82],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0x00],
    ),
    fc.constantFrom('"}', '":1}', '', '"]'),
  )
  .map(([open, bytes, close]) => ({
    bodyBase64: Buffer.concat([Buffer.from(open), Buffer.from(bytes), Buffer.from(close)]).toString('base64'),
  }));

/** Text-level changes to a body JSON.stringify would never produce. */
export function mutateText(text: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.nat(Math.max(0, text.length - 1)).map((n) => text.slice(0, n)),
    fc.constantFrom(...RAW_NUMBERS).map((raw) => text.replace(/(?<=[:[,])-?[0-9][0-9.eE+-]*/, raw)),
    fc
      .constantFrom(
        '{"__proto__":{"isValid":true,"admin":true},',
        '{"constructor":{"prototype":{"x":1}},',
        '{"__proto__":null,',
        '{"a":1,"a":2,',
      )
      .map((p) => (text.startsWith('{') && text.length > 2 ? p + text.slice(1) : text)),
    fc.constantFrom('\ufeff', ' \n\t', '\u0000').map((p) => p + text),
    fc.constantFrom(' x', ',', '}', '\u0000', ' {}').map((s) => text + s),
    fc.constant(text.replace('"', '"\\u0000')),
    fc.constant(text.replace(/"[^"]*"/, '"\\ud800"')),
    deepText.map((deep) =>
      text.includes(DEEP_MARK)
        ? text.replace(DEEP_MARK, deep)
        : text.replace(/(?<=:)("[^"]*"|-?[0-9.eE+-]+|true|false|null)/, deep),
    ),
  );
}

/** A request body: shaped values (mostly), their text mutations, any JSON, garbage, deep, huge, not UTF-8, empty. */
export function bodyArb(shapedValue: fc.Arbitrary<unknown>): fc.Arbitrary<Body> {
  const text = (value: unknown) => JSON.stringify(value) ?? 'null';
  const direct = shapedValue.chain((v) => {
    const t = text(v);
    return t.includes(DEEP_MARK)
      ? deepText.map((deep) => ({ body: t.replace(DEEP_MARK, deep) }))
      : fc.constant({ body: t });
  });
  return fc.oneof(
    { arbitrary: direct, weight: 10 },
    { arbitrary: shapedValue.chain((v) => mutateText(text(v))).map((body) => ({ body })), weight: 4 },
    { arbitrary: nastyJson.map((v) => ({ body: text(v) })), weight: 3 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map((body) => ({ body })), weight: 1 },
    { arbitrary: deepText.map((body) => ({ body })), weight: 1 },
    { arbitrary: hugeText.map((body) => ({ body })), weight: 1 },
    { arbitrary: invalidUtf8, weight: 1 },
    {
      arbitrary: fc.constantFrom<Body>(
        { body: '' },
        {},
        { body: 'null' },
        { body: '""' },
        { body: '[]' },
        { body: '{}' },
        { body: '0' },
      ),
      weight: 1,
    },
  );
}

/** content-type: JSON nearly always, otherwise something a client might get wrong. */
export const contentTypeArb: fc.Arbitrary<string | null> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 14 },
  { arbitrary: fc.constantFrom<string | null>(null, ...CONTENT_TYPES), weight: 2 },
);

// ---- queries and paths -----------------------------------------------------------------------

/** A query object → query string: repeated keys for arrays, sometimes raw (bad percent escapes, bare keys). */
export function queryArb(shapedValue: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  const encoded = shapedValue.map((value) => {
    const params = new URLSearchParams();
    const entries: [string, unknown][] =
      typeof value === 'object' && value !== null ? Object.entries(value) : [['value', value]];
    for (const [k, v] of entries)
      for (const one of Array.isArray(v) ? v : [v])
        params.append(k, typeof one === 'string' ? one : (JSON.stringify(one) ?? ''));
    return params.toString();
  });
  const raw = fc
    .array(
      fc.tuple(
        fc.oneof(
          nastyKey,
          fc.constantFrom('limit', 'cursor', 'offset', 'payTo', 'channelId', 'account', 'days', 'bucket', 'history'),
        ),
        fc.oneof(
          nastyString,
          fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%C0%AF', '%FF', 'a=b', '&&', '[]', '1&1'),
        ),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => pairs.map(([k, v]) => `${rawSafe(k)}=${rawSafe(v)}`).join('&'));
  return fc.oneof(
    { arbitrary: encoded, weight: 8 },
    { arbitrary: fc.tuple(encoded, encoded).map(([a, b]) => `${a}&${b}`), weight: 2 },
    { arbitrary: raw, weight: 2 },
    {
      arbitrary: fc.constantFrom(
        '',
        '&',
        '=',
        '==',
        '?',
        'a',
        'a[]=1',
        'a[b]=1',
        '__proto__[x]=1',
        'constructor=1',
        '__proto__=1&limit=1',
        `limit=${'9'.repeat(400)}`,
        `cursor=${'A'.repeat(5000)}`,
      ),
      weight: 1,
    },
  );
}

/** What Node's client lets through a request line: printable ASCII; everything else percent-encoded. */
export function rawSafe(text: string): string {
  return text.replace(/[^\u0021-\u007e]|[#?&]/gu, pct);
}

/** Percent-encodes every byte of the UTF-8 of `text` but the unreserved ones (a lone surrogate becomes U+FFFD). */
export function pct(text: string): string {
  let out = '';
  for (const b of Buffer.from(text, 'utf8'))
    out += /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
      ? String.fromCharCode(b)
      : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** A path segment: real values for the parameter, shaped ones, and nasty ones. */
export function segmentArb(shapedValue: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  const asText = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  return fc.oneof(
    { arbitrary: shapedValue.map((v) => pct(asText(v))), weight: 8 },
    { arbitrary: nastyString.map(pct), weight: 2 },
    { arbitrary: nastyString.map(rawSafe), weight: 1 },
    {
      arbitrary: fc.constantFrom('%', '%zz', '%2e%2e', '..', '%00', '%FF', 'x'.repeat(200), '9'.repeat(100)),
      weight: 1,
    },
  );
}
