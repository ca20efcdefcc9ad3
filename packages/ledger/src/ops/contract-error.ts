// How an op refuses: it throws, the ledger's core loop (local-ledger.ts) catches it and records the
// tx as FAILED with the code. A module of its own, because the context and the guards refuse too,
// and they must not import the op registry that is built on them.
import type { LedgerCode } from '@svc/core';

/** A contract's refusal (docs/protocol.md#channels-and-records codes): the tx is recorded as FAILED with this code. */
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
