// What @svc/sdk offers in a browser (its `browser` export): everything but the Wallet, which keeps
// its keys in a file. Node gets it all from index.ts.
export { ChannelSigner, ChannelLimitError } from './channel-signer.js';
export type { ChannelSignerOptions, SignerState } from './channel-signer.js';
export { LocalLedgerClient, DEFAULT_CHANNEL_LEDGERS } from './ledger-client.js';
export type { LedgerChannelWire } from './ledger-client.js';
export { payFetch, PaymentError, facilitatorSigners } from './pay-fetch.js';
export type { PaidResponse, PayFetchOptions } from './pay-fetch.js';
export type { SignerChoice, SignerForOptions } from './batch-payment.js';
export { keypairFromSecret, randomKeypair } from '@svc/core';
export type { Keypair } from '@svc/core';
export { streamPaid } from './stream-paid.js';
export type { StreamEvent, StreamPaidOptions, StreamPaidResult } from './stream-paid.js';
export { SseParser } from './sse.js';
export type { SseEvent } from './sse.js';
export { StellarChannelClient } from './stellar-client.js';
export type { StellarChannelClientOptions } from './stellar-client.js';
export type { AccountPolicy, SmartAccountSigner, TxSigner } from './ledger-client.js';
export { reportTransaction } from './report.js';
export type { ReportAnswer, ReportOptions } from './report.js';
