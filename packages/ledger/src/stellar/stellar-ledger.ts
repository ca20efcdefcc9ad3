// StellarLedger: the Ledger port over Soroban JSON-RPC, on stellar:testnet (docs/protocol.md#networks-and-ledgers; the
// public network is refused). The channel contract it speaks to is described in
// docs/channel-contract.md.
//
//   const ledger = await StellarLedger.create({ rpcUrl: 'https://soroban-testnet.stellar.org', channelContract: 'C…', assetContract: 'C…' });
//   const res = await ledger.claim({ channelId: 42n, cumulative: 135000n, signature }, facilitatorKeys);
//
// Port method → RPC calls:
//   create             getNetwork (the RPC must serve the configured network)
//   info, latestLedger getLatestLedger
//   getChannel         getLedgerEntries: the channel's persistent storage entry
//   getAccount         getLedgerEntries (the account) + simulateTransaction (asset `balance`)
//   getTx              getTransaction
//   claim, claimMany,  getLedgerEntries (sequence) → simulateTransaction → sendTransaction → getTransaction…
//   refund
//   events             getHealth (a fresh start only) → getEvents…
//   submit             nothing: refused, Stellar transactions are built here (or by the buyer SDK)
//   readDeposit        nothing: the payer's envelope is read and checked here (deposit-envelope.ts)
//   submitDeposit      simulateTransaction (the payer's own) → sendTransaction (the fee-bump) → getTransaction…
import { Account, Address, Keypair as StellarKeypair, scValToNative, xdr } from '@stellar/stellar-sdk';
import {
  describeNonAddress,
  isAccountAddress,
  isAddress,
  isContractAddress,
  NETWORKS,
  networkOfPassphrase,
  SorobanRpc,
  SvcError,
  U64_MAX,
} from '@svc/core';
import type { Keypair, NetworkName, SignedLedgerTx } from '@svc/core';
import { LedgerTxRefused, LedgerUnavailable } from '../port.js';
import type {
  ClaimArgs,
  ClaimRow,
  DepositRead,
  EventsPage,
  Ledger,
  LedgerAccount,
  LedgerChannel,
  LedgerInfo,
  RefundArgs,
  TxResult,
} from '../port.js';
import {
  hostErrorFromText,
  hostErrorsFromEvents,
  ledgerCodeOf,
  pickHostError,
  refusalMessage,
} from './contract-errors.js';
import {
  channelStorageKey,
  claimArgsVal,
  claimManyArgsVal,
  decodeChannel,
  opName,
  refundArgsVal,
} from './contract-interface.js';
import type { ChannelFunction } from './contract-interface.js';
import { readDepositEnvelope, signBump } from './deposit-envelope.js';
import { EventReader } from './event-reader.js';
import { isoFromUnix, txResultOf } from './tx-result.js';
import { TxSubmitter } from './tx-submitter.js';
import type { SubmitOutcome } from './tx-submitter.js';

export const STELLAR_NETWORK: NetworkName = 'stellar:testnet';
export const STELLAR_LEDGER_SECONDS = 5;
export const DEFAULT_TX_TIMEOUT_SECONDS = 30;
export const DEFAULT_POLL_INTERVAL_MS = 1000;
export const DEFAULT_MAX_POLLS = 30;
/** The inclusion fee offered per transaction, in stroops (the network minimum). */
export const DEFAULT_INCLUSION_FEE = '100';
/** Read-only simulations need a source account, not an existing one (the SDK's convention). */
const SIMULATION_SOURCE = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';

export interface StellarLedgerOptions {
  /** Soroban RPC endpoint, e.g. https://soroban-testnet.stellar.org. */
  rpcUrl: string;
  /** Defaults to testnet's; any other network is refused. */
  networkPassphrase?: string;
  /** The channel contract (C…), docs/channel-contract.md. */
  channelContract: string;
  /** The asset the channels hold: a SEP-41 token, typically a Stellar Asset Contract (C…). */
  assetContract: string;
  /** The asset's code as shown in info() (default USDC); it has 7 decimals (docs/protocol.md). */
  assetCode?: string;
  /** Where events(null, …) starts (the contract's deployment ledger); default the RPC's oldest. */
  startLedger?: number;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Wall clock in ms, for transaction time bounds (tests pass a fixed one). */
  now?: () => number;
  txTimeoutSeconds?: number;
  pollIntervalMs?: number;
  maxPolls?: number;
}

