// The two ways a ledger fails a caller, whichever ledger it is (the local one over HTTP, Stellar
// over Soroban RPC): the clients of those remotes live here, so their errors do too. @svc/ledger's
// port names them as its own.

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
