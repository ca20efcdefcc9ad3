// A buyer's client of the Soroban channel contract on stellar:testnet (packages/ledger/docs/
// channel-contract.md): open, top up and close a channel through the contract. Each call is one
// transaction of the buyer's key — built, simulated (which also records the authorisations the
// contract asks for, here the source account's own), prepared, signed, sent and polled.
//
//   const client = new StellarChannelClient({ rpcUrl: 'https://soroban-testnet.stellar.org', channelContract: 'C…' });
//   const { channelId } = await client.openChannel({ payer, payee: 'G…', deposit: 10_000_000n, voucherKey });
//
// The contract's refusals are LedgerError with the docs/protocol.md#channels-and-records code (nothing is sent when the
// simulation refuses). A transaction not yet in a ledger after polling is a LedgerError with its
// hash: look it up (transaction(hash)) before sending anything else for the same purpose.
import {
  Account,
  Address,
  Keypair as StellarKeypair,
  nativeToScVal,
  Operation,
  rpc,
  scValToNative,
  TransactionBuilder,
  xdr,
} from '@stellar/stellar-sdk';
import type { Transaction } from '@stellar/stellar-sdk';
import {
  channelIdOf,
  fromHex,
  isAccountAddress,
  isContractAddress,
  LEDGER_CODES,
  LedgerError,
  networkOfPassphrase,
  NETWORKS,
  SorobanRpc,
  SorobanRpcError,
} from '@svc/core';
import type { Keypair, LedgerCode, RpcTransaction } from '@svc/core';
import { DEFAULT_CHANNEL_LEDGERS } from './ledger-client.js';
import { accountSequence, refusalCode, returnValueOf } from './soroban-xdr.js';

const TESTNET = 'stellar:testnet';
const INCLUSION_FEE = '100';

export interface StellarChannelClientOptions {
  /** Soroban RPC endpoint, e.g. https://soroban-testnet.stellar.org. */
  rpcUrl: string;
  /** The channel contract (C…). */
  channelContract: string;
  /** Defaults to testnet's; any other network is refused. */
  networkPassphrase?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Wall clock in ms, for transaction time bounds. */
  now?: () => number;
  txTimeoutSeconds?: number;
  pollIntervalMs?: number;
  maxPolls?: number;
}

export interface Submitted {
  tx: string;
  returnValue: xdr.ScVal | undefined;
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve());
const u64 = (v: bigint) => nativeToScVal(v, { type: 'u64' });
const i128 = (v: bigint) => nativeToScVal(v, { type: 'i128' });
const address = (a: string) => new Address(a).toScVal();

/** What an opening takes (openChannel, signOpenChannel). */
export interface OpenChannel {
  payer: Keypair;
  payee: string;
  deposit: bigint;
  voucherKey: Keypair | string;
  expiryLedger?: number;
  /** A G… account that may claim below a voucher's amount and refund (the facilitator's). */
  receiverAuthorizer?: string;
}

export class StellarChannelClient {
  readonly passphrase: string;
  readonly channelContract: string;
  readonly #rpc: SorobanRpc;
  readonly #now: () => number;
  readonly #txTimeout: number;
  readonly #pollMs: number;
  readonly #maxPolls: number;

  constructor(options: StellarChannelClientOptions) {
    this.passphrase = options.networkPassphrase ?? NETWORKS[TESTNET].passphrase;
    // docs/protocol.md#networks-and-ledgers: test networks only; the public network's passphrase throws here.
    if (networkOfPassphrase(this.passphrase) !== TESTNET)
      throw new Error(`StellarChannelClient runs on ${TESTNET} only`);
    if (!isContractAddress(options.channelContract)) throw new Error('channelContract must be a contract address (C…)');
    this.channelContract = options.channelContract;
    this.#rpc = new SorobanRpc({
      url: options.rpcUrl,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
    this.#now = options.now ?? Date.now;
    this.#txTimeout = options.txTimeoutSeconds ?? 30;
    this.#pollMs = options.pollIntervalMs ?? 1000;
    this.#maxPolls = options.maxPolls ?? 30;
  }

