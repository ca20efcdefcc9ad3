// StellarLedger.readDeposit and .submitDeposit: a batch-settlement deposit on Stellar is the payer's
// own signed opening (or top-up), which the facilitator submits inside a fee-bump of which it is
// the fee source. Read strictly before anything is sent (each refusal below sends nothing: the
// replays hold only the network check); submitted against recorded Soroban JSON-RPC exchanges:
// simulated as signed, sent as a fee-bump, polled into a ledger; a refusal in simulation sends
// nothing; a fee-bump the network refuses outright is LedgerTxRefused.
import { Account, Address, Keypair as StellarKeypair, Operation, TransactionBuilder } from '@stellar/stellar-sdk';
import type { Transaction, xdr } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { LedgerTxRefused } from '../src/index.js';
import { MAX_DEPOSIT_ENVELOPE_CHARS } from '../src/stellar/deposit-envelope.js';
import {
  ASSET_CONTRACT,
  BUYER_VOUCHER_KEY,
  FACILITATOR,
  OPENED,
  PASSPHRASE,
  PAYEE,
  PAYER,
} from './fixtures/soroban/scenario.js';
import { DEPOSIT_HASH, DEPOSIT_LEDGER, depositBump, openCall } from './fixtures/soroban/world.js';
import { describeTx } from './helpers/soroban-replay.js';
import { stellarLedger, useReplays } from './helpers/stellar.js';

const replay = useReplays();
const envelope = (tx: Transaction) => tx.toEnvelope().toXDR('base64');
const opening = envelope(openCall.signed);

/** The recorded opening, rebuilt with one thing changed and signed by `signer` (default the payer). */
function variant(change: {
  contract?: string;
  fn?: string;
  args?: xdr.ScVal[];
  auth?: xdr.SorobanAuthorizationEntry[];
  fee?: string;
  signer?: StellarKeypair;
}): string {
  const inner = openCall.signed;
  const op = inner.operations[0] as Operation.InvokeHostFunction;
  const call = op.func.invokeContract();
  const builder = new TransactionBuilder(new Account(PAYER.address, (BigInt(inner.sequence) - 1n).toString()), {
    fee: change.fee ?? inner.fee,
    networkPassphrase: PASSPHRASE,
    timebounds: { minTime: 0, maxTime: Number(inner.timeBounds!.maxTime) },
    sorobanData: inner.toEnvelope().v1().tx().ext().sorobanData(),
  }).addOperation(
    Operation.invokeContractFunction({
      contract: change.contract ?? Address.fromScAddress(call.contractAddress()).toString(),
      function: change.fn ?? call.functionName().toString(),
      args: change.args ?? call.args(),
      auth: change.auth ?? op.auth ?? [],
    }),
  );
  const tx = builder.build();
  tx.sign(change.signer ?? StellarKeypair.fromSecret(PAYER.secret()));
  return envelope(tx);
}

describe('StellarLedger.readDeposit', () => {
  it('reads the payer’s signed opening: its source, the open call in the local ledger’s form, and the fee-bump’s hash', async () => {
    const ledger = await stellarLedger(replay('deposit-read'));
    expect(ledger.readDeposit(opening, FACILITATOR.address)).toEqual({
      ok: true,
      source: PAYER.address,
      op: 'channel.open',
      args: {
        payee: PAYEE.address,
        deposit: OPENED.deposit.toString(),
        voucherKey: BUYER_VOUCHER_KEY.publicKeyHex,
        expiryLedger: OPENED.expiryLedger,
        receiverAuthorizer: FACILITATOR.address,
      },
      hash: DEPOSIT_HASH,
    });
  });

  it.each<[string, () => unknown, RegExp]>([
    ['not a string', () => ({ source: PAYER.address }), /base64 XDR/],
    ['too long', () => 'A'.repeat(MAX_DEPOSIT_ENVELOPE_CHARS + 4), /longer than 16384/],
    ['not base64', () => 'not base64!', /not base64/],
    ['not an envelope', () => Buffer.from('hello').toString('base64'), /not a Stellar TransactionEnvelope/],
    ['a fee-bump already', () => envelope(depositBump as unknown as Transaction), /fee-bump/],
    ['another contract', () => variant({ contract: ASSET_CONTRACT }), /not the channel contract/],
    ['another function', () => variant({ fn: 'close' }), /a deposit calls open or top_up/],
    [
      'another payer than the source',
      () => {
        const args = (openCall.signed.operations[0] as Operation.InvokeHostFunction).func.invokeContract().args();
        return variant({ args: [new Address(PAYEE.address).toScVal(), ...args.slice(1)] });
      },
      /is not the transaction's source/,
    ],
    ['no authorization', () => variant({ auth: [] }), /no authorization of the payer/],
    ['a fee above what is sponsored', () => variant({ fee: '5000001' }), /at most 5000000/],
    [
      'signed by another key',
      () => variant({ signer: StellarKeypair.fromSecret(PAYEE.secret()) }),
      /not signed by its source/,
    ],
  ])('refuses %s, and sends nothing', async (_what, make, why) => {
    const ledger = await stellarLedger(replay('deposit-read'));
    const read = ledger.readDeposit(make(), FACILITATOR.address);
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.message).toMatch(why);
  });
});

describe('StellarLedger.submitDeposit', () => {
  it('simulates the payer’s opening, sends it in the facilitator’s fee-bump and polls it into a ledger', async () => {
    const r = replay('deposit-open');
    const ledger = await stellarLedger(r);
    const res = await ledger.submitDeposit(opening, FACILITATOR);
    expect(res).toMatchObject({
      hash: DEPOSIT_HASH,
      status: 'SUCCESS',
      ledger: DEPOSIT_LEDGER,
      source: PAYER.address,
      op: 'channel.open',
      result: { channelId: OPENED.channelId.toString() },
    });
    expect(res.events.map((e) => e.type)).toContain('channel.opened');
    const sent = describeTx(
      (
        r.sent.get(r.fixture.exchanges.findIndex((e) => e.request.method === 'sendTransaction')) as {
          transaction: string;
        }
      ).transaction,
      PASSPHRASE,
    );
    // The payer's transaction unchanged inside; the facilitator the fee source, and the only signer of the bump.
    expect(sent.hash).toBe(openCall.hash);
    expect(sent.feeBump).toMatchObject({ feeSource: FACILITATOR.address, hash: DEPOSIT_HASH, signedByFeeSource: true });
    expect(BigInt(sent.feeBump!.fee)).toBeGreaterThan(BigInt(openCall.signed.fee));
  });

  it('an opening the simulation refuses is FAILED with the contract’s code, and nothing is sent', async () => {
    const ledger = await stellarLedger(replay('deposit-refused'));
    const res = await ledger.submitDeposit(opening, FACILITATOR);
    expect(res).toMatchObject({ hash: '', status: 'FAILED', code: 27, op: 'channel.open', source: PAYER.address });
    expect(res.message).toMatch(/nothing was submitted/);
  });

  it('a fee-bump the network refuses outright (a used sequence number) is LedgerTxRefused: nothing applied', async () => {
    const ledger = await stellarLedger(replay('deposit-bad-seq'));
    const err = await ledger.submitDeposit(opening, FACILITATOR).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerTxRefused);
    expect((err as Error).message).toMatch(/txBadSeq/);
  });

  it('a transaction readDeposit refuses is LedgerTxRefused before anything is sent', async () => {
    const ledger = await stellarLedger(replay('deposit-read'));
    await expect(ledger.submitDeposit(variant({ fn: 'close' }), FACILITATOR)).rejects.toBeInstanceOf(LedgerTxRefused);
  });
});
