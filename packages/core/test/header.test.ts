import { describe, expect, it } from 'vitest';
import {
  MAX_PAYMENT_HEADER_BYTES,
  decodeJsonHeader,
  decodePaymentHeader,
  encodeJsonHeader,
  fromBase64,
  toBase64,
  utf8,
} from '@svc/core';
import fixtures from './fixtures/payloads.json' with { type: 'json' };

describe('payment header codec', () => {
  it.each(fixtures.accepted)('decodes the $name', ({ payload, expect: want }) => {
    const decoded = decodePaymentHeader(encodeJsonHeader(payload));
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.value.x402Version).toBe(want.x402Version);
    expect(decoded.value.network).toBe(want.network);
    expect(decoded.value.channelId).toBe(BigInt(want.channelId));
    expect(decoded.value.cumulative).toBe(BigInt(want.cumulative));
    expect(decoded.value.signature).toMatch(/^[0-9a-f]{128}$/);
  });

  it.each(fixtures.rejected)('refuses the $name as PAYMENT_MALFORMED', ({ payload }) => {
    const decoded = decodePaymentHeader(encodeJsonHeader(payload));
    expect(decoded).toMatchObject({ ok: false, code: 'PAYMENT_MALFORMED' });
  });

  it.each([
    ['empty', ''],
    ['not base64', '!!!not-base64!!!'],
    ['url-safe alphabet', toBase64(utf8('{"a":"???>>>"}')).replace(/\+/g, '-').replace(/\//g, '_') + '-_'],
    ['base64 of non-JSON', toBase64(utf8('hello'))],
    ['base64 of invalid UTF-8', toBase64(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))],
    ['over 8 KiB', 'A'.repeat(MAX_PAYMENT_HEADER_BYTES + 4)],
  ])('refuses a header that is %s', (_name, header) => {
    expect(decodePaymentHeader(header)).toMatchObject({ ok: false, code: 'PAYMENT_MALFORMED' });
  });

  it('refuses a __proto__ key, or a constructor with a prototype, anywhere in the JSON (as the facilitator’s body parser does)', () => {
    const header = (json: string) => toBase64(utf8(json));
    for (const json of [
      '{"__proto__":{"isAdmin":true},"x402Version":2}',
      '{"x402Version":2,"payload":{"a":[{"__proto__":{}}]}}',
      '{"constructor":{"prototype":{"isAdmin":true}},"x402Version":2}',
    ]) {
      const decoded = decodeJsonHeader(header(json));
      expect(decoded.ok, json).toBe(false);
      if (!decoded.ok) expect(decoded.message).toMatch(/__proto__|constructor/);
    }
    // The words as values, or a constructor key without a prototype, are plain data.
    expect(decodeJsonHeader(header('{"a":"__proto__","constructor":"x"}')).ok).toBe(true);
  });

  it('accepts standard base64 without padding', () => {
    const full = encodeJsonHeader({ a: 1 });
    expect(full.endsWith('=')).toBe(true);
    expect(decodeJsonHeader(full.replace(/=+$/, ''))).toEqual({ ok: true, value: { a: 1 } });
  });

  it('round-trips non-ASCII JSON', () => {
    const value = { description: 'Ein Buch — 📖' };
    expect(decodeJsonHeader(encodeJsonHeader(value))).toEqual({ ok: true, value });
  });

  it('encodes standard base64 as Node does, at every length, and reads it back', () => {
    for (let n = 0; n <= 300; n++) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 151 + n * 7) & 255);
      if (n % 50 === 0) bytes.fill(255);
      const text = toBase64(bytes);
      expect(text).toBe(Buffer.from(bytes).toString('base64'));
      expect(fromBase64(text)).toEqual(bytes);
    }
  });
});