  async latestLedger(): Promise<number> {
    return (await this.#rpc.getLatestLedger()).sequence;
  }

  /** The id the contract gives a channel opened with `voucherKey` (hex or its Keypair): known before the opening is sent. */
  channelIdOf(voucherKey: Keypair | string): bigint {
    const key = typeof voucherKey === 'string' ? fromHex(voucherKey, 32) : voucherKey.publicKey;
    return channelIdOf(this.passphrase, this.channelContract, key);
  }

  /**
   * `open(payer, payee, deposit, voucher_key, expiry_ledger, receiver_authorizer: Option<Address>) -> u64`;
   * the deposit moves from the payer to the contract, under the id the voucher key derives.
   */
  async openChannel(o: OpenChannel): Promise<{ channelId: bigint; tx: string; expiryLedger: number }> {
    const { channelId, args, expiryLedger } = await this.#openArgs(o);
    const done = await this.#invoke(o.payer, 'open', args);
    const opened = this.#decode(done, 'open', (v): v is bigint => typeof v === 'bigint');
    if (opened !== channelId)
      throw new LedgerError(
        `the channel contract opened channel ${opened}, not ${channelId}, the id its voucher key derives: it is not the contract this client knows (tx ${done.tx})`,
        502,
        undefined,
        done.tx,
      );
    return { channelId, tx: done.tx, expiryLedger };
  }

  /**
   * The same opening, built, simulated and signed by the payer but not sent: a batch-settlement
   * deposit payload's `transaction` (the base64 envelope), which a facilitator that sponsors
   * deposits submits inside a fee-bump of its own — the payer needs no XLM for fees, only an
   * account and the deposit. `hash` is the payer's transaction's (the fee-bump has its own).
   */
  async signOpenChannel(
    o: OpenChannel,
  ): Promise<{ channelId: bigint; transaction: string; hash: string; expiryLedger: number }> {
    const { channelId, args, expiryLedger } = await this.#openArgs(o);
    const { tx, hash } = await this.#prepared(o.payer, 'open', args);
    return { channelId, transaction: tx.toEnvelope().toXDR('base64'), hash, expiryLedger };
  }

  async #openArgs(o: OpenChannel): Promise<{ channelId: bigint; args: xdr.ScVal[]; expiryLedger: number }> {
    if (o.receiverAuthorizer !== undefined && !isAccountAddress(o.receiverAuthorizer))
      throw new Error('receiverAuthorizer must be a G… account address');
    const expiryLedger = o.expiryLedger ?? (await this.latestLedger()) + DEFAULT_CHANNEL_LEDGERS;
    const key = typeof o.voucherKey === 'string' ? o.voucherKey : o.voucherKey.publicKeyHex;
    const args = [
      address(o.payer.address),
      address(o.payee),
      i128(o.deposit),
      xdr.ScVal.scvBytes(Buffer.from(fromHex(key, 32))),
      xdr.ScVal.scvU32(expiryLedger),
      o.receiverAuthorizer === undefined ? xdr.ScVal.scvVoid() : address(o.receiverAuthorizer),
    ];
    return { channelId: this.channelIdOf(key), args, expiryLedger };
  }

