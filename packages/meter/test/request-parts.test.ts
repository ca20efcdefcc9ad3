// The one reader of request parts every binding uses: the same header, URL and body from node:http's
// shapes as from a web Request's.
import { describe, expect, it } from 'vitest';
import { bodyBytes, headerReader, originOf, publicRequestUrl } from '../src/request-parts.ts';

describe('request parts', () => {
  it('reads a header by any case, from node:http headers and from web Headers alike', () => {
    const node = headerReader({ 'payment-signature': 'abc', 'x-twice': ['first', 'second'] });
    const web = headerReader(new Headers({ 'Payment-Signature': 'abc' }));
    for (const read of [node, web]) {
      expect(read('PAYMENT-SIGNATURE')).toBe('abc');
      expect(read('x-payment')).toBeUndefined();
    }
    expect(node('X-Twice')).toBe('first');
  });

  it('names the public origin when one is set, else the one the request came to', () => {
    expect(publicRequestUrl('https://seller.example', originOf('http', '127.0.0.1:9'), '/a?b=1')).toBe(
      'https://seller.example/a?b=1',
    );
    expect(publicRequestUrl(undefined, originOf('http', '127.0.0.1:9'), '/a?b=1')).toBe('http://127.0.0.1:9/a?b=1');
    expect(originOf('https', undefined)).toBe('https://localhost');
  });

  it('takes the first body that is bytes or text; a parsed body is none', () => {
    const bytes = new Uint8Array([1, 2]);
    expect(bodyBytes(undefined, bytes)).toBe(bytes);
    expect(bodyBytes('raw', bytes)).toBe('raw');
    expect(bodyBytes(undefined, { q: 'parsed' })).toBeNull();
    expect(bodyBytes()).toBeNull();
  });
});
