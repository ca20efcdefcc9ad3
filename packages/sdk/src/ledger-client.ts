// A buyer's client of the local ledger's HTTP routes (docs/protocol.md#the-local-ledger): faucet, transfers, channels
// (open, top up, close), smart accounts (create, set_policy, freeze), DEX swaps and the credit pool
// (deposit, withdraw, credit lines, liquidation, the pool's state). Transactions are signed here;
// sequence numbers are read from the ledger.
//
// Every transaction has a source and a signing key. A G… account signs for itself (pass its
// Keypair); a smart account (C…) is the source of its own transactions, signed by its agent key
// (held to the policy) or its owner key (not limited): pass `{ account, signer }`.
//
//   const ledger = new LocalLedgerClient('http://127.0.0.1:4021/ledger');
//   const { address } = await ledger.createAccount({ owner, policy: { agentKey: agent.address, perTxCap: 10_000_000n, dailyCap: 50_000_000n, payees: [seller], expiresLedger } });
//   await ledger.openChannel({ payer: { account: address, signer: agent }, payee: seller, deposit: 10_000_000n, voucherKey });
import {
  channelIdOf,
  channelToWire,
  globalFetch,
  LedgerError,
  LedgerHttpClient,
  policyToWire,
  txHash,
} from '@svc/core';
import type {
  AccountPolicy,
  Keypair,
  LedgerAccount,
  LedgerChannelWire,
  LedgerInfo,
  LedgerOpArgsWire,
  LedgerOpName,
  PoolState,
  SignedLedgerTx,
  TxResult,
} from '@svc/core';

export type { AccountPolicy, LedgerChannelWire } from '@svc/core';

/** A default channel lifetime: about one day of 5-second ledgers. */
export const DEFAULT_CHANNEL_LEDGERS = 17_280;

/** A smart account acting as the source of a transaction, signed by its agent or owner key. */
export interface SmartAccountSigner {
  account: string;
  signer: Keypair;
}

/** Who a transaction is from: a G… account's own Keypair, or a smart account and a key of it. */
export type TxSigner = Keypair | SmartAccountSigner;

function sourceOf(from: TxSigner): { source: string; signer: Keypair } {
  return 'account' in from ? { source: from.account, signer: from.signer } : { source: from.address, signer: from };
}

export class LocalLedgerClient {
  /** The requests themselves, and one submission per source at a time. */
  readonly #http: LedgerHttpClient;

  /** `baseUrl` is the ledger's root, e.g. http://127.0.0.1:4020/ledger. */
  constructor(
    readonly baseUrl: string,
    fetchImpl: typeof fetch = globalFetch,
  ) {
    this.#http = new LedgerHttpClient({ url: baseUrl, fetch: fetchImpl });
  }

  info(): Promise<LedgerInfo> {
    return this.#http.info();
  }

