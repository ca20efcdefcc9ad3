// Builds, simulates, prepares, signs, sends and polls one Soroban invocation per transaction
// (docs/architecture.md#on-stellar: a contract invocation is the only operation of its transaction), serialised per
// source account. The source pays the fees.
//
// Resubmission is safe: a transaction is remembered (per source) from before it is sent until its
// outcome is known. If sending times out or polling gives up, the next submission from that
// source first looks the remembered hash up and, while it can still land, sends the very same
// envelope again (same sequence number, same hash: the network takes it at most once). Only once
// it is known to be in a ledger, or known to be expired (the latest ledger closed after its
// maxTime), is a new transaction built. So a transaction that may have landed is never followed
// by a second one with the next sequence number.
import { Account, Keypair, Operation, rpc as sdkRpc, TransactionBuilder, xdr } from '@stellar/stellar-sdk';
import type { FeeBumpTransaction, Transaction } from '@stellar/stellar-sdk';
import { LedgerTxRefused, LedgerUnavailable } from '../port.js';
import type { RpcSend, RpcSimulation, RpcTransaction } from '@svc/core';
import { SubmissionQueue } from './submission-queue.js';
import type { SorobanRpc } from '@svc/core';

export interface SubmitterOptions {
  passphrase: string;
  /** Wall clock in ms, for the transaction's time bounds. */
  now: () => number;
  /** How long a transaction may wait to be included (its maxTime is now + this). */
  txTimeoutSeconds: number;
  /** The inclusion fee offered, in stroops; the resource fee comes from the simulation. */
  inclusionFee: string;
  pollIntervalMs: number;
  /** getTransaction polls after a send before giving up with LedgerUnavailable. */
  maxPolls: number;
}

export interface Invocation {
  contract: string;
  fn: string;
  args: xdr.ScVal[];
}

export type SubmitOutcome =
  /** The simulation refused the call: nothing was sent, no fee spent. */
  | { kind: 'refused'; unsigned: Transaction; error: string; events: xdr.DiagnosticEvent[]; latestLedger: number }
  /** In a ledger, SUCCESS or FAILED. */
  | { kind: 'included'; hash: string; unsigned: Transaction; reply: RpcTransaction & { status: 'SUCCESS' | 'FAILED' } };

interface Pending {
  /** What the caller submitted, so a retry of the same request gets the earlier outcome. */
  tag: string;
  unsigned: Transaction;
  /** What is sent: the source's own transaction, or a fee-bump of a payer's (sendSponsored). */
  signed: Transaction | FeeBumpTransaction;
  hash: string;
  maxTime: number;
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

export class TxSubmitter {
  readonly #queue = new SubmissionQueue();
  readonly #pending = new Map<string, Pending>();

  constructor(
    private readonly rpc: SorobanRpc,
    private readonly options: SubmitterOptions,
  ) {}

  /** Submits `invocation` as a transaction of `signer`; `tag` names the request (same tag, same request). */
  submit(signer: Keypair, invocation: Invocation, tag: string): Promise<SubmitOutcome> {
    return this.#queue.run(signer.publicKey(), () => this.#submitNow(signer, invocation, tag));
  }

  async #submitNow(signer: Keypair, invocation: Invocation, tag: string): Promise<SubmitOutcome> {
    const earlier = this.#pending.get(signer.publicKey());
    if (earlier) {
      const outcome = await this.#resume(signer.publicKey(), earlier);
      if (outcome && earlier.tag === tag) return outcome;
    }
    const unsigned = this.build(await this.#account(signer.publicKey()), invocation);
    const simulation = await this.rpc.simulateTransaction(unsigned);
    if (simulation.error !== undefined) return this.#refused(unsigned, simulation, simulation.error);
    if (simulation.restorePreamble) {
      return this.#refused(
        unsigned,
        simulation,
        'the invocation reads archived contract state, which must be restored (RestoreFootprint) first',
      );
    }
    const prepared = sdkRpc
      .assembleTransaction(unsigned, simulation as unknown as sdkRpc.Api.RawSimulateTransactionResponse)
      .build();
    prepared.sign(signer);
    const pending: Pending = {
      tag,
      unsigned,
      signed: prepared,
      hash: prepared.hash().toString('hex'),
      maxTime: Number(prepared.timeBounds?.maxTime ?? 0),
    };
    // Remembered before it leaves: from here on its outcome must be known before anything new is built.
    this.#pending.set(signer.publicKey(), pending);
    return this.#send(signer.publicKey(), pending, true);
  }

  /**
   * Sends `bump` — a fee-bump, signed by its fee source, of `inner`, a payer's own signed
   * transaction — and polls it into a ledger. Not remembered for resubmission: the same payer's
   * transaction bumped by the same sponsor has the same hash, and the caller looks that up before
   * sending it again. A network that refuses it outright (a used sequence number, say) rejects
   * with LedgerTxRefused: nothing was applied, no fee spent.
   */
  sendSponsored(bump: FeeBumpTransaction, inner: Transaction): Promise<SubmitOutcome> {
    const hash = bump.hash().toString('hex');
    const pending: Pending = {
      tag: `sponsored:${hash}`,
      unsigned: inner,
      signed: bump,
      hash,
      maxTime: Number(inner.timeBounds?.maxTime ?? 0),
    };
    return this.#send(pending.tag, pending, true, true);
  }

