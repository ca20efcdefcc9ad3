// Test builders for the credit pool: read it through the port, deposit, and make a borrower (a
// funded smart account whose agent may pay one payee with generous caps).
import { expect } from 'vitest';
import type { Ledger, PoolState, TxResult } from '../../src/index.js';
import { CONTRACTS } from './actors.js';
import type { Actor } from './actors.js';
import { SmartActor } from './smart-account.js';

export const POOL = CONTRACTS.creditPool;
export const XLM = CONTRACTS.xlm;

/** The pool through the port; every adapter of the contract suite has one. */
export async function poolOf(ledger: Ledger): Promise<PoolState> {
  const pool = await ledger.getPool?.();
  if (!pool) throw new Error('the ledger has no credit pool');
  return pool;
}

/** `investor` is funded with `amount` and deposits all of it; the tx must succeed. */
export async function deposit(
  ledger: Ledger & { faucet(address: string, amount?: bigint): Promise<TxResult> },
  investor: Actor,
  amount: bigint,
): Promise<TxResult> {
  await ledger.faucet(investor.address, amount);
  const res = await investor.send('pool.deposit', { amount: amount.toString() });
  expect(res.status, res.message).toBe('SUCCESS');
  return res;
}

/** A smart account of `owner` holding `collateral`, whose agent may pay `payee` (caps far above the tests' amounts). */
export async function borrower(
  ledger: Ledger & { faucet(address: string, amount?: bigint): Promise<TxResult> },
  owner: Actor,
  payee: string,
  collateral: bigint,
): Promise<SmartActor> {
  const latest = await ledger.latestLedger();
  const sa = await SmartActor.create(ledger, owner, (agent) => ({
    agentKey: agent.address,
    perTxCap: '100000000',
    dailyCap: '1000000000',
    payees: [payee],
    expiresLedger: latest + 10_000,
  }));
  if (collateral > 0n) await ledger.faucet(sa.address, collateral);
  return sa;
}

/** `owner` opens a line of `limit` for `account` (the owner submitting as itself); it must succeed. */
export async function openLine(owner: Actor, account: string, limit: bigint): Promise<TxResult> {
  const res = await owner.send('pool.open_line', { account, limit: limit.toString() });
  expect(res.status, res.message).toBe('SUCCESS');
  return res;
}

/** The data of the pool.* events of a tx, by type. */
export function poolEvents(tx: TxResult): Array<[string, Record<string, unknown>]> {
  return tx.events.map((e) => [e.type, e.data]);
}