  async faucet(address: string, amount?: bigint): Promise<TxResult> {
    return this.checked(await this.#http.faucet(address, amount));
  }

  /** The account's seq, balances and, for a smart account, its policy, freeze and today's spend. */
  account(address: string): Promise<LedgerAccount> {
    return this.#http.account(address);
  }

  /** The balance of `asset` (default: the ledger's asset). */
  async balance(address: string, asset?: string): Promise<bigint> {
    const token = asset ?? (await this.cachedInfo()).contracts.asset;
    return (await this.account(address)).balances.find((b) => b.asset === token)?.amount ?? 0n;
  }

  async channel(id: bigint): Promise<LedgerChannelWire | null> {
    // The channel as the wire carries it (decimal strings), checked and normalised by the schema.
    const channel = await this.#http.channel(id);
    return channel === null ? null : channelToWire(channel);
  }

  /** Signs and submits one operation from `from`; throws LedgerError when refused or FAILED. */
  async submit(from: TxSigner, op: string, args: Record<string, unknown>): Promise<TxResult> {
    const { source, signer } = sourceOf(from);
    return this.submitAs(source, signer, op, args);
  }

  /** One of the ledger's own ops, its args typed by @svc/core's schema of them (ledger-ops.ts). */
  private op<K extends LedgerOpName>(from: TxSigner, op: K, args: LedgerOpArgsWire<K>): Promise<TxResult> {
    return this.submit(from, op, args);
  }

  /** Submits as `source` signed by `signer` (a smart account with its agent or owner key). */
  async submitAs(source: string, signer: Keypair, op: string, args: Record<string, unknown>): Promise<TxResult> {
    return this.checked(await this.#http.submitAs(source, signer, op, args));
  }

  async transfer(o: { from: TxSigner; to: string; amount: bigint }): Promise<{ tx: string }> {
    const res = await this.op(o.from, 'transfer', { to: o.to, amount: o.amount.toString() });
    return { tx: res.hash };
  }

  /** Creates a smart account owned by `owner` (who submits it); its address is in the result. */
  async createAccount(o: { owner: Keypair; policy: AccountPolicy | null }): Promise<{ address: string; tx: string }> {
    const res = await this.op(o.owner, 'account.create', { owner: o.owner.address, policy: policyToWire(o.policy) });
    return { address: String(res.result?.['address']), tx: res.hash };
  }

  /** Replaces the policy (null: no agent); submitted by the owner as itself. */
  async setPolicy(o: { owner: Keypair; account: string; policy: AccountPolicy | null }): Promise<{ tx: string }> {
    const res = await this.op(o.owner, 'account.set_policy', { account: o.account, policy: policyToWire(o.policy) });
    return { tx: res.hash };
  }

  /** Freezes (or unfreezes) the agent of `account`; submitted by the owner as itself. */
  async freeze(o: { owner: Keypair; account: string; frozen: boolean }): Promise<{ tx: string }> {
    const res = await this.op(o.owner, 'account.freeze', { account: o.account, frozen: o.frozen });
    return { tx: res.hash };
  }

  /** Sells `amount` of `sell` (an asset contract: info().contracts.asset or .xlm) to the DEX pool. */
  async swap(o: {
    from: TxSigner;
    sell: string;
    amount: bigint;
  }): Promise<{ sold: bigint; bought: bigint; boughtAsset: string; tx: string }> {
    const res = await this.op(o.from, 'dex.swap', { sell: o.sell, amount: o.amount.toString() });
    return {
      sold: o.amount,
      bought: BigInt(String(res.result?.['bought'])),
      boughtAsset: String(res.result?.['boughtAsset']),
      tx: res.hash,
    };
  }

  /**
   * The id a channel opened with `voucherKey` gets on this ledger (the contract derives it from
   * the key): known before the opening is sent, so a voucher can be signed for it at once.
   */
  async channelIdOf(voucherKey: Keypair): Promise<bigint> {
    const info = await this.cachedInfo();
    return channelIdOf(info.passphrase, info.contracts.channel, voucherKey.publicKey);
  }

  /**
   * Opens a channel under `voucherKey` (one key, one channel: a key already used fails with 27).
   * `receiverAuthorizer` (a G… account, typically the facilitator's) may then claim less than a
   * voucher's amount and refund the unclaimed deposit to the payer.
   */
  async openChannel(o: {
    payer: TxSigner;
    payee: string;
    deposit: bigint;
    voucherKey: Keypair;
    expiryLedger?: number;
    receiverAuthorizer?: string;
  }): Promise<{ channelId: bigint; tx: string; expiryLedger: number }> {
    const info = await this.info();
    const expiryLedger = o.expiryLedger ?? info.latestLedger + DEFAULT_CHANNEL_LEDGERS;
    const channelId = channelIdOf(info.passphrase, info.contracts.channel, o.voucherKey.publicKey);
    const res = await this.op(o.payer, 'channel.open', {
      payee: o.payee,
      deposit: o.deposit.toString(),
      voucherKey: o.voucherKey.publicKeyHex,
      expiryLedger,
      ...(o.receiverAuthorizer !== undefined ? { receiverAuthorizer: o.receiverAuthorizer } : {}),
    });
    const opened = String(res.result?.['channelId']);
    if (opened !== channelId.toString())
      throw new LedgerError(
        `the ledger opened channel ${opened}, not ${channelId}, the id its voucher key derives: it does not run the channel contract this client knows (tx ${res.hash})`,
        502,
        undefined,
        res.hash,
      );
    return { channelId, tx: res.hash, expiryLedger };
  }

  /**
   * The opening `openChannel` would submit, signed and not sent: a `batch-settlement` deposit
   * payload carries it, and the facilitator submits it at its own fees. Signed for the source's next
   * sequence number, so another transaction of the source sent first makes it stale (refused).
   */
  async signOpenChannel(o: {
    payer: TxSigner;
    payee: string;
    deposit: bigint;
    voucherKey: Keypair;
    expiryLedger?: number;
    receiverAuthorizer?: string;
  }): Promise<{ channelId: bigint; tx: SignedLedgerTx; hash: string; expiryLedger: number }> {
    const info = await this.info();
    const expiryLedger = o.expiryLedger ?? info.latestLedger + DEFAULT_CHANNEL_LEDGERS;
    const channelId = channelIdOf(info.passphrase, info.contracts.channel, o.voucherKey.publicKey);
    const args: LedgerOpArgsWire<'channel.open'> = {
      payee: o.payee,
      deposit: o.deposit.toString(),
      voucherKey: o.voucherKey.publicKeyHex,
      expiryLedger,
      ...(o.receiverAuthorizer !== undefined ? { receiverAuthorizer: o.receiverAuthorizer } : {}),
    };
    const signed = await this.signNext(o.payer, 'channel.open', args);
    return { channelId, ...signed, expiryLedger };
  }

  /** A top-up signed and not sent, for a deposit payload (see signOpenChannel). */
  async signTopUp(o: {
    payer: TxSigner;
    channelId: bigint;
    amount: bigint;
    expiryLedger?: number;
  }): Promise<{ tx: SignedLedgerTx; hash: string }> {
    const args: LedgerOpArgsWire<'channel.top_up'> = {
      channelId: o.channelId.toString(),
      amount: o.amount.toString(),
      ...(o.expiryLedger === undefined ? {} : { expiryLedger: o.expiryLedger }),
    };
    return this.signNext(o.payer, 'channel.top_up', args);
  }

  private async signNext(
    from: TxSigner,
    op: string,
    args: Record<string, unknown>,
  ): Promise<{ tx: SignedLedgerTx; hash: string }> {
    const { source, signer } = sourceOf(from);
    const tx = await this.#http.sign(source, signer, op, args);
    return { tx, hash: txHash((await this.cachedInfo()).passphrase, tx) };
  }

  async topUp(o: {
    payer: TxSigner;
    channelId: bigint;
    amount: bigint;
    expiryLedger?: number;
  }): Promise<{ deposit: bigint; expiryLedger: number; tx: string }> {
    const res = await this.op(o.payer, 'channel.top_up', {
      channelId: o.channelId.toString(),
      amount: o.amount.toString(),
      ...(o.expiryLedger === undefined ? {} : { expiryLedger: o.expiryLedger }),
    });
    return {
      deposit: BigInt(String(res.result?.['deposit'])),
      expiryLedger: Number(res.result?.['expiryLedger']),
      tx: res.hash,
    };
  }

  async closeChannel(o: { signer: TxSigner; channelId: bigint }): Promise<{ refunded: bigint; tx: string }> {
    const res = await this.op(o.signer, 'channel.close', { channelId: o.channelId.toString() });
    return { refunded: BigInt(String(res.result?.['refunded'])), tx: res.hash };
  }

  /** The credit pool: size, share price, utilization, open lines with health, positions; null when the ledger has none. */
  pool(): Promise<PoolState | null> {
    return this.#http.pool();
  }

  /** Invests `amount` in the pool; the shares are `from`'s (a smart account's agent deposit counts against its caps). */
  async poolDeposit(o: { from: TxSigner; amount: bigint }): Promise<{ shares: bigint; tx: string }> {
    const res = await this.op(o.from, 'pool.deposit', { amount: o.amount.toString() });
    return { shares: BigInt(String(res.result?.['shares'])), tx: res.hash };
  }

  /** Burns `shares` for their value at the share price, from the pool's idle funds. */
  async poolWithdraw(o: { from: TxSigner; shares: bigint }): Promise<{ amount: bigint; tx: string }> {
    const res = await this.op(o.from, 'pool.withdraw', { shares: o.shares.toString() });
    return { amount: BigInt(String(res.result?.['amount'])), tx: res.hash };
  }

  /**
   * Opens a credit line of `limit` to the smart account `account`, asked by its owner (who submits
   * it as itself). The account must already hold enough of its own for the line to start healthy.
   */
  async openLine(o: {
    owner: Keypair;
    account: string;
    limit: bigint;
  }): Promise<{ limit: bigint; fee: bigint; debt: bigint; tx: string }> {
    const res = await this.op(o.owner, 'pool.open_line', { account: o.account, limit: o.limit.toString() });
    const amount = (key: string) => BigInt(String(res.result?.[key]));
    return { limit: amount('limit'), fee: amount('fee'), debt: amount('debt'), tx: res.hash };
  }

  /**
   * Repays the whole debt of `account`'s line from the account: `from` is its owner's Keypair, or
   * `{ account, signer }` with the owner or agent key (an agent is held to the policy's caps).
   */
  async closeLine(o: { from: TxSigner; account: string }): Promise<{ repaid: bigint; tx: string }> {
    const res = await this.op(o.from, 'pool.close_line', { account: o.account });
    return { repaid: BigInt(String(res.result?.['repaid'])), tx: res.hash };
  }

  /** Liquidates `account`'s line (anyone may, while it is liquidatable): what the pool seized and the shortfall. */
  async liquidate(o: { from: TxSigner; account: string }): Promise<{ seized: bigint; shortfall: bigint; tx: string }> {
    const res = await this.op(o.from, 'pool.liquidate', { account: o.account });
    return {
      seized: BigInt(String(res.result?.['seized'])),
      shortfall: BigInt(String(res.result?.['shortfall'])),
      tx: res.hash,
    };
  }

  private cachedInfo(): Promise<LedgerInfo> {
    return this.#http.cachedInfo();
  }

  private checked(res: TxResult): TxResult {
    if (res.status === 'FAILED')
      throw new LedgerError(
        `transaction failed with code ${res.code ?? '?'}${res.message ? `: ${res.message}` : ''}`,
        200,
        res.code,
        res.hash,
      );
    return res;
  }
}
