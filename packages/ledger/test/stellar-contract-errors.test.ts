// The mapping of Soroban host errors to docs/protocol.md#channels-and-records codes, the decoding of the channel
// contract's events and return values, and the per-account submission queue.
import { xdr } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { LedgerUnavailable } from '../src/index.js';
import {
  hostErrorFromText,
  hostErrorsFromEvents,
  ledgerCodeOf,
  pickHostError,
  refusalMessage,
} from '../src/stellar/contract-errors.js';
import { decodeChannelEvent, decodeReturn } from '../src/stellar/contract-interface.js';
import { SubmissionQueue } from '../src/stellar/submission-queue.js';
import { ASSET_CONTRACT, CHANNEL_CONTRACT } from './fixtures/soroban/scenario.js';
import { errorEvent, i128, simulationError, struct, sym, u64 } from './fixtures/soroban/xdr-builders.js';

describe('contract errors → docs/protocol.md#channels-and-records codes', () => {
  it('reads the escaped error of a simulation, not the ones in its event log', () => {
    const text = simulationError(CHANNEL_CONTRACT, 'claim', xdr.ScError.sceContract(24), 'Error(Contract, #24)').error;
    expect(hostErrorFromText(text)).toEqual({ type: 'Contract', code: '24' });
    expect(hostErrorFromText('HostError: Error(Auth, InvalidAction)\n 0: topics:[error, Error(Contract, #3)]')).toEqual(
      { type: 'Auth', code: 'InvalidAction' },
    );
    expect(hostErrorFromText('transaction simulation failed')).toBeUndefined();
  });

  it('maps the contract’s 20–27 as they are, a crypto trap in claim to 22, an auth failure to 26, anything else to no code', () => {
    for (const code of [20, 21, 22, 23, 24, 25, 26, 27])
      expect(ledgerCodeOf('claim', { type: 'Contract', code: String(code) })).toBe(code);
    expect(ledgerCodeOf('claim', { type: 'Crypto', code: 'InvalidInput' })).toBe(22);
    expect(ledgerCodeOf('claim_many', { type: 'Crypto', code: 'InvalidInput' })).toBe(22);
    expect(ledgerCodeOf('close', { type: 'Crypto', code: 'InvalidInput' })).toBeUndefined();
    expect(ledgerCodeOf('refund', { type: 'Crypto', code: 'InvalidInput' })).toBeUndefined();
    expect(ledgerCodeOf('refund', { type: 'Auth', code: 'InvalidAction' })).toBe(26);
    expect(ledgerCodeOf('top_up', { type: 'Auth', code: 'InvalidAction' })).toBe(26);
    // A Stellar Asset Contract's BalanceError (#10) is the token's number, not the channel's.
    expect(ledgerCodeOf('open', { type: 'Contract', code: '10' })).toBeUndefined();
    expect(ledgerCodeOf('claim', { type: 'Budget', code: 'ExceededLimit' })).toBeUndefined();
    expect(ledgerCodeOf('claim', undefined)).toBeUndefined();
  });

  it('reads errors from diagnostic events and prefers the channel contract’s own', () => {
    const events = [
      errorEvent(ASSET_CONTRACT, xdr.ScError.sceContract(10), 'transfer'),
      errorEvent(CHANNEL_CONTRACT, xdr.ScError.sceContract(27), 'open'),
    ];
    const errors = hostErrorsFromEvents(events);
    expect(errors).toEqual([
      { type: 'Contract', code: '10' },
      { type: 'Contract', code: '27' },
    ]);
    expect(pickHostError(errors)).toEqual({ type: 'Contract', code: '27' });
    expect(
      hostErrorsFromEvents([
        errorEvent(CHANNEL_CONTRACT, xdr.ScError.sceAuth(xdr.ScErrorCode.scecInvalidAction()), 'close'),
      ]),
    ).toEqual([{ type: 'Auth', code: 'InvalidAction' }]);
    expect(pickHostError([])).toBeUndefined();
  });

  it('says what was refused in English with the code’s name', () => {
    expect(refusalMessage('claim', { type: 'Contract', code: '21' }, 'in simulation')).toBe(
      'CHANNEL_CLOSED: the channel contract refused claim in simulation (Error(Contract, #21))',
    );
    expect(refusalMessage('claim', undefined, 'on chain')).toBe('UNKNOWN: the channel contract refused claim on chain');
  });
});

