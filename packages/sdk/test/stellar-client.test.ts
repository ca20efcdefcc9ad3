// The buyer's Soroban client against recorded JSON-RPC exchanges (packages/ledger/test/fixtures/
// soroban/sdk-*.json, one recorded world with the ledger adapter's tests): open, top up and close
// build the contract invocations of packages/ledger/docs/channel-contract.md, signed by the buyer's key.
import { afterEach, describe, expect, it } from 'vitest';
import { LedgerError } from '@svc/core';
import { StellarChannelClient } from '../src/index.js';
import {
  ASSET_CONTRACT,
  BUYER_VOUCHER_KEY,
  CHANNEL_CONTRACT,
  CLOCK_MS,
  FACILITATOR,
  OPENED,
  PASSPHRASE,
  PAYEE,
  PAYER,
  PUBNET_PASSPHRASE,
  RPC_URL,
  VOUCHER_KEY,
} from '../../ledger/test/fixtures/soroban/scenario.js';
import {
  closeCall,
  DEPOSIT_HASH,
  FOREIGN_CHANNEL_ID,
  openCall,
  topUpCall,
} from '../../ledger/test/fixtures/soroban/world.js';
import { StellarLedger } from '@svc/ledger';
import { describeTx, SorobanReplay } from '../../ledger/test/helpers/soroban-replay.js';

let replays: SorobanReplay[] = [];
afterEach(() => {
  const done = replays;
  replays = [];
  for (const r of done) r.assertDone();
});

function clientFor(name: string): { client: StellarChannelClient; replay: SorobanReplay } {
  const replay = SorobanReplay.load(name);
  replays.push(replay);
  const client = new StellarChannelClient({
    rpcUrl: RPC_URL,
    channelContract: CHANNEL_CONTRACT,
    fetch: replay.fetch,
    now: () => CLOCK_MS,
    pollIntervalMs: 0,
    maxPolls: 2,
  });
  return { client, replay };
}

/** The transaction sent by sendTransaction (the one exchange that carries a signed envelope). */
function sent(replay: SorobanReplay) {
  const index = replay.fixture.exchanges.findIndex((e) => e.request.method === 'sendTransaction');
  return describeTx((replay.sent.get(index) as { transaction: string }).transaction, PASSPHRASE);
}

