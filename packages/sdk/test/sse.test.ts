import { describe, expect, it } from 'vitest';
import { SseParser } from '../src/sse.js';

const bytes = (text: string) => new TextEncoder().encode(text);

/** Feeds `text` in pieces of `size` bytes and collects every event. */
function parse(text: string, size: number, parser = new SseParser()) {
  const all = bytes(text);
  const out = [];
  for (let i = 0; i < all.length; i += size) out.push(...parser.push(all.subarray(i, i + size)));
  return out;
}

describe('SseParser', () => {
  const stream =
    ': a comment\n\nevent: session\ndata: {"a":1}\n\nid: 7\nevent: payment-required\r\ndata: one\r\ndata: two\r\n\r\n' +
    'data: héllo ✓\r\rretry: 10\nunknown: x\ndata: last\n\nevent: pending\ndata: never ended';

  it('yields each event once its blank line is read, however the bytes are cut', () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      expect(parse(stream, size)).toEqual([
        { event: 'session', data: '{"a":1}' },
        { event: 'payment-required', data: 'one\ntwo', id: '7' },
        { event: 'message', data: 'héllo ✓' },
        { event: 'message', data: 'last' },
      ]);
    }
  });

  it('answers the events a chunk completes, and none before', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('event: a\ndata: 1\n'))).toEqual([]);
    expect(parser.push(bytes('\nevent: b\ndata: 2\n\n'))).toEqual([
      { event: 'a', data: '1' },
      { event: 'b', data: '2' },
    ]);
  });

  it('refuses a line longer than its limit, and then everything', () => {
    const parser = new SseParser({ maxBufferSize: 64 });
    expect(parser.push(bytes(`data: ${'x'.repeat(40)}\n\n`))).toHaveLength(1);
    expect(() => parser.push(bytes(`data: ${'x'.repeat(100)}`))).toThrow(/max buffer size/);
    expect(() => parser.push(bytes('\n\n'))).toThrow(/max buffer size/);
  });
});