describe('channel contract decoding', () => {
  it('ignores events it does not know and refuses known ones that do not match the document', () => {
    expect(decodeChannelEvent([sym('upgraded')], xdr.ScVal.scvVoid(), ASSET_CONTRACT)).toBeNull();
    expect(decodeChannelEvent([xdr.ScVal.scvU32(1)], xdr.ScVal.scvVoid(), ASSET_CONTRACT)).toBeNull();
    expect(() => decodeChannelEvent([sym('claimed'), u64(1n)], struct({ amount: i128(5n) }), ASSET_CONTRACT)).toThrow(
      LedgerUnavailable,
    );
    expect(() =>
      decodeChannelEvent([sym('closed')], struct({ refunded: i128(1n), claimed: i128(0n) }), ASSET_CONTRACT),
    ).toThrow(/channel id/);
    expect(
      decodeChannelEvent([sym('closed'), u64(9n)], struct({ refunded: i128(1n), claimed: i128(0n) }), ASSET_CONTRACT),
    ).toEqual({ type: 'channel.closed', data: { channelId: '9', refunded: '1', claimed: '0' } });
    const refunded = struct({ amount: i128(5n), deposit: i128(95n), refund_nonce: u64(2n ** 64n - 1n) });
    expect(decodeChannelEvent([sym('refunded'), u64(9n)], refunded, ASSET_CONTRACT)).toEqual({
      type: 'channel.refunded',
      data: { channelId: '9', amount: '5', deposit: '95', refundNonce: '18446744073709551615' },
    });
    expect(() =>
      decodeChannelEvent([sym('refunded'), u64(9n)], struct({ amount: i128(5n), deposit: i128(95n) }), ASSET_CONTRACT),
    ).toThrow(/refunded event/);
  });

  it('decodes return values as the local ledger’s results, amounts as decimal strings', () => {
    expect(decodeReturn('claim', i128((1n << 100n) + 1n))).toEqual({ amount: ((1n << 100n) + 1n).toString() });
    expect(decodeReturn('open', u64(18_446_744_073_709_551_615n))).toEqual({ channelId: '18446744073709551615' });
    expect(decodeReturn('close', i128(0n))).toEqual({ refunded: '0' });
    expect(decodeReturn('refund', i128(7n))).toEqual({ refunded: '7' });
    expect(decodeReturn('claim_many', xdr.ScVal.scvVec([i128(1n), i128(1n << 100n)]))).toEqual({
      amounts: ['1', (1n << 100n).toString()],
    });
    expect(() => decodeReturn('claim_many', i128(1n))).toThrow(/claim_many return value/);
    expect(decodeReturn('claim', undefined)).toBeUndefined();
    expect(() => decodeReturn('claim', xdr.ScVal.scvU32(5))).toThrow(/claim return value/);
  });
});

describe('SubmissionQueue', () => {
  it('runs one task at a time per account, accounts in parallel, and a failure does not block the next', async () => {
    const queue = new SubmissionQueue();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a1 = queue.run('A', async () => {
      log.push('a1 start');
      await gate;
      log.push('a1 end');
      throw new Error('a1 failed');
    });
    const a2 = queue.run('A', () => {
      log.push('a2');
      return Promise.resolve(2);
    });
    const b1 = queue.run('B', () => {
      log.push('b1');
      return Promise.resolve(1);
    });
    expect(await b1).toBe(1);
    expect(log).toEqual(['a1 start', 'b1']);
    release();
    await expect(a1).rejects.toThrow('a1 failed');
    expect(await a2).toBe(2);
    expect(log).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
    await Promise.resolve();
    expect(queue.busy).toBe(0);
  });
});