describe('StellarChannelClient', () => {
  it('signs an opening for a batch-settlement deposit payload: simulated and signed by the payer, not sent; the facilitator’s adapter reads it', async () => {
    const { client } = clientFor('sdk-sign-open');
    const signed = await client.signOpenChannel({
      payer: PAYER,
      payee: PAYEE.address,
      deposit: OPENED.deposit,
      voucherKey: BUYER_VOUCHER_KEY,
      receiverAuthorizer: FACILITATOR.address,
    });
    expect(signed).toMatchObject({
      channelId: OPENED.channelId,
      hash: openCall.hash,
      expiryLedger: OPENED.expiryLedger,
    });
    // The very transaction the recorded opening sends: payer's source, its auth, its signature.
    expect(signed.transaction).toBe(openCall.signed.toEnvelope().toXDR('base64'));
    const tx = describeTx(signed.transaction, PASSPHRASE);
    expect(tx).toMatchObject({
      source: PAYER.address,
      auth: ['sorobanCredentialsSourceAccount:open'],
      sorobanData: true,
    });
    expect(tx.verifies(PAYER.address)).toBe(true);
    // What the facilitator's adapter makes of it: the payer's opening, fee-bumped by the facilitator.
    const replay = SorobanReplay.load('deposit-read');
    replays.push(replay);
    const ledger = await StellarLedger.create({
      rpcUrl: RPC_URL,
      channelContract: CHANNEL_CONTRACT,
      assetContract: ASSET_CONTRACT,
      fetch: replay.fetch,
    });
    expect(ledger.readDeposit(signed.transaction, FACILITATOR.address)).toMatchObject({
      ok: true,
      source: PAYER.address,
      op: 'channel.open',
      hash: DEPOSIT_HASH,
    });
  });

  it('signs a top-up for a deposit payload, not sent', async () => {
    const { client } = clientFor('sdk-sign-top-up');
    const signed = await client.signTopUp({ payer: PAYER, channelId: OPENED.channelId, amount: OPENED.topUp });
    expect(signed).toEqual({ transaction: topUpCall.signed.toEnvelope().toXDR('base64'), hash: topUpCall.hash });
  });

  it('opens a channel: open(payer, payee, deposit, voucher key, expiry, receiver authorizer) signed by the payer, expiry defaulting to a day of ledgers', async () => {
    const { client, replay } = clientFor('sdk-open');
    // The id is the voucher key's, known before anything is sent.
    expect(client.channelIdOf(BUYER_VOUCHER_KEY)).toBe(OPENED.channelId);
    expect(client.channelIdOf(BUYER_VOUCHER_KEY.publicKeyHex)).toBe(OPENED.channelId);
    const opened = await client.openChannel({
      payer: PAYER,
      payee: PAYEE.address,
      deposit: OPENED.deposit,
      voucherKey: BUYER_VOUCHER_KEY,
      receiverAuthorizer: FACILITATOR.address,
    });
    expect(opened).toEqual({ channelId: OPENED.channelId, tx: openCall.hash, expiryLedger: OPENED.expiryLedger });
    const tx = sent(replay);
    expect(tx.invoke).toEqual({
      contract: CHANNEL_CONTRACT,
      function: 'open',
      args: [
        { address: PAYER.address },
        { address: PAYEE.address },
        { i128: '1000000' },
        { bytes: BUYER_VOUCHER_KEY.publicKeyHex },
        { u32: OPENED.expiryLedger },
        { address: FACILITATOR.address },
      ],
    });
    expect(tx.source).toBe(PAYER.address);
    expect(tx.verifies(PAYER.address)).toBe(true);
    // The payer's authorisation (of open and of the asset transfer under it) is the transaction's own signature.
    expect(tx.auth).toEqual(['sorobanCredentialsSourceAccount:open']);
  });

  it('tops a channel up: top_up(payer, id, amount, None) and reads the new deposit from the returned record', async () => {
    const { client, replay } = clientFor('sdk-top-up');
    const res = await client.topUp({ payer: PAYER, channelId: OPENED.channelId, amount: OPENED.topUp });
    expect(res).toEqual({
      deposit: OPENED.deposit + OPENED.topUp,
      expiryLedger: OPENED.expiryLedger,
      tx: topUpCall.hash,
    });
    expect(sent(replay).invoke?.args).toEqual([
      { address: PAYER.address },
      { u64: OPENED.channelId.toString() },
      { i128: '500' },
      { void: null },
    ]);
  });

  it('closes a channel as the payee: close(caller, id) and the refund', async () => {
    const { client, replay } = clientFor('sdk-close');
    expect(await client.closeChannel({ signer: PAYEE, channelId: OPENED.channelId })).toEqual({
      refunded: OPENED.deposit + OPENED.topUp,
      tx: closeCall.hash,
    });
    const tx = sent(replay);
    expect(tx.invoke?.args).toEqual([{ address: PAYEE.address }, { u64: OPENED.channelId.toString() }]);
    expect(tx.verifies(PAYEE.address)).toBe(true);
  });

  it('a refusal in simulation is a LedgerError with the §7 code, and nothing is sent', async () => {
    const { client } = clientFor('sdk-close-refused');
    const attempt = client.closeChannel({ signer: PAYER, channelId: OPENED.channelId });
    await expect(attempt).rejects.toBeInstanceOf(LedgerError);
    await expect(attempt).rejects.toMatchObject({
      code: 25,
      message: expect.stringMatching(/^NOT_EXPIRED: .*nothing was sent/) as unknown,
    });
  });

  it('refuses an opening whose returned id is not the one the voucher key derives (another contract), and a receiver authorizer that is not an account', async () => {
    const { client } = clientFor('sdk-open-foreign-id');
    const attempt = client.openChannel({
      payer: PAYER,
      payee: PAYEE.address,
      deposit: OPENED.deposit,
      voucherKey: BUYER_VOUCHER_KEY,
      receiverAuthorizer: FACILITATOR.address,
    });
    await expect(attempt).rejects.toBeInstanceOf(LedgerError);
    await expect(attempt).rejects.toMatchObject({
      tx: openCall.hash,
      message: expect.stringMatching(
        new RegExp(`opened channel ${FOREIGN_CHANNEL_ID}, not ${OPENED.channelId}, the id its voucher key derives`),
      ) as unknown,
    });
    // Checked before anything is asked of the RPC (this replay has nothing left to answer).
    await expect(
      client.openChannel({
        payer: PAYER,
        payee: PAYEE.address,
        deposit: 1n,
        voucherKey: VOUCHER_KEY,
        receiverAuthorizer: CHANNEL_CONTRACT,
      }),
    ).rejects.toThrow(/receiverAuthorizer must be a G… account/);
  });

  it('refuses the public network and a channel contract that is not a contract address', () => {
    expect(
      () =>
        new StellarChannelClient({
          rpcUrl: RPC_URL,
          channelContract: CHANNEL_CONTRACT,
          networkPassphrase: PUBNET_PASSPHRASE,
        }),
    ).toThrow(/test networks only/);
    expect(() => new StellarChannelClient({ rpcUrl: RPC_URL, channelContract: PAYER.address })).toThrow(
      /channelContract/,
    );
  });
});
