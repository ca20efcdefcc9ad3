// Property-based tests (fast-check) over the two codecs every payment goes through: the payment
// header decoder and the voucher codec, plus the offline receipt check. FUZZ_RUNS cases per
// property (default 10,000, seed fixed per property; FUZZ_SEED replays another run); each prints
// its count. A failing input found here is added to fixtures/fuzz-regressions.json, replayed first.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  I128_MAX,
  MAX_JSON_DEPTH,
  MAX_PAYMENT_HEADER_BYTES,
  U64_MAX,
  VOUCHER_MESSAGE_LENGTH,
  decodeJsonHeader,
  decodePaymentHeader,
  encodeJsonHeader,
  fromHex,
  keypairFromSeed,
  toBase64,
  toHex,
  utf8,
  verifyReceipt,
  voucherContext,
} from '@svc/core';
import payloads from './fixtures/payloads.json' with { type: 'json' };
import regressions from './fixtures/fuzz-regressions.json' with { type: 'json' };

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 10_000);
const CONTRACT = 'CABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAFNSZ';
const vouchers = voucherContext('Test SDF Network ; September 2015', CONTRACT);
const key = keypairFromSeed(new Uint8Array(32).fill(7));

function seedOf(name: string): number {
  const given = process.env['FUZZ_SEED'];
  if (given !== undefined && /^-?[0-9]+$/.test(given)) return Number(given) | 0;
  let h = 0x2545f491;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x5bd1e995) | 0;
  return h;
}

/** fc.assert with the suite's count and seed; prints `fuzz <name>: N cases`. */
function check<T>(name: string, arb: fc.Arbitrary<T>, property: (value: T) => void): void {
  let cases = 0;
  const started = performance.now();
  fc.assert(
    fc.property(arb, (value) => {
      cases++;
      property(value);
    }),
    { numRuns: RUNS, seed: seedOf(name) },
  );
  console.log(`fuzz ${name}: ${cases} cases, ${((performance.now() - started) / 1000).toFixed(1)} s`);
  expect(cases).toBeGreaterThanOrEqual(RUNS);
}

/** Any JSON value, biased to the awkward ones. */
const awkwardString = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '-1',
    '1.5',
    '1e3',
    ' 42',
    '0x10',
    '__proto__',
    'toString',
    String(U64_MAX + 1n),
    String(I128_MAX + 1n),
    '9'.repeat(40),
    'f'.repeat(128),
    'F'.repeat(128),
    '\u0000',
    '\ud800',
  ),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);
const json: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    awkwardString,
    fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 2 ** 53, 1e308)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        fc.constantFrom('length', 'toString', 'valueOf', '__proto__', 'constructor'),
        fc.string({ maxLength: 8 }),
      ),
      tie('v'),
      { maxKeys: 4 },
    ),
  ),
})).v;

/** A valid payload of either form, then 0–3 of its fields replaced (by path) with any JSON value. */
const validPayloads = payloads.accepted.map((a) => a.payload as Record<string, unknown>);
const mutatedPayload = fc
  .tuple(fc.constantFrom(...validPayloads), fc.array(fc.tuple(fc.nat(), json), { maxLength: 3 }))
  .map(([base, edits]) => {
    const out = structuredClone(base);
    for (const [pick, value] of edits) {
      const paths = pathsOf(out);
      const path = paths[pick % paths.length]!;
      setAt(out, path, value);
    }
    return out;
  });

function pathsOf(value: unknown, at: string[] = [], out: string[][] = []): string[][] {
  out.push(at);
  if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

function setAt(root: Record<string, unknown>, path: string[], value: unknown): void {
  if (path.length === 0) return;
  let node = root;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string, unknown>;
  Object.defineProperty(node, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
}

/** What the decoder promises of every header it accepts. */
function expectSound(header: string): void {
  const decoded = decodePaymentHeader(header);
  if (!decoded.ok) {
    expect(decoded.code).toBe('PAYMENT_MALFORMED');
    expect(decoded.message.length).toBeLessThanOrEqual(300);
    return;
  }
  const p = decoded.value;
  expect(p.channelId >= 0n && p.channelId <= U64_MAX).toBe(true);
  expect(p.cumulative >= 0n && p.cumulative <= I128_MAX).toBe(true);
  expect(p.signature).toMatch(/^[0-9a-f]{128}$/);
  expect(p.x402Version === 1 || p.x402Version === 2).toBe(true);
  expect(typeof p.network).toBe('string');
}

describe('fuzz: the payment header decoder', () => {
  it('replays the kept regression inputs first', () => {
    for (const r of regressions.header) expectSound(r.header);
    for (const r of regressions.payload) expectSound(encodeJsonHeader(r.payload));
    expect(regressions.header.length + regressions.payload.length).toBeGreaterThan(0);
  });

  it('never throws on any string; what it accepts is sound', () => {
    const header = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 100 }),
      fc.base64String({ maxLength: 400 }),
      fc.string({
        unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n'),
        maxLength: 300,
      }),
    );
    check('decodePaymentHeader(any string)', header, expectSound);
  });

  it('never throws on the base64 of any JSON value; what it accepts is sound', () => {
    check('decodePaymentHeader(base64 of any JSON)', json, (v) => expectSound(encodeJsonHeader(v)));
  });

  it('decodes a valid payload with fields replaced only when the result is still sound', () => {
    check('decodePaymentHeader(valid payload, fields replaced)', mutatedPayload, (v) =>
      expectSound(encodeJsonHeader(v)),
    );
  });

  it('round-trips every valid voucher payload exactly (signature case-folded)', () => {
    const arb = fc.record({
      channelId: fc.bigInt({ min: 0n, max: U64_MAX }),
      cumulative: fc.bigInt({ min: 0n, max: I128_MAX }),
      signature: fc.uint8Array({ minLength: 64, maxLength: 64 }),
      upper: fc.boolean(),
      flat: fc.boolean(),
    });
    check('encode → decodePaymentHeader round trip', arb, ({ channelId, cumulative, signature, upper, flat }) => {
      const hex = upper ? toHex(signature).toUpperCase() : toHex(signature);
      const payload = { channelId: channelId.toString(), cumulative: cumulative.toString(), signature: hex };
      const body = flat
        ? { x402Version: 2, scheme: 'channel', network: 'stellar:local', payload }
        : { ...validPayloads[0], payload };
      const decoded = decodePaymentHeader(encodeJsonHeader(body));
      expect(decoded.ok).toBe(true);
      if (!decoded.ok) return;
      expect([decoded.value.channelId, decoded.value.cumulative, decoded.value.signature]).toEqual([
        channelId,
        cumulative,
        toHex(signature),
      ]);
    });
  });

  it('refuses over-long headers and JSON nested past the bound, whatever they hold', () => {
    const arb = fc.record({
      depth: fc.integer({ min: MAX_JSON_DEPTH + 1, max: 2000 }),
      open: fc.constantFrom('[', '{"a":'),
    });
    check('decodeJsonHeader(deep or long)', arb, ({ depth, open }) => {
      const text = open === '[' ? '['.repeat(depth) + ']'.repeat(depth) : `${open.repeat(depth)}1${'}'.repeat(depth)}`;
      const header = toBase64(utf8(text));
      const decoded = decodeJsonHeader(header);
      if (header.length > MAX_PAYMENT_HEADER_BYTES)
        expect(decoded).toMatchObject({ ok: false, message: expect.stringContaining('larger than') });
      else expect(decoded).toMatchObject({ ok: false, message: expect.stringContaining('nested deeper') });
    });
  });
});

