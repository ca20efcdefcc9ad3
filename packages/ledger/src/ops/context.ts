// What an op sees while it runs inside the transaction's SQLite transaction: the source, the
// ledger it lands in, the state, and the asset contract's transfer (which every value-moving op
// goes through, so every balance change leaves an `asset.*` event).
import { I128_MAX } from '@svc/core';
import type { VoucherContext } from '@svc/core';
import type { LocalContracts } from '../contracts.js';
import type { LedgerState } from '../ledger-state.js';
import type { LedgerEvent } from '../port.js';
import { fail } from './registry.js';

/** Ledger-wide facts the contracts need; fixed for the life of the ledger. */
export interface LedgerEnv {
  readonly passphrase: string;
  readonly contracts: LocalContracts;
  /** Vouchers bound to this network and the channel contract (PROTOCOL.md §2). */
  readonly vouchers: VoucherContext;
}

export interface OpContextInit {
  env: LedgerEnv;
  state: LedgerState;
  source: string;
  tx: string;
  ledger: number;
  ts: string;
}

export class OpContext {
  readonly env: LedgerEnv;
  readonly state: LedgerState;
  /** The account that signed the tx (the caller, in contract terms). */
  readonly source: string;
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
    this.tx = init.tx;
    this.ledger = init.ledger;
    this.ts = init.ts;
  }

  get asset(): string {
    return this.env.contracts.asset;
  }

  emit(type: string, data: Record<string, unknown>): void {
    this.events.push(this.state.insertEvent({ tx: this.tx, ledger: this.ledger, ts: this.ts, type, data }));
  }

  balance(address: string): bigint {
    return this.state.balance(address, this.asset);
  }

  /** The asset contract's transfer. A zero amount moves nothing and leaves no event. */
  transfer(from: string, to: string, amount: bigint): void {
    if (amount < 0n) fail(27, 'a transfer amount cannot be negative');
    if (amount === 0n) return;
    const held = this.balance(from);
    if (held < amount) fail(27, `insufficient balance: ${from} holds ${held} base units of ${this.asset}, ${amount} needed`);
    this.state.setBalance(from, this.asset, held - amount);
    this.credit(to, amount);
    this.emit('asset.transferred', { asset: this.asset, from, to, amount: amount.toString() });
  }

  /** The asset issuer's mint (the faucet). */
  mint(to: string, amount: bigint): void {
    if (amount <= 0n) fail(27, 'a mint amount must be positive');
    this.credit(to, amount);
    this.emit('asset.minted', { asset: this.asset, to, amount: amount.toString() });
  }

  private credit(to: string, amount: bigint): void {
    const next = this.balance(to) + amount;
    if (next > I128_MAX) fail(27, `the balance of ${to} would exceed the i128 range`);
    this.state.setBalance(to, this.asset, next);
  }
}
