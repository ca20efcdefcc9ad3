// StellarLedger against recorded Soroban JSON-RPC exchanges (fixtures/soroban): the network it
// accepts, reads from contract storage, the refusal of local-ledger transactions, and the shared
// read contract.
import { afterAll, describe, expect, it } from 'vitest';
import { LedgerTxRefused, LedgerUnavailable } from '../src/index.js';
import { runLedgerReadContract } from './ledger-read-contract.js';
import { READ_START_LEDGER, UNKNOWN_TX } from './fixtures/soroban/generate.js';
import {
  ASSET_CONTRACT,
  BUYER_VOUCHER_KEY,
  CHANNEL_CONTRACT,
  CLAIM,
  FACILITATOR,
  LATEST_LEDGER,
  OPENED,
  PASSPHRASE,
  PAYEE,
  PAYER,
  PAYER_BALANCE,
  PUBNET_PASSPHRASE,
  RPC_URL,
  VOUCHER_KEY,
} from './fixtures/soroban/scenario.js';
import { openCall } from './fixtures/soroban/world.js';
import { SorobanReplay } from './helpers/soroban-replay.js';
import { stellarLedger, useReplays } from './helpers/stellar.js';

const replay = useReplays();

describe('StellarLedger: network', () => {
  it('reports stellar:testnet, its contracts and the asset; latestLedger is the RPC’s', async () => {
    const ledger = await stellarLedger(replay('info-testnet'));
    expect(await ledger.info()).toEqual({
      network: 'stellar:testnet',
      passphrase: PASSPHRASE,
      latestLedger: LATEST_LEDGER,
      ledgerSeconds: 5,
      contracts: { channel: CHANNEL_CONTRACT, asset: ASSET_CONTRACT },
      asset: { code: 'USDC', decimals: 7 },
    });
    expect(await ledger.latestLedger()).toBe(LATEST_LEDGER);
  });

  it('refuses the public network, whether configured or served by the RPC', async () => {
    const silent = new SorobanReplay({
      description: 'no request may be made',
      mode: 'sequence',
      rpcUrl: RPC_URL,
      passphrase: PASSPHRASE,
      exchanges: [],
    });
    await expect(stellarLedger(silent, { networkPassphrase: PUBNET_PASSPHRASE })).rejects.toThrow(/test networks only/);
    expect(silent.used).toBe(0);
    await expect(stellarLedger(replay('create-pubnet'))).rejects.toThrow(/test networks only/);
  });

  it('refuses the local network and addresses that are not contracts before asking the RPC', async () => {
    const silent = new SorobanReplay({
      description: 'no request may be made',
      mode: 'sequence',
      rpcUrl: RPC_URL,
      passphrase: PASSPHRASE,
      exchanges: [],
    });
    await expect(stellarLedger(silent, { networkPassphrase: 'Standalone Network ; February 2017' })).rejects.toThrow(
      /stellar:testnet only/,
    );
    await expect(stellarLedger(silent, { channelContract: PAYER.address })).rejects.toThrow(/channelContract/);
    await expect(stellarLedger(silent, { assetContract: 'C123' })).rejects.toThrow(/assetContract/);
    silent.assertDone();
  });

  it('an RPC that cannot be reached is LedgerUnavailable', async () => {
    const down = new SorobanReplay({
      description: 'connection refused',
      mode: 'sequence',
      rpcUrl: RPC_URL,
      passphrase: PASSPHRASE,
      exchanges: [{ request: { method: 'getNetwork' }, response: { transportError: 'refused' } }],
    });
    await expect(stellarLedger(down)).rejects.toBeInstanceOf(LedgerUnavailable);
    down.assertDone();
  });
});

describe('StellarLedger: reads', () => {
  it('getChannel decodes the persistent DataKey::Channel(id) entry; a missing entry is null', async () => {
    const ledger = await stellarLedger(replay('get-channel'));
    expect(await ledger.getChannel(CLAIM.channelId)).toEqual({
      id: CLAIM.channelId,
      payer: PAYER.address,
      payee: PAYEE.address,
      asset: ASSET_CONTRACT,
      deposit: CLAIM.deposit,
      claimed: CLAIM.claimedBefore,
      voucherKey: VOUCHER_KEY.publicKeyHex,
      receiverAuthorizer: FACILITATOR.address,
      expiryLedger: CLAIM.expiryLedger,
      refundNonce: 0n,
      open: true,
    });
    expect(await ledger.getChannel(CLAIM.channelId + 1n)).toBeNull();
  });

  it('refuses a local-ledger transaction with LedgerTxRefused and asks the RPC nothing', async () => {
    const ledger = await stellarLedger(replay('info-testnet'));
    const tx = { source: PAYER.address, seq: 1, op: 'transfer', args: {}, signature: 'ab'.repeat(64) };
    await expect(ledger.submit(tx)).rejects.toBeInstanceOf(LedgerTxRefused);
    await expect(ledger.submit(tx)).rejects.toThrow(/built and signed by the adapter/);
    await ledger.info();
    await ledger.latestLedger();
  });

  it('is unavailable once closed', async () => {
    const onlyCreate = SorobanReplay.load('info-testnet');
    const ledger = await stellarLedger(
      new SorobanReplay({ ...onlyCreate.fixture, exchanges: onlyCreate.fixture.exchanges.slice(0, 1) }),
    );
    await ledger.close();
    await expect(ledger.latestLedger()).rejects.toBeInstanceOf(LedgerUnavailable);
    await expect(ledger.getChannel(1n)).rejects.toBeInstanceOf(LedgerUnavailable);
  });
});

const readReplay = SorobanReplay.load('read-contract');
afterAll(() => readReplay.assertDone());

runLedgerReadContract({
  name: 'StellarLedger (recorded Soroban RPC)',
  async create() {
    const ledger = await stellarLedger(readReplay, { startLedger: READ_START_LEDGER });
    const channel = {
      id: OPENED.channelId,
      payer: PAYER.address,
      payee: PAYEE.address,
      asset: ASSET_CONTRACT,
      deposit: OPENED.deposit + OPENED.topUp,
      claimed: 0n,
      voucherKey: BUYER_VOUCHER_KEY.publicKeyHex,
      receiverAuthorizer: FACILITATOR.address,
      expiryLedger: OPENED.expiryLedger,
      refundNonce: 0n,
      open: true,
    };
    const seed = {
      channel,
      openDeposit: OPENED.deposit,
      topUp: OPENED.topUp,
      openTx: openCall.hash,
      missingChannelId: OPENED.channelId + 1n,
      payerBalance: PAYER_BALANCE,
      unknownTx: UNKNOWN_TX,
    };
    return { ledger, seed, close: () => ledger.close() };
  },
});
