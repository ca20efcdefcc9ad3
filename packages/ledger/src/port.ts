// The Ledger port: what the facilitator needs from a ledger network. Adapters: LocalLedger (the
// embedded simulation, in-process), HttpLedger (a standalone local ledger by URL) and
// StellarLedger over Soroban RPC (stellar:testnet). Every method is asynchronous so any adapter fits.
//
//   const ledger: Ledger = await LocalLedger.open({ dataDir, ledgerSeconds: 5 });
//   const ch = await ledger.getChannel(42n);
//   const res = await ledger.claim({ channelId: 42n, cumulative: 135000n, signature }, facilitatorKeys);
//   const batch = await ledger.claimMany([{ channelId: 42n, maxClaimable: 140000n, signature, total: 135000n }], facilitatorKeys);
import type {
  EventsPage,
  Keypair,
  LedgerAccount,
  LedgerChannel,
  LedgerInfo,
  PoolState,
  SignedLedgerTx,
  TxResult,
} from '@svc/core';

// The values the port carries are the outputs of @svc/core's ledger wire schemas (ledger-wire.ts,
// ledger-pool-wire.ts): one declaration for the HTTP wire and the port, so the two cannot drift.
export type {
  AccountPolicy,
  CreditLine,
  EventsPage,
  LedgerAccount,
  LedgerBalance,
  LedgerChannel,
  LedgerEvent,
  LedgerInfo,
  PoolPosition,
  PoolState,
  SmartAccountState,
  TxResult,
  TxStatus,
} from '@svc/core';

/** What a LedgerEvent's `type` says happened (open-ended: other adapters may add their own). */
export type LedgerEventType =
  | 'asset.minted'
  | 'asset.transferred'
  | 'channel.opened'
  | 'channel.topped_up'
  | 'channel.claimed'
  | 'channel.refunded'
  | 'channel.closed'
  | 'account.created'
  | 'account.policy_set'
  | 'account.frozen'
  | 'dex.swapped'
  | (string & {});

// The port's two failures; @svc/core defines them, beside the clients of the remote ledgers that throw them.
export { LedgerTxRefused, LedgerUnavailable } from '@svc/core';

export interface ClaimArgs {
  channelId: bigint;
  cumulative: bigint;
  /** The payer's voucher signature for `cumulative`, 128 hex characters. */
  signature: string;
}

/**
 * One row of a `claim_many`: the payer's voucher for `maxClaimable` (a ceiling) and the `total`
 * the channel's claimed becomes. A total below maxClaimable is only the channel's receiver
 * authorizer's to claim (docs/channel-contract.md).
 */
export interface ClaimRow {
  channelId: bigint;
  maxClaimable: bigint;
  /** The payer's voucher signature for `maxClaimable`, 128 hex characters. */
  signature: string;
  total: bigint;
}

/** A refund of up to `amount` from the channel's unclaimed deposit to its payer, under the channel's refund nonce. */
export interface RefundArgs {
  channelId: bigint;
  amount: bigint;
  /** The channel's current `refundNonce`; a refund under any other fails (27). */
  nonce: bigint;
}

/**
 * A payer's signed deposit transaction (a batch-settlement deposit payload's `transaction`), read
 * before anything is sent: its source (whose signature was checked), the channel call it makes with
 * its arguments in the local ledger's form (LEDGER_OP_ARGS), and the hash it will have on the
 * ledger once submitted by the sponsor.
 */
export type DepositRead =
  | { ok: true; source: string; op: string; args: Record<string, string | number>; hash: string }
  | { ok: false; message: string };

export interface Ledger {
  info(): Promise<LedgerInfo>;
  latestLedger(): Promise<number>;
  getChannel(id: bigint): Promise<LedgerChannel | null>;
  /** Every address exists implicitly (seq 0, no balances) until it transacts. */
  getAccount(address: string): Promise<LedgerAccount>;
  getTx(hash: string): Promise<TxResult | null>;
  /**
   * Applies a signed local-ledger transaction (docs/protocol.md#the-local-ledger). Resolves with SUCCESS or FAILED
   * (FAILED consumes the sequence number, as on the real network); rejects with LedgerTxRefused
   * when the signature, sequence or shape is wrong (no effect), or LedgerUnavailable. Adapters of
   * other networks, which have their own transaction format, refuse it.
   */
  submit(tx: SignedLedgerTx): Promise<TxResult>;
  /**
   * Networks whose transactions are their own (Stellar), not svc's local-ledger ones: a payer's
   * signed deposit transaction read strictly, with `sponsor` (an address) as the fee source that
   * will submit it. Absent: deposits are local-ledger transactions, taken by `submit`.
   */
  readDeposit?(transaction: unknown, sponsor: string): DepositRead;
  /**
   * Submits a deposit transaction readDeposit took, `sponsor` paying its fees; its simulation must
   * succeed first (else FAILED, nothing sent). Rejects with LedgerTxRefused when the network
   * refuses it outright (nothing applied), LedgerUnavailable when the outcome is not known.
   */
  submitDeposit?(transaction: string, sponsor: Keypair): Promise<TxResult>;
  /**
   * Claims `cumulative` on the channel with the payer's voucher, as a transaction of `signer` (who
   * pays the fees; anyone may claim, and the contract pays only the payee). The adapter takes the
   * sequence number and serialises its own submissions. SUCCESS or FAILED with the contract's
   * code; rejects with LedgerUnavailable when it could not tell.
   */
  claim(args: ClaimArgs, signer: Keypair): Promise<TxResult>;
  /**
   * Claims several channels in one transaction of `signer`, who is the contract's `caller` (it
   * must be each channel's receiver authorizer where a row claims less than its voucher). All rows
   * or none: FAILED carries the first failing row's code. SUCCESS's `result.amounts` holds what
   * each row paid, in order (LedgerClaimManyResultSchema). At most MAX_CLAIMS_PER_TX rows.
   */
  claimMany(rows: readonly ClaimRow[], signer: Keypair): Promise<TxResult>;
  /**
   * Refunds up to `args.amount` of the channel's unclaimed deposit to its payer, as a transaction
   * of `signer` (the channel's receiver authorizer or its payee). SUCCESS's `result.refunded` is
   * what moved; its `channel.refunded` event carries the deposit and refund nonce after it.
   */
  refund(args: RefundArgs, signer: Keypair): Promise<TxResult>;
  /** Events after `cursor` (null: from the adapter's beginning), in order, at most `limit`. */
  events(cursor: string | null, limit: number): Promise<EventsPage>;
  /** The credit pool, where the network has one (the local ledger does); read-only. */
  getPool?(): Promise<PoolState | null>;
  close(): Promise<void>;
}
