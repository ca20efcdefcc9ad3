// The refund digest (src/batch-refund.ts): its bytes, its domain apart from the voucher's, a
// signature bound to the channel, the amount and the nonce, and the payload's decoding.
import { describe, expect, it } from 'vitest';
import {
  REFUND_DOMAIN,
  REFUND_MESSAGE_LENGTH,
  concatBytes,
  contractFromRaw,
  decodeBatchRefund,
  fromHex,
  i128be,
  isBatchRefundPayload,
  keypairFromSeed,
  networkId,
  refundContext,
  sha256,
  toHex,
  u64be,
  utf8,
  voucherContext,
} from '@svc/core';

const PASSPHRASE = 'Standalone Network ; February 2017';
const CONTRACT = contractFromRaw(new Uint8Array(32).fill(2));
const keys = keypairFromSeed(new Uint8Array(32).fill(1));
const ctx = refundContext(PASSPHRASE, CONTRACT);

describe('refund digest', () => {
  it('hashes domain ‖ network id ‖ contract ‖ channel ‖ amount (0: all) ‖ nonce, 109 bytes', () => {
    const message = concatBytes(
      utf8(REFUND_DOMAIN),
      networkId(PASSPHRASE),
      new Uint8Array(32).fill(2),
      u64be(42n),
      i128be(100_000n),
      u64be(3n),
    );
    expect(message.length).toBe(REFUND_MESSAGE_LENGTH);
    expect(toHex(ctx.hash(42n, 100_000n, 3n))).toBe(toHex(sha256(message)));
    expect(toHex(ctx.hash(42n, null, 3n))).toBe(toHex(ctx.hash(42n, 0n, 3n)));
  });

  it('verifies its own signature only for the same channel, amount and nonce', async () => {
    const sig = ctx.sign(keys, 42n, 100_000n, 3n);
    expect(await ctx.verifyAsync(keys.publicKey, 42n, 100_000n, 3n, sig)).toBe(true);
    expect(await ctx.verifyAsync(keys.publicKey, 43n, 100_000n, 3n, sig)).toBe(false);
    expect(await ctx.verifyAsync(keys.publicKey, 42n, 100_001n, 3n, sig)).toBe(false);
    expect(await ctx.verifyAsync(keys.publicKey, 42n, 100_000n, 4n, sig)).toBe(false);
    expect(await ctx.verifyAsync(keys.publicKey, 42n, null, 3n, sig)).toBe(false);
    const other = refundContext('Test SDF Network ; September 2015', CONTRACT);
    expect(await other.verifyAsync(keys.publicKey, 42n, 100_000n, 3n, sig)).toBe(false);
  });

  it('is no voucher: a voucher signature does not verify as a refund', async () => {
    const voucher = voucherContext(PASSPHRASE, CONTRACT).sign(keys, 42n, 0n);
    expect(await ctx.verifyAsync(keys.publicKey, 42n, null, 0n, toHex(voucher))).toBe(false);
  });
});

describe('refund payload', () => {
  const payload = (p: Record<string, unknown>) => ({
    x402Version: 2,
    accepted: { scheme: 'batch-settlement', network: 'stellar:local' },
    payload: { type: 'refund', channelId: '42', nonce: '3', signature: 'ab'.repeat(64), ...p },
  });

  it('decodes the channel, the amount (absent: all), the nonce and the signature', () => {
    expect(isBatchRefundPayload(payload({}))).toBe(true);
    const all = decodeBatchRefund(payload({}));
    expect(all).toMatchObject({
      ok: true,
      value: { channelId: 42n, amount: null, nonce: 3n, network: 'stellar:local' },
    });
    const part = decodeBatchRefund(payload({ amount: '100000', signature: 'AB'.repeat(64) }));
    expect(part).toMatchObject({ ok: true, value: { amount: 100_000n, signature: 'ab'.repeat(64) } });
  });

  it('refuses a zero amount, a nonce past u64 and a short signature, saying where', () => {
    for (const [bad, where] of [
      [{ amount: '0' }, 'payload.amount'],
      [{ nonce: '18446744073709551616' }, 'payload.nonce'],
      [{ signature: fromHex('ab').length.toString() }, 'payload.signature'],
    ] as const) {
      const decoded = decodeBatchRefund(payload(bad));
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) expect(decoded.message).toContain(where);
    }
    expect(isBatchRefundPayload(payload({ type: 'voucher' }))).toBe(false);
  });
});
