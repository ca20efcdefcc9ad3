// The Ledger port: what the facilitator needs from a ledger network. Adapters: LocalLedger (the
// embedded simulation, in-process), HttpLedger (a standalone local ledger by URL) and
// StellarLedger over Soroban RPC (stellar:testnet). Every method is asynchronous so any adapter fits.
//
//   const ledger: Ledger = await LocalLedger.open({ dataDir, ledgerSeconds: 5 });
//   const ch = await ledger.getChannel(42n);
//   const res = await ledger.claim({ channelId: 42n, cumulative: 135000n, signature }, facilitatorKeys);
import type { Keypair, NetworkName, SignedLedgerTx } from '@svc/core';

export interface LedgerInfo {
  network: NetworkName;
  passphrase: string;
  latestLedger: number;
  ledgerSeconds: number;
  /** `dex` and `xlm` (the DEX pool and its second test asset) exist on the local ledger only. */
  contracts: { channel: string; asset: string; creditPool?: string; dex?: string; xlm?: string };
  asset: { code: string; decimals: number };
}

/** The channel contract's own record (PROTOCOL.md §9 GET /ledger/channels/:id). */
export interface LedgerChannel {
  id: bigint;
  payer: string;
  payee: string;
  asset: string;
  deposit: bigint;
  claimed: bigint;
  /** 64 lowercase hex characters. */
  voucherKey: string;
  expiryLedger: number;
  open: boolean;
}

export interface LedgerBalance {
  asset: string;
  amount: bigint;
}

/** A smart account's spending policy (PROTOCOL.md §7): what its agent key may do unsupervised. */
export interface AccountPolicy {
  /** G… address of the agent key. */
  agentKey: string;
  /** Most the agent may move in one transaction (transfer amount, channel deposit, top-up). */
  perTxCap: bigint;
  /** Most the agent may move per UTC day (ledger close time). */
  dailyCap: bigint;
  /** Addresses the agent may pay (transfer to, open a channel to). */
  payees: string[];
  /** The agent's authority ends after this ledger. */
  expiresLedger: number;
}

/** A smart account's state (a `C…` address made by `account.create`). */
export interface SmartAccountState {
  owner: string;
  policy: AccountPolicy | null;
  frozen: boolean;
  /** What the agent spent on `day` (UTC, YYYY-MM-DD). */
  spentToday: bigint;
  day: string;
}

export interface LedgerAccount {
  address: string;
  /** The sequence number of the account's last transaction (0 for a new account). */
  seq: number;
  balances: LedgerBalance[];
  /** Present for smart accounts. */
  account?: SmartAccountState;
}

export type LedgerEventType =
  | 'asset.minted'
  | 'asset.transferred'
  | 'channel.opened'
  | 'channel.topped_up'
  | 'channel.claimed'
  | 'channel.closed'
  | 'account.created'
  | 'account.policy_set'
  | 'account.frozen'
  | 'dex.swapped'
  | (string & {});

/** One entry of the ledger's ordered event log. Amounts in `data` are decimal strings. */
export interface LedgerEvent {
  /** Unique and opaque (the local ledger counts 1, 2, 3…; Soroban has paging tokens). */
  id: string;
  ledger: number;
  tx: string;
  ts: string;
  type: LedgerEventType;
  data: Record<string, unknown>;
}

export type TxStatus = 'SUCCESS' | 'FAILED';

export interface TxResult {
  hash: string;
  status: TxStatus;
  ledger: number;
  source: string;
  op: string;
  result?: Record<string, unknown>;
  /** Contract error code when FAILED (PROTOCOL.md §7: 20–27 channel, 1–7 smart account). */
  code?: number;
  /** Why the contract refused it, in English (FAILED only). */
  message?: string;
  events: LedgerEvent[];
  ts: string;
}

/** A transaction the ledger refused outright (bad signature, sequence or shape): no effect. */
export class LedgerTxRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerTxRefused';
  }
}

/** The ledger could not be reached or did not answer. */
export class LedgerUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LedgerUnavailable';
  }
}

/** A credit line from the pool to a smart account (PROTOCOL.md §7 "Credit line"). */
export interface CreditLine {
  account: string;
  /** What the account owes the pool (principal and fee). */
  debt: bigint;
  /** What the account holds, valued in the pool's asset. */
  value: bigint;
  /** value × 10000 / debt. */
  healthBps: number;
  liquidatable: boolean;
  /** ISO time (ledger close time) the line was opened. */
  openedAt: string;
}

/** An investor's stake in the pool. */
export interface PoolPosition {
  address: string;
  shares: bigint;
  /** shares × share price, in the pool's asset. */
  value: bigint;
}

/** The credit pool (the float): investors' deposits lent to smart accounts. */
export interface PoolState {
  address: string;
  /**
   * Idle funds plus what is lent out, in base units. The local ledger counts a line at its
   * principal: its fee is the investors' once repaid (so a close raises the share price).
   */
  size: bigint;
  idle: bigint;
  /** The principal of the open lines. */
  lent: bigint;
  totalShares: bigint;
  /** Base units of the asset per whole share (a share has 7 decimals like the asset). */
  sharePrice: bigint;
  /** lent × 10000 / size. */
  utilizationBps: number;
  /** A line below this health is liquidatable. */
  liquidationThresholdBps: number;
  lines: CreditLine[];
  positions: PoolPosition[];
}

export interface ClaimArgs {
  channelId: bigint;
  cumulative: bigint;
  /** The payer's voucher signature for `cumulative`, 128 hex characters. */
  signature: string;
}

/**
 * A page of events and the cursor that continues after it. An empty page keeps the cursor (local
 * ledger) or moves it past ledgers scanned without events (Soroban); either is a valid place to go
 * on from, and persisting it spares rescanning. A page shorter than the limit means caught up.
 */
export interface EventsPage {
  events: LedgerEvent[];
  cursor: string | null;
}

export interface Ledger {
  info(): Promise<LedgerInfo>;
  latestLedger(): Promise<number>;
  getChannel(id: bigint): Promise<LedgerChannel | null>;
  /** Every address exists implicitly (seq 0, no balances) until it transacts. */
  getAccount(address: string): Promise<LedgerAccount>;
  getTx(hash: string): Promise<TxResult | null>;
  /**
   * Applies a signed local-ledger transaction (PROTOCOL.md §9). Resolves with SUCCESS or FAILED
   * (FAILED consumes the sequence number, as on the real network); rejects with LedgerTxRefused
   * when the signature, sequence or shape is wrong (no effect), or LedgerUnavailable. Adapters of
   * other networks, which have their own transaction format, refuse it.
   */
  submit(tx: SignedLedgerTx): Promise<TxResult>;
  /**
   * Claims `cumulative` on the channel with the payer's voucher, as a transaction of `signer` (who
   * pays the fees; anyone may claim, and the contract pays only the payee). The adapter takes the
   * sequence number and serialises its own submissions. SUCCESS or FAILED with the contract's
   * code; rejects with LedgerUnavailable when it could not tell.
   */
  claim(args: ClaimArgs, signer: Keypair): Promise<TxResult>;
  /** Events after `cursor` (null: from the adapter's beginning), in order, at most `limit`. */
  events(cursor: string | null, limit: number): Promise<EventsPage>;
  /** The credit pool, where the network has one (the local ledger does); read-only. */
  getPool?(): Promise<PoolState | null>;
  close(): Promise<void>;
}
