// Test builders for smart accounts: a policy builder with overrides, and an actor that submits as
// a smart account, signed by the key the case chooses (owner, agent, or a stranger's).
import { expect } from 'vitest';
import { randomKeypair, signLedgerTx } from '@svc/core';
import type { Keypair, SignedLedgerTx } from '@svc/core';
import type { Ledger, SmartAccountState, TxResult } from '../../src/index.js';
import { ASSET, PASS } from './actors.js';
import type { Actor } from './actors.js';

/** A policy as `account.create` / `account.set_policy` args (amounts as decimal strings). */
export interface PolicyArgs {
  agentKey: string;
  perTxCap: string;
  dailyCap: string;
  payees: string[];
  expiresLedger: number;
}

export class SmartActor {
  private constructor(
    readonly ledger: Ledger,
    readonly address: string,
    readonly owner: Actor,
    readonly agent: Keypair,
    readonly created: TxResult,
  ) {}

  /** `owner` creates an account whose policy `policy(agent)` builds (null: no policy). */
  static async create(
    ledger: Ledger,
    owner: Actor,
    policy: ((agent: Keypair) => PolicyArgs) | null,
    agent: Keypair = randomKeypair(),
  ): Promise<SmartActor> {
    const created = await owner.send('account.create', { owner: owner.address, policy: policy ? policy(agent) : null });
    expect(created.status, created.message).toBe('SUCCESS');
    return new SmartActor(ledger, String(created.result?.['address']), owner, agent, created);
  }

  async seq(): Promise<number> {
    return (await this.ledger.getAccount(this.address)).seq;
  }

  async balance(asset = ASSET): Promise<bigint> {
    return (await this.ledger.getAccount(this.address)).balances.find((b) => b.asset === asset)?.amount ?? 0n;
  }

  async state(): Promise<SmartAccountState> {
    const account = (await this.ledger.getAccount(this.address)).account;
    if (!account) throw new Error(`${this.address} has no smart-account state`);
    return account;
  }

  /** A tx with this account as source, signed by `keys`, with the next seq (or the one given). */
  async sign(keys: Keypair, op: string, args: Record<string, unknown>, seq?: number): Promise<SignedLedgerTx> {
    return signLedgerTx(keys, PASS, { source: this.address, seq: seq ?? (await this.seq()) + 1, op, args });
  }

  async send(keys: Keypair, op: string, args: Record<string, unknown>): Promise<TxResult> {
    return this.ledger.submit(await this.sign(keys, op, args));
  }

  byAgent(op: string, args: Record<string, unknown>): Promise<TxResult> {
    return this.send(this.agent, op, args);
  }

  byOwner(op: string, args: Record<string, unknown>): Promise<TxResult> {
    return this.send(this.owner.keys, op, args);
  }
}
