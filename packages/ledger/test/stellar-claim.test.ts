// StellarLedger.claim against recorded Soroban JSON-RPC exchanges: success, a contract refusal in
// simulation, a failure in the ledger, and a send that timed out, resumed without a second
// sequence number. And the voucher it carries is docs/protocol.md#voucher's on stellar:testnet.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  concatBytes,
  fromHex,
  i128be,
  keypairFromSeed,
  rawFromContract,
  sha256,
  toHex,
  u64be,
  utf8,
  voucherContext,
} from '@svc/core';
import { LedgerUnavailable } from '../src/index.js';
import { eventId, isoFromUnix } from '../src/stellar/tx-result.js';
import {
  CHANNEL_CONTRACT,
  CLAIM,
  CLOCK_MS,
  closeTime,
  FACILITATOR,
  PASSPHRASE,
  PAYEE,
  VOUCHER_SIGNATURE,
} from './fixtures/soroban/scenario.js';
import { CLAIM_AMOUNT, CLAIM_LEDGER, claimAgainCall, claimCall, LATER_MS } from './fixtures/soroban/world.js';
import { describeTx } from './helpers/soroban-replay.js';
import { stellarLedger, useReplays } from './helpers/stellar.js';

const replay = useReplays();
const args = { channelId: CLAIM.channelId, cumulative: CLAIM.cumulative, signature: VOUCHER_SIGNATURE };
const VECTOR = JSON.parse(
  fs.readFileSync(
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../core/test/fixtures/voucher-vector.json'),
    'utf8',
  ),
) as {
  contractIdRawHex: string;
  channelId: string;
  cumulative: string;
  voucherSecretSeedHex: string;
  expected: { publicKeyHex: string };
  testnet: { networkPassphrase: string; hashHex: string; signatureHex: string };
};

/** The transaction sent at exchange `index`, as the recording's `$tx` fields. */
function sentTx(r: ReturnType<typeof replay>, index: number) {
  const params = r.sent.get(index) as { transaction: string };
  return describeTx(params.transaction, PASSPHRASE);
}