function testnetOnly(passphrase: string): void {
  // networkOfPassphrase refuses the public network with its own message (docs/protocol.md#networks-and-ledgers).
  const network = networkOfPassphrase(passphrase);
  if (network !== STELLAR_NETWORK)
    throw new Error(`StellarLedger runs on ${STELLAR_NETWORK} only; ${network} is the embedded local ledger`);
}

export class StellarLedger implements Ledger {
  readonly network = STELLAR_NETWORK;
  readonly passphrase: string;
  readonly contracts: { channel: string; asset: string };
  readonly #rpc: SorobanRpc;
  readonly #submitter: TxSubmitter;
  readonly #events: EventReader;
  readonly #assetCode: string;
  readonly #now: () => number;
  #closed = false;

  private constructor(rpc: SorobanRpc, passphrase: string, options: StellarLedgerOptions) {
    this.#rpc = rpc;
    this.passphrase = passphrase;
    this.contracts = { channel: options.channelContract, asset: options.assetContract };
    this.#assetCode = options.assetCode ?? 'USDC';
    this.#now = options.now ?? Date.now;
    this.#submitter = new TxSubmitter(rpc, {
      passphrase,
      now: this.#now,
      txTimeoutSeconds: options.txTimeoutSeconds ?? DEFAULT_TX_TIMEOUT_SECONDS,
      inclusionFee: DEFAULT_INCLUSION_FEE,
      pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      maxPolls: options.maxPolls ?? DEFAULT_MAX_POLLS,
    });
    this.#events = new EventReader(rpc, {
      channelContract: options.channelContract,
      asset: options.assetContract,
      ...(options.startLedger !== undefined ? { startLedger: options.startLedger } : {}),
    });
  }

  /** Checks the configuration and that the RPC serves the same network, then returns the adapter. */
  static async create(options: StellarLedgerOptions): Promise<StellarLedger> {
    const passphrase = options.networkPassphrase ?? NETWORKS[STELLAR_NETWORK].passphrase;
    testnetOnly(passphrase);
    for (const [name, value] of [
      ['channelContract', options.channelContract],
      ['assetContract', options.assetContract],
    ] as const) {
      if (!isContractAddress(value))
        throw new Error(`${name} must be a contract address (C…); it is ${describeNonAddress(value)}`);
    }
    const rpc = new SorobanRpc({
      url: options.rpcUrl,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
    const served = (await rpc.getNetwork()).passphrase;
    if (served !== passphrase) {
      testnetOnly(served);
      throw new Error(`the Soroban RPC at ${options.rpcUrl} serves "${served}", not "${passphrase}"`);
    }
    return new StellarLedger(rpc, passphrase, options);
  }

  async info(): Promise<LedgerInfo> {
    return {
      network: this.network,
      passphrase: this.passphrase,
      latestLedger: await this.latestLedger(),
      ledgerSeconds: STELLAR_LEDGER_SECONDS,
      contracts: { ...this.contracts },
      asset: { code: this.#assetCode, decimals: 7 },
    };
  }

  async latestLedger(): Promise<number> {
    this.#assertOpen();
    return (await this.#rpc.getLatestLedger()).sequence;
  }

  async getChannel(id: bigint): Promise<LedgerChannel | null> {
    this.#assertOpen();
    if (id < 1n || id > U64_MAX) return null;
    const { entries } = await this.#rpc.getLedgerEntries([channelStorageKey(this.contracts.channel, id)]);
    const entry = entries[0];
    if (!entry) return null;
    return decodeChannel(
      id,
      xdr.LedgerEntryData.fromXDR(entry.xdr, 'base64').contractData().val(),
      this.contracts.asset,
    );
  }

  async getAccount(address: string): Promise<LedgerAccount> {
    this.#assertOpen();
    if (!isAddress(address))
      throw new SvcError('BAD_REQUEST', 'address must be a G… or C… address', { source: 'ledger' });
    const seq = isAccountAddress(address) ? await this.#sequence(address) : 0;
    const amount = await this.#balance(address);
    return { address, seq, balances: amount > 0n ? [{ asset: this.contracts.asset, amount }] : [] };
  }

  async getTx(hash: string): Promise<TxResult | null> {
    this.#assertOpen();
    if (!/^[0-9a-fA-F]{64}$/.test(hash)) return null;
    const reply = await this.#rpc.getTransaction(hash.toLowerCase());
    if (reply.status === 'NOT_FOUND') return null;
    return txResultOf({ ...reply, status: reply.status }, hash.toLowerCase(), this.#context());
  }

  submit(_tx: SignedLedgerTx): Promise<TxResult> {
    return Promise.reject(
      new LedgerTxRefused(
        'StellarLedger does not take local-ledger transactions (docs/protocol.md#the-local-ledger): on Stellar, transactions are built and signed by the adapter itself (claim) and by the buyer SDK (StellarChannelClient)',
      ),
    );
  }

  /** A payer's signed opening or top-up (base64 envelope), checked strictly; its hash is that of `sponsor`'s fee-bump of it. */
  readDeposit(transaction: unknown, sponsor: string): DepositRead {
    const read = readDepositEnvelope(transaction, { ...this.#context(), sponsor });
    return 'read' in read ? read.read : read;
  }

  /**
   * Submits the payer's deposit transaction inside a fee-bump of which `sponsor` is the fee source
   * (CAP-15): the payer needs no XLM. Simulated first: a deposit that would fail costs no fee.
   */
  async submitDeposit(transaction: string, sponsor: Keypair): Promise<TxResult> {
    this.#assertOpen();
    const envelope = readDepositEnvelope(transaction, { ...this.#context(), sponsor: sponsor.address });
    if (!('read' in envelope)) throw new LedgerTxRefused(envelope.message);
    const fn: ChannelFunction = envelope.read.op === 'channel.open' ? 'open' : 'top_up';
    const source = envelope.read.source;
    const simulation = await this.#rpc.simulateTransaction(envelope.inner);
    if (simulation.error !== undefined) {
      const events = (simulation.events ?? []).map((e) => xdr.DiagnosticEvent.fromXDR(e, 'base64'));
      const refused: SubmitOutcome = {
        kind: 'refused',
        unsigned: envelope.inner,
        error: simulation.error,
        events,
        latestLedger: simulation.latestLedger,
      };
      return this.#result(refused, source, fn);
    }
    const outcome = await this.#submitter.sendSponsored(signBump(envelope.bump, sponsor), envelope.inner);
    return this.#result(outcome, source, fn);
  }

  /** Claims as `signer` (source and fee payer), one transaction at a time per signer. */
  claim(args: ClaimArgs, signer: Keypair): Promise<TxResult> {
    const tag = `claim:${args.channelId}:${args.cumulative}:${args.signature.toLowerCase()}`;
    return this.#invoke(signer, 'claim', claimArgsVal(args), tag);
  }

  /** `claim_many` with `signer` as its caller, source and fee payer (its authorization is the source's). */
  claimMany(rows: readonly ClaimRow[], signer: Keypair): Promise<TxResult> {
    const tag = `claim_many:${rows
      .map((r) => `${r.channelId}:${r.maxClaimable}:${r.total}:${r.signature.toLowerCase()}`)
      .join(',')}`;
    return this.#invoke(signer, 'claim_many', claimManyArgsVal(signer.address, rows), tag);
  }

  /** `refund` with `signer` as its caller, source and fee payer. */
  refund(args: RefundArgs, signer: Keypair): Promise<TxResult> {
    const tag = `refund:${args.channelId}:${args.amount}:${args.nonce}`;
    return this.#invoke(signer, 'refund', refundArgsVal(signer.address, args), tag);
  }

  async events(cursor: string | null, limit: number): Promise<EventsPage> {
    this.#assertOpen();
    return await this.#events.page(cursor, limit);
  }

  /** Nothing to release (requests share the global fetch agent); later calls are refused. */
  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  /** One invocation of the channel contract as a transaction of `signer`; `tag` names the request (a retry of it). */
  async #invoke(signer: Keypair, fn: ChannelFunction, args: xdr.ScVal[], tag: string): Promise<TxResult> {
    this.#assertOpen();
    const keys = StellarKeypair.fromSecret(signer.secret());
    const outcome = await this.#submitter.submit(keys, { contract: this.contracts.channel, fn, args }, tag);
    return this.#result(outcome, signer.address, fn);
  }

  async #result(outcome: SubmitOutcome, source: string, fn: ChannelFunction): Promise<TxResult> {
    if (outcome.kind === 'refused') {
      const error = hostErrorFromText(outcome.error) ?? pickHostError(hostErrorsFromEvents(outcome.events));
      const code = ledgerCodeOf(fn, error);
      return {
        hash: '',
        status: 'FAILED',
        ledger: outcome.latestLedger,
        source,
        op: opName(fn),
        ...(code !== undefined ? { code } : {}),
        message: error
          ? `${refusalMessage(fn, error, 'in simulation')}; nothing was submitted`
          : `the ${fn} was not submitted: ${outcome.error.split('\n')[0] ?? ''}`,
        events: [],
        ts: isoFromUnix(Math.floor(this.#now() / 1000)),
      };
    }
    const result = txResultOf(outcome.reply, outcome.hash, this.#context());
    if (result.status === 'SUCCESS' || result.code !== undefined) return result;
    // No diagnostics recorded: the contract's refusal is learnt by asking it again (most often
    // another claim landed first, and the same call now fails the same way).
    const again = await this.#submitter.resimulate(outcome.unsigned);
    const error = again.error !== undefined ? hostErrorFromText(again.error) : undefined;
    const code = ledgerCodeOf(fn, error);
    return code === undefined ? result : { ...result, code, message: refusalMessage(fn, error, 'on chain') };
  }

  async #sequence(address: string): Promise<number> {
    const key = xdr.LedgerKey.account(
      new xdr.LedgerKeyAccount({ accountId: StellarKeypair.fromPublicKey(address).xdrAccountId() }),
    );
    const entry = (await this.#rpc.getLedgerEntries([key])).entries[0];
    if (!entry) return 0;
    // Stellar sequence numbers are int64 (the creation ledger << 32) and the port's is a JS number:
    // above 2^53 it is the nearest one. It is informational here — this adapter reads the exact
    // value itself whenever it builds a transaction — so getAccount does not fail over it.
    return Number(xdr.LedgerEntryData.fromXDR(entry.xdr, 'base64').account().seqNum().toString());
  }

  /** The asset's `balance(id)`, by a read-only simulation. */
  async #balance(address: string): Promise<bigint> {
    const tx = this.#submitter.build(new Account(SIMULATION_SOURCE, '0'), {
      contract: this.contracts.asset,
      fn: 'balance',
      args: [new Address(address).toScVal()],
    });
    const sim = await this.#rpc.simulateTransaction(tx);
    if (sim.error !== undefined) {
      // A token refusing to answer (a Stellar Asset Contract without a trustline) holds nothing for it.
      if (hostErrorFromText(sim.error)?.type === 'Contract') return 0n;
      throw new LedgerUnavailable(
        `the asset contract did not report the balance of ${address}: ${sim.error.split('\n')[0] ?? ''}`,
      );
    }
    const value: unknown = sim.results?.[0]
      ? scValToNative(xdr.ScVal.fromXDR(sim.results[0].xdr, 'base64'))
      : undefined;
    if (typeof value !== 'bigint')
      throw new LedgerUnavailable(`the asset contract reported a balance that is not an i128 for ${address}`);
    return value;
  }

  #context() {
    return { passphrase: this.passphrase, channelContract: this.contracts.channel, asset: this.contracts.asset };
  }

  #assertOpen(): void {
    if (this.#closed) throw new LedgerUnavailable('the Stellar ledger adapter is closed');
  }
}
