import { describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import {
  concatBytes,
  networkId,
  randomKeypair,
  sha256,
  signLedgerTx,
  toHex,
  txHash,
  utf8,
  verifyLedgerTx,
} from '@svc/core';

const PASS = 'Standalone Network ; February 2017';

describe('ledger transactions (docs/protocol.md#the-local-ledger)', () => {
  const source = randomKeypair();
  const body = { source: source.address, seq: 1, op: 'transfer', args: { to: randomKeypair().address, amount: '10' } };

  it('hashes "svc:tx:v1" ‖ network id ‖ JCS of the body', () => {
    const expected = sha256(concatBytes(utf8('svc:tx:v1'), networkId(PASS), utf8(canonicalize(body)!)));
    expect(txHash(PASS, body)).toBe(toHex(expected));
    expect(txHash(PASS, { ...body, args: { amount: '10', to: body.args.to } })).toBe(toHex(expected));
  });

  it('verifies the source signature and refuses any change', () => {
    const signed = signLedgerTx(source, PASS, body);
    expect(verifyLedgerTx(source.publicKey, PASS, signed)).toBe(true);
    expect(verifyLedgerTx(source.publicKey, PASS, { ...signed, seq: 2 })).toBe(false);
    expect(verifyLedgerTx(source.publicKey, 'Test SDF Network ; September 2015', signed)).toBe(false);
    expect(verifyLedgerTx(randomKeypair().publicKey, PASS, signed)).toBe(false);
    expect(verifyLedgerTx(source.publicKey, PASS, { ...signed, signature: 'xyz' })).toBe(false);
  });
});