  /** An unsigned invocation from `account` (whose sequence number it takes), bounded in time. */
  build(account: Account, invocation: Invocation): Transaction {
    const maxTime = Math.floor(this.options.now() / 1000) + this.options.txTimeoutSeconds;
    return new TransactionBuilder(account, {
      fee: this.options.inclusionFee,
      networkPassphrase: this.options.passphrase,
      timebounds: { minTime: 0, maxTime },
    })
      .addOperation(
        Operation.invokeContractFunction({
          contract: invocation.contract,
          function: invocation.fn,
          args: invocation.args,
        }),
      )
      .build();
  }

  /** Re-runs a simulation (to learn why an included transaction failed). */
  resimulate(unsigned: Transaction): Promise<RpcSimulation> {
    return this.rpc.simulateTransaction(unsigned);
  }

  #refused(unsigned: Transaction, simulation: RpcSimulation, error: string): SubmitOutcome {
    const events = (simulation.events ?? []).map((e) => xdr.DiagnosticEvent.fromXDR(e, 'base64'));
    return { kind: 'refused', unsigned, error, events, latestLedger: simulation.latestLedger };
  }

  async #account(source: string): Promise<Account> {
    const key = xdr.LedgerKey.account(
      new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(source).xdrAccountId() }),
    );
    const { entries } = await this.rpc.getLedgerEntries([key]);
    const entry = entries[0];
    if (!entry)
      throw new LedgerUnavailable(
        `the account ${source} does not exist on the network: fund it (testnet: friendbot) before it submits transactions`,
      );
    return new Account(source, xdr.LedgerEntryData.fromXDR(entry.xdr, 'base64').account().seqNum().toString());
  }

  /** The outcome of a remembered transaction, sending it again while it can still land; null once it is known never to land. */
  async #resume(source: string, pending: Pending): Promise<SubmitOutcome | null> {
    const reply = await this.rpc.getTransaction(pending.hash);
    if (reply.status !== 'NOT_FOUND') return this.#included(source, pending, reply);
    if (reply.latestLedgerCloseTime > pending.maxTime) {
      this.#pending.delete(source);
      return null;
    }
    return this.#send(source, pending, false);
  }

  async #send(source: string, pending: Pending, fresh: boolean, sponsored = false): Promise<SubmitOutcome> {
    const reply = await this.#trySend(pending);
    if (reply?.status === 'ERROR' && sponsored)
      throw new LedgerTxRefused(`the network refused transaction ${pending.hash}: ${resultName(reply.errorResultXdr)}`);
    if (reply?.status === 'ERROR' && fresh) {
      // Refused outright, never queued: nothing can land and the sequence number is still free.
      this.#pending.delete(source);
      throw new LedgerUnavailable(
        `the network refused transaction ${pending.hash}: ${resultName(reply.errorResultXdr)}`,
      );
    }
    // Not taken now: it stays remembered and the same envelope is sent again next time.
    if (reply?.status === 'TRY_AGAIN_LATER')
      throw new LedgerUnavailable(`the network asked to send transaction ${pending.hash} again later`);
    // PENDING, DUPLICATE, no answer at all, or a resend refused because the first copy landed
    // meanwhile (its sequence number is used): polling tells which.
    return this.#poll(source, pending);
  }

  async #trySend(pending: Pending): Promise<RpcSend | null> {
    try {
      return await this.rpc.sendTransaction(pending.signed);
    } catch (err) {
      // No answer (a timeout, say): it may still have reached the network.
      if (err instanceof LedgerUnavailable) return null;
      throw err;
    }
  }

  async #poll(source: string, pending: Pending): Promise<SubmitOutcome> {
    for (let attempt = 0; attempt < this.options.maxPolls; attempt++) {
      await sleep(this.options.pollIntervalMs);
      let reply: RpcTransaction;
      try {
        reply = await this.rpc.getTransaction(pending.hash);
      } catch (err) {
        if (err instanceof LedgerUnavailable) continue;
        throw err;
      }
      if (reply.status !== 'NOT_FOUND') return this.#included(source, pending, reply);
      if (reply.latestLedgerCloseTime > pending.maxTime) {
        this.#pending.delete(source);
        throw new LedgerUnavailable(`transaction ${pending.hash} expired without being included: nothing was applied`);
      }
    }
    throw new LedgerUnavailable(
      `transaction ${pending.hash} was sent but is not in a ledger yet; its outcome is looked up before ${source} sends anything else`,
    );
  }

  #included(source: string, pending: Pending, reply: RpcTransaction): SubmitOutcome {
    this.#pending.delete(source);
    return {
      kind: 'included',
      hash: pending.hash,
      unsigned: pending.unsigned,
      reply: reply as RpcTransaction & { status: 'SUCCESS' | 'FAILED' },
    };
  }
}

/** `txBadSeq`, `txInsufficientFee`, …: why sendTransaction refused a transaction. */
export function resultName(errorResultXdr: string | undefined): string {
  if (!errorResultXdr) return 'no reason given';
  try {
    return xdr.TransactionResult.fromXDR(errorResultXdr, 'base64').result().switch().name;
  } catch {
    return 'an unreadable TransactionResult';
  }
}
