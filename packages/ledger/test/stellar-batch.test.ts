// StellarLedger.claimMany and .refund against recorded Soroban JSON-RPC exchanges: the contract
// invocations of docs/channel-contract.md with the signer as the caller (its authorization the
// source account's), the amounts and events they return, and a refusal in simulation (nothing sent).
import { describe, expect, it } from 'vitest';
import { LedgerClaimManyResultSchema } from '@svc/core';
import { isoFromUnix } from '../src/stellar/tx-result.js';
import {
  BATCH,
  CHANNEL_CONTRACT,
  CLAIM,
  closeTime,
  FACILITATOR,
  OPENED,
  PASSPHRASE,
  PAYEE,
  REFUND,
} from './fixtures/soroban/scenario.js';
import {
  CLAIM_MANY_AMOUNTS,
  CLAIM_MANY_LEDGER,
  claimManyCall,
  claimManyRows,
  REFUND_LEDGER,
  REFUNDED,
  refundCall,
} from './fixtures/soroban/world.js';
import { describeTx } from './helpers/soroban-replay.js';
import { stellarLedger, useReplays } from './helpers/stellar.js';

const replay = useReplays();

/** The transaction sent by sendTransaction. */
function sentTx(r: ReturnType<typeof replay>) {
  const index = r.fixture.exchanges.findIndex((e) => e.request.method === 'sendTransaction');
  return describeTx((r.sent.get(index) as { transaction: string }).transaction, PASSPHRASE);
}

describe('StellarLedger.claimMany', () => {
  it('invokes claim_many(caller, rows) as the signer and returns what each row paid, with a claimed event per row', async () => {
    const r = replay('claim-many-success');
    const ledger = await stellarLedger(r);
    const res = await ledger.claimMany(claimManyRows, FACILITATOR);
    expect(res).toMatchObject({
      hash: claimManyCall.hash,
      status: 'SUCCESS',
      ledger: CLAIM_MANY_LEDGER,
      source: FACILITATOR.address,
      op: 'channel.claim_many',
      result: { amounts: CLAIM_MANY_AMOUNTS.map(String) },
      ts: isoFromUnix(closeTime(CLAIM_MANY_LEDGER)),
    });
    expect(LedgerClaimManyResultSchema.parse(res.result).amounts).toEqual([100_000n, BATCH.buyerTotal]);
    expect(res.events.map((e) => [e.type, e.data])).toEqual([
      ['channel.claimed', { channelId: '42', payee: PAYEE.address, amount: '100000', cumulative: '135000' }],
      [
        'channel.claimed',
        { channelId: OPENED.channelId.toString(), payee: PAYEE.address, amount: '20000', cumulative: '20000' },
      ],
    ]);
    const sent = sentTx(r);
    expect(sent.invoke).toEqual({
      contract: CHANNEL_CONTRACT,
      function: 'claim_many',
      args: [
        { address: FACILITATOR.address },
        {
          vec: claimManyRows.map((row) => ({
            map: {
              channel_id: { u64: row.channelId.toString() },
              max_claimable: { i128: row.maxClaimable.toString() },
              signature: { bytes: row.signature },
              total: { i128: row.total.toString() },
            },
          })),
        },
      ],
    });
    // caller.require_auth(): the facilitator's own signature as the source account authorizes it.
    expect(sent.auth).toEqual(['sorobanCredentialsSourceAccount:claim_many']);
    expect(sent.source).toBe(FACILITATOR.address);
    expect(sent.verifies(FACILITATOR.address)).toBe(true);
  });

  it('a row the contract refuses in simulation is FAILED with its code, and nothing is sent', async () => {
    const ledger = await stellarLedger(replay('claim-many-refused'));
    const res = await ledger.claimMany(claimManyRows, FACILITATOR);
    expect(res).toMatchObject({ hash: '', status: 'FAILED', code: 26, op: 'channel.claim_many', events: [] });
    expect(res.message).toMatch(/^NOT_AUTHORIZED: .*claim_many.*nothing was submitted/);
    // Soroban names the code, not the row (the local ledger's `claims[i]: `): a facilitator that
    // batches its claims finds the refused row by halving the batch (docs/channel-contract.md).
    expect(res.message).not.toMatch(/^claims\[/);
  });
});

describe('StellarLedger.refund', () => {
  it('invokes refund(caller, id, amount, nonce) as the signer; the refunded event carries the deposit and nonce after it', async () => {
    const r = replay('refund-success');
    const ledger = await stellarLedger(r);
    const res = await ledger.refund(REFUND, FACILITATOR);
    expect(res).toMatchObject({
      hash: refundCall.hash,
      status: 'SUCCESS',
      ledger: REFUND_LEDGER,
      op: 'channel.refund',
      result: { refunded: REFUNDED.amount.toString() },
    });
    expect(res.events.map((e) => [e.type, e.data])).toEqual([
      [
        'channel.refunded',
        {
          channelId: CLAIM.channelId.toString(),
          amount: REFUNDED.amount.toString(),
          deposit: REFUNDED.deposit.toString(),
          refundNonce: '1',
        },
      ],
    ]);
    const sent = sentTx(r);
    expect(sent.invoke?.args).toEqual([
      { address: FACILITATOR.address },
      { u64: '42' },
      { i128: REFUND.amount.toString() },
      { u64: '0' },
    ]);
    expect(sent.auth).toEqual(['sorobanCredentialsSourceAccount:refund']);
  });

  it('a spent nonce refused in simulation is FAILED 27, and nothing is sent', async () => {
    const ledger = await stellarLedger(replay('refund-refused'));
    const res = await ledger.refund(REFUND, FACILITATOR);
    expect(res).toMatchObject({ hash: '', status: 'FAILED', code: 27, op: 'channel.refund' });
    expect(res.message).toMatch(/^INVALID_ARGUMENT: the channel contract refused refund in simulation/);
  });
});
