// A getTransaction answer as the port's TxResult: a failure's code from diagnostic events, and a
// transaction that is not a channel call.
import { describe, expect, it } from 'vitest';
import { xdr } from '@stellar/stellar-sdk';
import { txResultOf } from '../src/stellar/tx-result.js';
import {
  ASSET_CONTRACT,
  CHANNEL_CONTRACT,
  FACILITATOR,
  FACILITATOR_SEQ,
  PASSPHRASE,
  PAYER,
} from './fixtures/soroban/scenario.js';
import { addr, b64, errorEvent, i128, invocation, txIncluded } from './fixtures/soroban/xdr-builders.js';
import { CLAIM_LEDGER, claimCall } from './fixtures/soroban/world.js';

const ctx = { passphrase: PASSPHRASE, channelContract: CHANNEL_CONTRACT, asset: ASSET_CONTRACT };

describe('txResultOf', () => {
  it('a FAILED claim takes its code from the diagnostic events the node recorded', () => {
    const reply = {
      ...txIncluded({ tx: claimCall.signed, ledger: CLAIM_LEDGER, order: 1, success: false, retval: null, events: [] }),
      diagnosticEventsXdr: [b64(errorEvent(CHANNEL_CONTRACT, xdr.ScError.sceContract(21), 'claim'))],
    };
    const res = txResultOf(
      {
        ...reply,
        status: 'FAILED',
        latestLedgerCloseTime: Number(reply.latestLedgerCloseTime),
        createdAt: Number(reply.createdAt),
      },
      claimCall.hash,
      ctx,
    );
    expect(res).toMatchObject({
      status: 'FAILED',
      code: 21,
      op: 'channel.claim',
      source: FACILITATOR.address,
      hash: claimCall.hash,
      events: [],
    });
    expect(res.message).toBe('CHANNEL_CLOSED: the channel contract refused claim on chain (Error(Contract, #21))');
  });

  it('without diagnostics a failure names the transaction result and has no code', () => {
    const reply = txIncluded({
      tx: claimCall.signed,
      ledger: CLAIM_LEDGER,
      order: 1,
      success: false,
      retval: null,
      events: [],
    });
    const res = txResultOf(
      {
        ...reply,
        status: 'FAILED',
        latestLedgerCloseTime: Number(reply.latestLedgerCloseTime),
        createdAt: Number(reply.createdAt),
      },
      claimCall.hash,
      ctx,
    );
    expect(res.code).toBeUndefined();
    expect(res.message).toBe('the transaction failed on chain: txFailed (invokeHostFunctionTrapped)');
  });

  it('a call of another contract is a plain stellar.tx without a result', () => {
    const tx = invocation(PAYER.address, FACILITATOR_SEQ, ASSET_CONTRACT, 'transfer', [
      addr(PAYER.address),
      addr(FACILITATOR.address),
      i128(5n),
    ]);
    tx.sign();
    const reply = txIncluded({
      tx,
      ledger: CLAIM_LEDGER,
      order: 2,
      success: true,
      retval: xdr.ScVal.scvVoid(),
      events: [],
    });
    const res = txResultOf(
      {
        ...reply,
        status: 'SUCCESS',
        latestLedgerCloseTime: Number(reply.latestLedgerCloseTime),
        createdAt: Number(reply.createdAt),
      },
      tx.hash().toString('hex'),
      ctx,
    );
    expect(res).toMatchObject({ status: 'SUCCESS', op: 'stellar.tx', source: PAYER.address, events: [] });
    expect(res.result).toBeUndefined();
  });
});