describe('fuzz: the voucher codec', () => {
  const ids = fc.bigInt({ min: 0n, max: U64_MAX });
  const amounts = fc.bigInt({ min: 0n, max: I128_MAX });

  it('lays out every message as docs/protocol.md#voucher says: 102 bytes, id u64 BE, cumulative i128 BE', () => {
    const prefix = vouchers.message(0n, 0n).slice(0, VOUCHER_MESSAGE_LENGTH - 24);
    check('voucher message layout', fc.tuple(ids, amounts), ([id, cumulative]) => {
      const m = vouchers.message(id, cumulative);
      expect(m.length).toBe(VOUCHER_MESSAGE_LENGTH);
      expect(toHex(m.slice(0, prefix.length))).toBe(toHex(prefix));
      expect(BigInt(`0x${toHex(m.slice(78, 86))}`)).toBe(id);
      expect(BigInt(`0x${toHex(m.slice(86, 102))}`)).toBe(cumulative);
    });
  });

  it('refuses a channel id outside u64 with a RangeError, never a wrong message', () => {
    const outside = fc.oneof(
      fc.bigInt({ min: -(1n << 80n), max: -1n }),
      fc.bigInt({ min: U64_MAX + 1n, max: 1n << 80n }),
    );
    check('voucher message (id out of range)', outside, (id) => {
      expect(() => vouchers.message(id, 1n)).toThrow(RangeError);
    });
  });

  it('verifies what it signed, and nothing else: any other id, amount, bit of the signature or key fails', () => {
    const arb = fc.record({
      id: ids,
      cumulative: amounts,
      change: fc.constantFrom('id', 'cumulative', 'signature', 'key', 'none'),
      bit: fc.nat(511),
      delta: fc.bigInt({ min: 1n, max: U64_MAX }),
    });
    const other = keypairFromSeed(new Uint8Array(32).fill(8));
    check('voucher sign → verify', arb, ({ id, cumulative, change, bit, delta }) => {
      const sig = vouchers.sign(key, id, cumulative);
      const tampered = Uint8Array.from(sig);
      tampered[bit >> 3]! ^= 1 << (bit & 7);
      const outcome =
        change === 'id'
          ? vouchers.verify(key.publicKey, (id + delta) & U64_MAX, cumulative, sig)
          : change === 'cumulative'
            ? vouchers.verify(key.publicKey, id, (cumulative + delta) % (I128_MAX + 1n), sig)
            : change === 'signature'
              ? vouchers.verify(key.publicKey, id, cumulative, tampered)
              : change === 'key'
                ? vouchers.verify(other.publicKey, id, cumulative, sig)
                : !vouchers.verify(key.publicKey, id, cumulative, sig);
      expect(outcome).toBe(false);
    });
  });

  it('never throws on any key and signature bytes: a wrong length or a non-canonical value is just false', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 70 }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ minLength: 64, maxLength: 64 }),
      fc.constant(new Uint8Array(32)),
      fc.constant(fromHex('ff'.repeat(64))),
    );
    check('voucher verify(any bytes)', fc.tuple(bytes, bytes, amounts), ([k, s, cumulative]) => {
      expect(vouchers.verify(k, 1n, cumulative, s)).toBe(false);
    });
  });
});

describe('fuzz: the offline receipt check', () => {
  it('never throws on any value and accepts none of them', () => {
    check('verifyReceipt(any JSON)', json, (v) => {
      expect(verifyReceipt(v).ok).toBe(false);
    });
  });
});
