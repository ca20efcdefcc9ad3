// What an op sees while it runs inside the transaction's SQLite transaction: the source, who
// signed, the ledger it lands in, the state, and the token contracts' transfer (which every
// value-moving op goes through, so every balance change leaves an `asset.*` event and every
// amount leaving a smart account under its agent key passes the policy's caps).
import { I128_MAX } from '@svc/core';
import type { VoucherContext } from '@svc/core';
import type { LocalContracts } from '../contracts.js';
import type { LedgerState } from '../ledger-state.js';
import type { LedgerEvent } from '../port.js';
import { AgentGuard } from './agent-guard.js';
import { fail } from './contract-error.js';

/** Ledger-wide facts the contracts need; fixed for the life of the ledger. */
export interface LedgerEnv {
  readonly passphrase: string;
  readonly contracts: LocalContracts;
  /** Vouchers bound to this network and the channel contract (docs/protocol.md#voucher). */
  readonly vouchers: VoucherContext;
}

/**
 * Whose key signed the tx. `source`: a G… account with its own key (or the ledger itself, for a
 * faucet grant); `owner` / `agent`: a smart-account source signed by its owner key or by the
 * agent key of its current policy (docs/protocol.md#the-local-ledger).
 */
export interface TxSigner {
  /** G… address of the signing key. */
  key: string;
  role: 'source' | 'owner' | 'agent';
}

export interface OpContextInit {
  env: LedgerEnv;
  state: LedgerState;
  source: string;
  /** Default: the source signed with its own key. */
  signer?: TxSigner;
  tx: string;
  ledger: number;
  ts: string;
}

export class OpContext {
  readonly env: LedgerEnv;
  readonly state: LedgerState;
  /** The account the tx acts for (the caller, in contract terms). */
  readonly source: string;
  readonly signer: TxSigner;
  /** The policy checks of a smart account's agent; undefined unless the agent key signed. */
  readonly agent: AgentGuard | undefined;
  /** The tx hash, carried by every event. */
  readonly tx: string;
  /** The ledger the tx lands in: the latest closed one. */
  readonly ledger: number;
  readonly ts: string;
  readonly events: LedgerEvent[] = [];

  constructor(init: OpContextInit) {
    this.env = init.env;
    this.state = init.state;
    this.source = init.source;
    this.signer = init.signer ?? { key: init.source, role: 'source' };
    this.tx = init.tx;
    this.ledger = init.ledger;
    this.ts = init.ts;
    this.agent = this.signer.role === 'agent' ? new AgentGuard(this) : undefined;
  }

  get asset(): string {
    return this.env.contracts.asset;
  }

  /** The UTC day of the tx's time (YYYY-MM-DD): a smart account's daily cap counts per such day. */
  get day(): string {
    return this.ts.slice(0, 10);
  }

  emit(type: string, data: Record<string, unknown>): void {
    this.events.push(this.state.insertEvent({ tx: this.tx, ledger: this.ledger, ts: this.ts, type, data }));
  }

  balance(address: string, asset: string = this.asset): bigint {
    return this.state.balance(address, asset);
  }

  /**
   * The token contract `asset`'s transfer (default: the ledger's asset). A zero amount moves
   * nothing and leaves no event. Out of the source under its agent key, the caps come first,
   * then the balance: an agent over its cap learns that, whatever it holds.
   */
  transfer(from: string, to: string, amount: bigint, asset: string = this.asset): void {
    if (amount < 0n) fail(27, 'a transfer amount cannot be negative');
    if (amount === 0n) return;
    if (from === this.source) this.agent?.charge(asset, amount);
    const held = this.balance(from, asset);
    if (held < amount) fail(27, `insufficient balance: ${from} holds ${held} base units of ${asset}, ${amount} needed`);
    this.state.setBalance(from, asset, held - amount);
    this.credit(to, amount, asset);
    this.emit('asset.transferred', { asset, from, to, amount: amount.toString() });
  }

  /** The asset issuer's mint (the faucet). */
  mint(to: string, amount: bigint): void {
    if (amount <= 0n) fail(27, 'a mint amount must be positive');
    this.credit(to, amount, this.asset);
    this.emit('asset.minted', { asset: this.asset, to, amount: amount.toString() });
  }

  private credit(to: string, amount: bigint, asset: string): void {
    const next = this.balance(to, asset) + amount;
    if (next > I128_MAX) fail(27, `the balance of ${to} would exceed the i128 range`);
    this.state.setBalance(to, asset, next);
  }
}
