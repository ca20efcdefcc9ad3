import { describe, expect, it } from 'vitest';
import { contractFromRaw, fromHex, randomKeypair, toHex, voucherContext } from '@svc/core';
import { ChannelLimitError, ChannelSigner } from '@svc/sdk';

const PASSPHRASE = 'Standalone Network ; February 2017';
const contract = contractFromRaw(new Uint8Array(32).fill(2));

function signer(deposit = 10_000n, cumulative = 0n) {
  const voucherKey = randomKeypair();
  const s = new ChannelSigner({
    channelId: 7n,
    deposit,
    cumulative,
    voucherKey,
    networkPassphrase: PASSPHRASE,
    channelContract: contract,
    network: 'stellar:local',
    payee: randomKeypair().address,
    asset: contractFromRaw(new Uint8Array(32).fill(1)),
  });
  return { s, voucherKey };
}

describe('ChannelSigner', () => {
  it('signs vouchers the channel’s key verifies, for exactly the cumulative asked', () => {
    const { s, voucherKey } = signer();
    const v = s.next(5000n);
    expect(v).toMatchObject({ channelId: '7', cumulative: '5000' });
    expect(voucherContext(PASSPHRASE, contract).verify(voucherKey.publicKey, 7n, 5000n, fromHex(v.signature, 64))).toBe(
      true,
    );
  });

  it('only moves forward on confirmation, and never backwards', () => {
    const { s } = signer();
    s.next(5000n);
    expect(s.cumulative).toBe(0n); // signed is not accepted
    s.confirm(5000n);
    expect(s.next(1000n).cumulative).toBe('6000');
    s.confirm(3000n);
    expect(s.cumulative).toBe(5000n);
    expect(s.remaining).toBe(5000n);
  });

  it('believes no account of the channel above what it has signed, and keeps that bound in its state', () => {
    const { s } = signer();
    const seen: bigint[] = [];
    s.onSigned(() => seen.push(s.signed));
    s.next(5000n);
    s.next(5000n); // the same voucher again: not a new highest
    expect(seen).toEqual([5000n]);
    expect(() => s.confirm(5001n)).toThrow(ChannelLimitError);
    expect(s.cumulative).toBe(0n);
    s.confirm(5000n);
    expect(s.next(1000n).cumulative).toBe('6000');
    const copy = ChannelSigner.fromState(
      JSON.parse(JSON.stringify(s.toState())) as ReturnType<ChannelSigner['toState']>,
    );
    expect(copy.signed).toBe(6000n);
    expect(copy.cumulative).toBe(5000n);
    copy.confirm(6000n);
    // A state written before `signed` was kept: bounded by its cumulative.
    const { signed: _signed, ...old } = s.toState();
    expect(ChannelSigner.fromState(old).signed).toBe(5000n);
  });

  it('refuses to exceed the deposit, a zero amount, or a start above the deposit', () => {
    const { s } = signer(10_000n, 9_000n);
    expect(() => s.next(1001n)).toThrow(ChannelLimitError);
    expect(() => s.next(0n)).toThrow(ChannelLimitError);
    expect(s.next(1000n).cumulative).toBe('10000');
    expect(() => signer(10n, 11n)).toThrow(ChannelLimitError);
    s.setDeposit(20_000n);
    expect(s.next(1001n).cumulative).toBe('10001');
  });

  it('round-trips through its saved state', () => {
    const { s } = signer(10_000n, 2_000n);
    const copy = ChannelSigner.fromState(
      JSON.parse(JSON.stringify(s.toState())) as ReturnType<ChannelSigner['toState']>,
    );
    expect(copy.next(1n)).toEqual(s.next(1n));
  });

  it('runs payments of one channel one at a time', async () => {
    const { s } = signer();
    const order: string[] = [];
    const slow = (name: string, ms: number) =>
      s.exclusive(async () => {
        order.push(`${name}+`);
        await new Promise((r) => setTimeout(r, ms));
        order.push(`${name}-`);
      });
    await Promise.all([slow('a', 20), slow('b', 1)]);
    expect(order).toEqual(['a+', 'a-', 'b+', 'b-']);
  });

  describe('batch-settlement books', () => {
    it('rebase() takes a charged total backwards or forwards, never above what was signed or the deposit', () => {
      const { s } = signer(10_000n);
      s.next(5000n);
      s.confirm(5000n);
      s.next(5000n); // the ceiling 10000 signed
      s.rebase(6200n); // charged less than the price
      expect(s.cumulative).toBe(6200n);
      expect(s.next(1000n).cumulative).toBe('7200');
      s.rebase(1200n); // backwards: a lower charge only lowers the next ceiling
      expect(s.cumulative).toBe(1200n);
      expect(s.signed).toBe(10_000n);
      expect(() => s.rebase(10_001n)).toThrow(ChannelLimitError);
      expect(() => s.rebase(-1n)).toThrow(ChannelLimitError);
      expect(s.cumulative).toBe(1200n);
      s.rebase(0n);
      expect(s.cumulative).toBe(0n);
    });

    it('recognize() accepts only its own key’s voucher for that amount, and learns a forgotten one', () => {
      const { s, voucherKey } = signer(10_000n);
      const seen: bigint[] = [];
      s.onSigned(() => seen.push(s.signed));
      const own = (amount: bigint) => toHex(voucherContext(PASSPHRASE, contract).sign(voucherKey, 7n, amount));
      // A voucher of 8000 signed by this key (before a wallet file was put back, say).
      expect(s.recognize(8000n, own(8000n))).toBe(true);
      expect(s.signed).toBe(8000n);
      expect(seen).toEqual([8000n]);
      expect(s.recognize(4000n, own(4000n))).toBe(true); // below the highest: nothing to learn
      expect(seen).toEqual([8000n]);
      // Not its voucher: another key, another amount, another channel, not hex.
      const stranger = toHex(voucherContext(PASSPHRASE, contract).sign(randomKeypair(), 7n, 9000n));
      expect(s.recognize(9000n, stranger)).toBe(false);
      expect(s.recognize(9000n, own(8000n))).toBe(false);
      expect(s.recognize(9000n, toHex(voucherContext(PASSPHRASE, contract).sign(voucherKey, 8n, 9000n)))).toBe(false);
      expect(s.recognize(9000n, 'zz')).toBe(false);
      expect(s.recognize(0n, own(8000n))).toBe(false);
      expect(s.signed).toBe(8000n);
      s.rebase(8000n);
      expect(s.cumulative).toBe(8000n);
    });

    it('keeps its receiver authorizer in its state', () => {
      const authorizer = randomKeypair().address;
      const s = new ChannelSigner({
        channelId: 7n,
        deposit: 10n,
        voucherKey: randomKeypair(),
        networkPassphrase: PASSPHRASE,
        channelContract: contract,
        network: 'stellar:local',
        payee: randomKeypair().address,
        asset: contract,
        receiverAuthorizer: authorizer,
      });
      expect(s.receiverAuthorizer).toBe(authorizer);
      const copy = ChannelSigner.fromState(
        JSON.parse(JSON.stringify(s.toState())) as ReturnType<ChannelSigner['toState']>,
      );
      expect(copy.receiverAuthorizer).toBe(authorizer);
      expect(signer().s.receiverAuthorizer).toBeNull();
      expect(signer().s.toState()).not.toHaveProperty('receiverAuthorizer');
    });
  });
});