  /** `top_up(payer, channel_id, amount, expiry_ledger: Option<u32>) -> Channel`. */
  async topUp(o: {
    payer: Keypair;
    channelId: bigint;
    amount: bigint;
    expiryLedger?: number;
  }): Promise<{ deposit: bigint; expiryLedger: number; tx: string }> {
    const expiry = o.expiryLedger === undefined ? xdr.ScVal.scvVoid() : xdr.ScVal.scvU32(o.expiryLedger);
    const done = await this.#invoke(o.payer, 'top_up', [
      address(o.payer.address),
      u64(o.channelId),
      i128(o.amount),
      expiry,
    ]);
    const channel = this.#decode(
      done,
      'top_up',
      (v): v is { deposit: bigint; expiry_ledger: number } =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as { deposit?: unknown }).deposit === 'bigint' &&
        typeof (v as { expiry_ledger?: unknown }).expiry_ledger === 'number',
    );
    return { deposit: channel.deposit, expiryLedger: channel.expiry_ledger, tx: done.tx };
  }

  /** A top-up signed by the payer and not sent: a batch-settlement deposit payload's `transaction` (see signOpenChannel). */
  async signTopUp(o: {
    payer: Keypair;
    channelId: bigint;
    amount: bigint;
    expiryLedger?: number;
  }): Promise<{ transaction: string; hash: string }> {
    const expiry = o.expiryLedger === undefined ? xdr.ScVal.scvVoid() : xdr.ScVal.scvU32(o.expiryLedger);
    const args = [address(o.payer.address), u64(o.channelId), i128(o.amount), expiry];
    const { tx, hash } = await this.#prepared(o.payer, 'top_up', args);
    return { transaction: tx.toEnvelope().toXDR('base64'), hash };
  }

  /** `close(caller, channel_id) -> i128`: the payee at any time, the payer from expiry + 120 ledgers; refunds the payer. */
  async closeChannel(o: { signer: Keypair; channelId: bigint }): Promise<{ refunded: bigint; tx: string }> {
    const done = await this.#invoke(o.signer, 'close', [address(o.signer.address), u64(o.channelId)]);
    return { refunded: this.#decode(done, 'close', (v): v is bigint => typeof v === 'bigint'), tx: done.tx };
  }

  /** A sent transaction's outcome: null while it is not in a ledger. */
  async transaction(hash: string): Promise<RpcTransaction | null> {
    const reply = await this.#rpc.getTransaction(hash);
    return reply.status === 'NOT_FOUND' ? null : reply;
  }

  async #invoke(signer: Keypair, fn: string, args: xdr.ScVal[]): Promise<Submitted> {
    try {
      return await this.#submit(signer, fn, args);
    } catch (err) {
      if (err instanceof SorobanRpcError) throw new LedgerError(err.message, 503);
      throw err;
    }
  }

  async #submit(signer: Keypair, fn: string, args: xdr.ScVal[]): Promise<Submitted> {
    const { tx, hash, maxTime } = await this.#prepared(signer, fn, args);
    const sent = await this.#rpc.sendTransaction(tx).catch((err: unknown) => {
      // No answer: it may have reached the network; polling tells.
      if (err instanceof SorobanRpcError) return null;
      throw err;
    });
    if (sent?.status === 'ERROR' || sent?.status === 'TRY_AGAIN_LATER')
      throw new LedgerError(
        `the network did not take transaction ${hash} (${sent.status}); nothing was applied`,
        503,
        undefined,
        hash,
      );
    return this.#poll(fn, hash, maxTime);
  }

  /** The invocation as a transaction of `signer`: built, simulated, assembled and signed (not sent). */
  async #prepared(
    signer: Keypair,
    fn: string,
    args: xdr.ScVal[],
  ): Promise<{ tx: Transaction; hash: string; maxTime: number }> {
    const seq = await accountSequence(this.#rpc, signer.address);
    if (seq === null)
      throw new LedgerError(
        `the account ${signer.address} does not exist on ${TESTNET}: fund it first (friendbot)`,
        404,
      );
    const maxTime = Math.floor(this.#now() / 1000) + this.#txTimeout;
    const unsigned = new TransactionBuilder(new Account(signer.address, seq), {
      fee: INCLUSION_FEE,
      networkPassphrase: this.passphrase,
      timebounds: { minTime: 0, maxTime },
    })
      .addOperation(Operation.invokeContractFunction({ contract: this.channelContract, function: fn, args }))
      .build();
    const simulation = await this.#rpc.simulateTransaction(unsigned);
    if (simulation.error !== undefined)
      throw refused(fn, refusalCode(simulation.error), 'in simulation; nothing was sent', undefined);
    const tx = rpc
      .assembleTransaction(unsigned, simulation as unknown as rpc.Api.RawSimulateTransactionResponse)
      .build();
    tx.sign(StellarKeypair.fromSecret(signer.secret()));
    return { tx, hash: tx.hash().toString('hex'), maxTime };
  }

  async #poll(fn: string, hash: string, maxTime: number): Promise<Submitted> {
    for (let attempt = 0; attempt < this.#maxPolls; attempt++) {
      await sleep(this.#pollMs);
      const reply = await this.#rpc.getTransaction(hash).catch(() => null);
      if (!reply || reply.status === 'NOT_FOUND') {
        if (reply && reply.latestLedgerCloseTime > maxTime)
          throw new LedgerError(
            `transaction ${hash} expired without being included; nothing was applied`,
            504,
            undefined,
            hash,
          );
        continue;
      }
      if (reply.status === 'FAILED')
        throw refused(fn, refusalCode(undefined, reply.diagnosticEventsXdr), 'on chain', hash);
      return { tx: hash, returnValue: returnValueOf(reply.resultMetaXdr) };
    }
    throw new LedgerError(
      `transaction ${hash} is not in a ledger yet: look it up with transaction(hash) before sending it again`,
      504,
      undefined,
      hash,
    );
  }

  #decode<T>(done: Submitted, fn: string, check: (v: unknown) => v is T): T {
    const value: unknown = done.returnValue ? scValToNative(done.returnValue) : undefined;
    if (!check(value))
      throw new LedgerError(
        `the channel contract's ${fn} returned an unexpected value (tx ${done.tx})`,
        502,
        undefined,
        done.tx,
      );
    return value;
  }
}

function refused(fn: string, code: number | undefined, where: string, tx: string | undefined): LedgerError {
  const name = code === undefined ? 'UNKNOWN' : LEDGER_CODES[code as LedgerCode];
  return new LedgerError(`${name}: the channel contract refused ${fn} ${where}`, 200, code, tx);
}
