// The incremental sha256 (createSha256) of both crypto backends: fed in pieces, it digests what the
// one-shot sha256 digests of the whole (the meter hashes response bodies as they are written).
import { describe, expect, it } from 'vitest';
import { createSha256, sha256, toHex, utf8 } from '@svc/core';
import * as web from '../src/crypto-web.ts';

const pieces = [utf8('the first piece, '), new Uint8Array(0), utf8('a second, '), new Uint8Array(70_000).fill(7)];
const whole = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
let at = 0;
for (const p of pieces) {
  whole.set(p, at);
  at += p.length;
}

describe('createSha256', () => {
  it.each([
    ['node', createSha256],
    ['web', web.createSha256],
  ])('%s: pieces digest to the sha256 of the whole', (_name, create) => {
    const hash = create();
    for (const p of pieces) hash.update(p);
    expect(toHex(hash.digest())).toBe(toHex(sha256(whole)));
    expect(toHex(create().digest())).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'); // empty
  });
});
