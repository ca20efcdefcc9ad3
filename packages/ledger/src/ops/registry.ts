// The op registry: op name → args schema + handler. The ledger's core loop (local-ledger.ts)
// checks the envelope, signature and sequence, then looks the op up here, so a new contract
// function (account.create, pool.deposit, dex.swap, …) is one more definition in ops/index.ts and
// nothing else changes.
//
//   export const transferOp = defineOp('transfer', z.strictObject({ to: zAddressArg, amount: zAmountArg }),
//     (ctx, args) => { ctx.transfer(ctx.source, args.to, args.amount); return undefined; });
import type { z } from 'zod';
import type { LedgerCode } from '@svc/core';
import type { OpContext } from './context.js';

/** What an op returns as the tx's `result`: JSON-safe (amounts and ids as decimal strings). */
export type OpResult = Record<string, string | number | boolean> | undefined;

export interface OpDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  /**
   * The args' shape: what the transaction encoding itself could express (types, StrKeys, hex
   * lengths, integer ranges). A tx whose args fail it is refused outright, with no effect.
   */
  readonly args: S;
  /** Applies the op; throws ContractError to fail the tx (recorded as FAILED, seq consumed). */
  apply(ctx: OpContext, args: z.output<S>): OpResult;
}

export function defineOp<S extends z.ZodType>(name: string, args: S, apply: (ctx: OpContext, args: z.output<S>) => OpResult): OpDefinition<S> {
  return { name, args, apply };
}

export type OpRegistry = ReadonlyMap<string, OpDefinition>;

export function opRegistry(definitions: readonly OpDefinition[]): OpRegistry {
  const map = new Map<string, OpDefinition>();
  for (const def of definitions) {
    if (map.has(def.name)) throw new Error(`op ${def.name} is defined twice`);
    map.set(def.name, def);
  }
  return map;
}

/** A contract's refusal (PROTOCOL.md §7 codes): the tx is recorded as FAILED with this code. */
export class ContractError extends Error {
  constructor(
    readonly code: LedgerCode,
    message: string,
  ) {
    super(message);
    this.name = 'ContractError';
  }
}

export function fail(code: LedgerCode, message: string): never {
  throw new ContractError(code, message);
}
