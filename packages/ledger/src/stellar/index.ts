// The Stellar (Soroban RPC) adapter of the Ledger port; the contract it expects is documented in
// packages/ledger/docs/channel-contract.md.
export {
  StellarLedger,
  STELLAR_NETWORK,
  STELLAR_LEDGER_SECONDS,
  DEFAULT_TX_TIMEOUT_SECONDS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_MAX_POLLS,
} from './stellar-ledger.js';
export type { StellarLedgerOptions } from './stellar-ledger.js';
