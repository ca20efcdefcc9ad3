// @svc/sdk: the buyer's side. In Node, all of it; in a browser, all but the Wallet (browser.ts).
export * from './browser.js';
export { Wallet } from './wallet.js';
export type { WalletOptions } from './wallet.js';