describe('StellarLedger.claim', () => {
  it('simulates, signs as the signer (source and fee payer), sends and polls until SUCCESS', async () => {
    const r = replay('claim-success');
    const ledger = await stellarLedger(r);
    const res = await ledger.claim(args, FACILITATOR);
    const ts = isoFromUnix(closeTime(CLAIM_LEDGER));
    expect(res).toEqual({
      hash: claimCall.hash,
      status: 'SUCCESS',
      ledger: CLAIM_LEDGER,
      source: FACILITATOR.address,
      op: 'channel.claim',
      result: { amount: CLAIM_AMOUNT.toString() },
      // The asset's transfer event is the asset contract's, not the port's: only the claim shows.
      events: [
        {
          id: eventId(CLAIM_LEDGER, 3, 1),
          ledger: CLAIM_LEDGER,
          tx: claimCall.hash,
          ts,
          type: 'channel.claimed',
          data: { channelId: '42', payee: PAYEE.address, amount: '100000', cumulative: '135000' },
        },
      ],
      ts,
    });
    const sent = sentTx(r, 3);
    expect(sent.invoke).toEqual({
      contract: CHANNEL_CONTRACT,
      function: 'claim',
      args: [{ u64: '42' }, { i128: '135000' }, { bytes: VOUCHER_SIGNATURE }],
    });
    expect(sent.source).toBe(FACILITATOR.address);
    expect(sent.signers).toBe(1);
    expect(sent.verifies(FACILITATOR.address)).toBe(true);
    expect(sent.sorobanData).toBe(true);
    // The fee covers the simulated resource fee on top of the inclusion fee: the signer pays it.
    expect(Number(sent.fee)).toBe(100 + Number(claimCall.simulation.minResourceFee));
  });

  it('a contract refusal in simulation is FAILED with the mapped code, and nothing is sent', async () => {
    const ledger = await stellarLedger(replay('claim-contract-error'));
    const res = await ledger.claim(args, FACILITATOR);
    expect(res).toMatchObject({
      hash: '',
      status: 'FAILED',
      code: 23,
      op: 'channel.claim',
      source: FACILITATOR.address,
      events: [],
    });
    expect(res.message).toMatch(/^VOUCHER_NOT_INCREASING: .*Error\(Contract, #23\).*nothing was submitted/);
  });

  it('a claim that FAILED in the ledger carries its hash and the code learnt by simulating again', async () => {
    const ledger = await stellarLedger(replay('claim-failed-on-chain'));
    const res = await ledger.claim(args, FACILITATOR);
    expect(res).toMatchObject({ hash: claimCall.hash, status: 'FAILED', code: 23, ledger: CLAIM_LEDGER, events: [] });
    expect(res.message).toMatch(/VOUCHER_NOT_INCREASING.*on chain/);
  });

  it('after a send that timed out, the next claim looks the same hash up and resends the same envelope: no new sequence number', async () => {
    const r = replay('claim-timeout-resubmit');
    const ledger = await stellarLedger(r);
    const first = ledger.claim(args, FACILITATOR);
    await expect(first).rejects.toBeInstanceOf(LedgerUnavailable);
    await expect(first).rejects.toThrow(/looked up before/);
    expect(r.used).toBe(6);
    const second = await ledger.claim(args, FACILITATOR);
    expect(second).toMatchObject({ hash: claimCall.hash, status: 'SUCCESS', result: { amount: '100000' } });
    // Exchanges 6–8 only: no account read, no simulation, no new transaction in between.
    expect(r.sent.get(7)).toEqual(r.sent.get(3));
    expect(sentTx(r, 7).sequence).toBe(sentTx(r, 3).sequence);
  });

  it('a transaction that expired unincluded is forgotten: the next claim builds a new one with the same sequence number', async () => {
    const r = replay('claim-expired-rebuild');
    let builds = 0;
    // The clock is read once per build; the second build happens a minute later.
    const ledger = await stellarLedger(r, { now: () => CLOCK_MS + (builds++ === 0 ? 0 : LATER_MS) });
    await expect(ledger.claim(args, FACILITATOR)).rejects.toThrow(
      /expired without being included: nothing was applied/,
    );
    const again = await ledger.claim(args, FACILITATOR);
    expect(again).toMatchObject({ status: 'SUCCESS', hash: claimAgainCall.hash });
    expect(claimAgainCall.hash).not.toBe(claimCall.hash);
    expect(sentTx(r, 7).sequence).toBe(sentTx(r, 3).sequence);
    expect(Number(sentTx(r, 7).maxTime)).toBe(Number(sentTx(r, 3).maxTime) + LATER_MS / 1000);
  });

  it('serialises claims of one signer: the second waits for the first to finish', async () => {
    const r = replay('claim-timeout-resubmit');
    const ledger = await stellarLedger(r);
    // Both start together; the second must not read the account before the first gave up.
    const [first, second] = await Promise.allSettled([
      ledger.claim(args, FACILITATOR),
      ledger.claim(args, FACILITATOR),
    ]);
    expect(first.status).toBe('rejected');
    expect(second).toMatchObject({ status: 'fulfilled', value: { status: 'SUCCESS', hash: claimCall.hash } });
  });
});

describe('the voucher a claim carries (docs/protocol.md#voucher on stellar:testnet)', () => {
  it('is the test vector’s: the message the contract hashes, its hash and signature', async () => {
    const r = replay('info-testnet');
    const ledger = await stellarLedger(r);
    const info = await ledger.info();
    await ledger.latestLedger();
    expect(info.passphrase).toBe(VECTOR.testnet.networkPassphrase);
    expect(toHex(rawFromContract(info.contracts.channel))).toBe(VECTOR.contractIdRawHex);
    const vouchers = voucherContext(info.passphrase, info.contracts.channel);
    const [channelId, cumulative] = [BigInt(VECTOR.channelId), BigInt(VECTOR.cumulative)];
    // What the contract assembles on chain: domain ‖ network id ‖ own id ‖ u64 BE ‖ i128 BE.
    const onChain = concatBytes(
      utf8('svc:voucher:v1'),
      sha256(utf8(info.passphrase)),
      rawFromContract(CHANNEL_CONTRACT),
      u64be(channelId),
      i128be(cumulative),
    );
    expect(toHex(vouchers.message(channelId, cumulative))).toBe(toHex(onChain));
    expect(onChain.length).toBe(102);
    expect(toHex(sha256(onChain))).toBe(VECTOR.testnet.hashHex);
    const key = keypairFromSeed(fromHex(VECTOR.voucherSecretSeedHex, 32));
    expect(key.publicKeyHex).toBe(VECTOR.expected.publicKeyHex);
    expect(toHex(vouchers.sign(key, channelId, cumulative))).toBe(VECTOR.testnet.signatureHex);
    expect(vouchers.verify(key.publicKey, channelId, cumulative, fromHex(VECTOR.testnet.signatureHex, 64))).toBe(true);
    // …and it is exactly what claim() puts in the invocation (fixtures: claim-success).
    expect(VOUCHER_SIGNATURE).toBe(VECTOR.testnet.signatureHex);
  });
});
