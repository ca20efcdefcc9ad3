// The op registry: op name → args schema + handler. The ledger's core loop (local-ledger.ts)
// checks the envelope, signature and sequence, then looks the op up here, so a new contract
// function (account.create, pool.deposit, dex.swap, …) is one more definition in ops/index.ts and
// nothing else changes.
//
//   export const transferOp = defineLedgerOp('transfer', (ctx, args) => {
//     ctx.transfer(ctx.source, args.to, args.amount);
//     return undefined;
//   });
import type { z } from 'zod';
import { LEDGER_OP_ARGS } from '@svc/core';
import type { LedgerOpArgs, LedgerOpName } from '@svc/core';
import type { OpContext } from './context.js';

/** What an op returns as the tx's `result`: JSON-safe (amounts and ids as decimal strings, lists of them). */
export type OpResult = Record<string, string | number | boolean | string[]> | undefined;

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

export function defineOp<S extends z.ZodType>(
  name: string,
  args: S,
  apply: (ctx: OpContext, args: z.output<S>) => OpResult,
): OpDefinition<S> {
  return { name, args, apply };
}

/** The table of @svc/core's op schemas, typed by name, so that one op's schema can be looked up generically. */
const LEDGER_OP_SCHEMAS: { readonly [K in LedgerOpName]: z.ZodType<LedgerOpArgs<K>> } = LEDGER_OP_ARGS;

/** One of the local ledger's own ops, its args the schema @svc/core declares for it (ledger-ops.ts). */
export function defineLedgerOp<K extends LedgerOpName>(
  name: K,
  apply: (ctx: OpContext, args: LedgerOpArgs<K>) => OpResult,
): OpDefinition<z.ZodType<LedgerOpArgs<K>>> {
  return defineOp(name, LEDGER_OP_SCHEMAS[name], apply);
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
