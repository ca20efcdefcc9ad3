// @svc/ledger: the Ledger port and its adapters (docs/architecture.md): LocalLedger (embedded,
// durable), its HTTP routes and standalone server, HttpLedger to reach one by URL, and StellarLedger
// over Soroban RPC (stellar:testnet).
export * from './port.js';
export { LocalLedger, DEFAULT_LEDGER_SECONDS } from './local-ledger.js';
export type { LocalLedgerOptions } from './local-ledger.js';
export { LEDGER_ROUTES, ledgerRoutes, sendLedgerError, LEDGER_BODY_LIMIT } from './http-routes.js';
export type { LedgerRoute, LedgerRouteInput, LedgerRoutesOptions } from './http-routes.js';
export { HttpLedger, DEFAULT_HTTP_LEDGER_TIMEOUT_MS } from './http-ledger.js';
export type { HttpLedgerOptions } from './http-ledger.js';
export { startLedgerServer, LEDGER_PREFIX } from './server.js';
export type { LedgerServer, LedgerServerOptions } from './server.js';
export { ledgerConfigFromEnv, ConfigError } from './config.js';
export type { LedgerServerConfig } from './config.js';
export { DEFAULT_FAUCET_AMOUNT, DEFAULT_FAUCET_PER_ADDRESS_PER_HOUR, DEFAULT_FAUCET_PER_HOUR } from './faucet.js';
export type { FaucetOptions, LedgerFaucet } from './faucet.js';
export { SYSTEM_CLOCK } from './ledger-clock.js';
export { DataDirInUse, lockDataDir } from './data-dir-lock.js';
export { explainNativeAddon, openSqlite } from './sqlite-open.js';
export type { DataDirHolder, DataDirLock } from './data-dir-lock.js';
export type { Clock } from './ledger-clock.js';
export {
  ASSET_CODE,
  ASSET_DECIMALS,
  GENESIS_LEDGER,
  LOCAL_NETWORK,
  LOCAL_PASSPHRASE,
  PAYER_CLOSE_DELAY_LEDGERS,
  localContracts,
} from './contracts.js';
export type { LocalContracts } from './contracts.js';
export { CLAIM_BATCH_RESOURCES, MAX_CLAIMS_PER_TX, rowsWithin } from './claim-batch.js';
export type { ClaimBatchResource } from './claim-batch.js';
export { DEFAULT_OPS } from './ops/index.js';
export { ContractError, fail } from './ops/contract-error.js';
export { defineOp, opRegistry } from './ops/registry.js';
export type { OpDefinition, OpRegistry, OpResult } from './ops/registry.js';
export { OpContext } from './ops/context.js';
export type { LedgerEnv } from './ops/context.js';
export { StellarLedger, STELLAR_NETWORK, STELLAR_LEDGER_SECONDS } from './stellar/index.js';
export type { StellarLedgerOptions } from './stellar/index.js';
export {
  DEX_ASSET_CODE,
  DEX_ASSET_DECIMALS,
  DEX_GENESIS_RESERVES,
  DEX_RATE,
  smartAccountAddress,
} from './contracts.js';
export type { DexReserves } from './contracts.js';
export { MAX_PAYEES } from '@svc/core';
export type { AgentGuard } from './ops/agent-guard.js';
export type { TxSigner } from './ops/context.js';
export { policyToWire, smartAccountToWire } from '@svc/core';
export { ASSET_UNIT, POOL_LINE_FEE_BPS, POOL_LIQUIDATION_THRESHOLD_BPS } from './contracts.js';
export { poolToWire } from '@svc/core';
