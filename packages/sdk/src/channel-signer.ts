// Signs a channel's vouchers and keeps its books: the cumulative amount only grows and never
// exceeds the deposit (spec, Protocol constraints). One payment at a time per channel: vouchers
// of one channel racing each other would make the later one overpay or the earlier one fail.
//
// Under x402 `batch-settlement` the same books read as what was charged: a voucher is a ceiling,
// charged + price, and a seller may charge less than the price, so the charged total can be below
// what was signed. rebase() and recognize() are what a buyer needs to take a facilitator's proven
// account of the channel, backwards too.
import { formatUnits, fromHex, keypairFromSecret, refundContext, toHex, voucherContext } from '@svc/core';
import type { ChannelPayload, Keypair, VoucherContext } from '@svc/core';

export class ChannelLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChannelLimitError';
  }
}

export interface ChannelSignerOptions {
  channelId: bigint;
  deposit: bigint;
  /** The channel's own voucher key (chosen at open). */
  voucherKey: Keypair;
  networkPassphrase: string;
  channelContract: string;
  network: string;
  payee: string;
  asset: string;
  /** The last cumulative the facilitator accepted (0 for a new channel). */
  cumulative?: bigint;
  /** The highest cumulative ever signed for the channel (default: `cumulative`). */
  signed?: bigint;
  /**
   * The account the channel was opened bound to as its receiver authorizer (batch-settlement: the
   * facilitator's key), if any.
   */
  receiverAuthorizer?: string;
}

/**
 * A `batch-settlement` deposit the next payment carries: the payer's opening of this channel (or a
 * top-up of it), signed and not sent; the facilitator submits it (wallet.ts, `byDeposit`).
 */
export interface PendingDeposit {
  /** What the transaction deposits. */
  amount: bigint;
  /** The signed local-ledger transaction (channel.open or channel.top_up). */
  transaction: Record<string, unknown>;
  /** Its hash: the deposit response's `transaction`. */
  hash: string;
}

export interface SignerState {
  channelId: string;
  deposit: string;
  cumulative: string;
  voucherSecret: string;
  networkPassphrase: string;
  channelContract: string;
  network: string;
  payee: string;
  asset: string;
  /** The highest cumulative ever signed (absent in files written before it was kept: `cumulative`). */
  signed?: string;
  /** The channel's receiver authorizer (absent: none). */
  receiverAuthorizer?: string;
}

export class ChannelSigner {
  readonly channelId: bigint;
  readonly network: string;
  readonly payee: string;
  readonly asset: string;
  readonly channelContract: string;
  /** The receiver authorizer the channel is bound to, or null (a `channel`-scheme channel). */
  readonly receiverAuthorizer: string | null;
  private depositValue: bigint;
  private accepted: bigint;
  private signedMax: bigint;
  private readonly signedListeners: (() => void)[] = [];
  /** In memory only: a wallet that restarts finds an opening that never landed absent from the ledger, and drops it. */
  private pending: { deposit: PendingDeposit; before: bigint } | null = null;
  private readonly voucherKey: Keypair;
  private readonly context: VoucherContext;
  private lock: Promise<unknown> = Promise.resolve();

  constructor(o: ChannelSignerOptions) {
    this.channelId = o.channelId;
    this.network = o.network;
    this.payee = o.payee;
    this.asset = o.asset;
    this.channelContract = o.channelContract;
    this.receiverAuthorizer = o.receiverAuthorizer ?? null;
    this.depositValue = o.deposit;
    this.accepted = o.cumulative ?? 0n;
    this.signedMax = o.signed !== undefined && o.signed > this.accepted ? o.signed : this.accepted;
    this.voucherKey = o.voucherKey;
    this.context = voucherContext(o.networkPassphrase, o.channelContract);
    if (this.accepted > this.depositValue) throw new ChannelLimitError('cumulative exceeds the deposit');
  }

  /** The last cumulative the facilitator accepted, as far as this signer knows. */
  get cumulative(): bigint {
    return this.accepted;
  }

  /**
   * The highest cumulative this signer has signed. No facilitator can have accepted more, so no
   * account of the channel that says it did is believed (confirm()).
   */
  get signed(): bigint {
    return this.signedMax;
  }

  /**
   * Runs `listener` each time `signed` rises: the signer signs above its highest (before the
   * voucher is returned), or recognizes one of its own vouchers above it.
   */
  onSigned(listener: () => void): void {
    this.signedListeners.push(listener);
  }

  get deposit(): bigint {
    return this.depositValue;
  }

  get remaining(): bigint {
    return this.depositValue - this.accepted;
  }

  /** Signs a voucher for exactly `cumulative`; refuses to exceed the deposit or to go backwards. */
  sign(cumulative: bigint): ChannelPayload {
    if (cumulative > this.depositValue) {
      throw new ChannelLimitError(
        `channel ${this.channelId}: ${cumulative} would exceed the deposit ${this.depositValue}; top up or open a new channel`,
      );
    }
    if (cumulative <= 0n) throw new ChannelLimitError('a voucher must be for a positive cumulative amount');
    if (cumulative > this.signedMax) this.raiseSigned(cumulative);
    return {
      channelId: this.channelId.toString(),
      cumulative: formatUnits(cumulative),
      signature: toHex(this.context.sign(this.voucherKey, this.channelId, cumulative)),
    };
  }

  /** The voucher that adds `amount` to what was accepted. */
  next(amount: bigint): ChannelPayload {
    if (amount <= 0n) throw new ChannelLimitError('the amount owed must be positive');
    return this.sign(this.accepted + amount);
  }

  /**
   * Records that the facilitator accepted `cumulative` (never moves backwards). More than this
   * signer ever signed cannot have been accepted: that account is refused (ChannelLimitError), so
   * that a seller or facilitator saying so cannot make the next voucher pay for it.
   */
  confirm(cumulative: bigint): void {
    if (cumulative > this.signedMax)
      throw new ChannelLimitError(
        `channel ${this.channelId}: ${cumulative} is said to be accepted, but this signer never signed more than ${this.signedMax}`,
      );
    if (cumulative > this.accepted) this.accepted = cumulative;
  }

  /**
   * Sets what was accepted (under batch-settlement: what was charged) to exactly `charged`,
   * backwards as well as forwards: a facilitator's account of the channel, once checked. Only
   * within 0 … min(signed, deposit): no account above what this signer signed is believed.
   */
  rebase(charged: bigint): void {
    const most = this.signedMax < this.depositValue ? this.signedMax : this.depositValue;
    if (charged < 0n || charged > most)
      throw new ChannelLimitError(
        `channel ${this.channelId}: ${charged} is said to be charged, but this signer signed no more than ${most}`,
      );
    this.accepted = charged;
  }

  /**
   * Whether `signatureHex` is this channel's voucher for `amount`, made with its own voucher key.
   * If it is, the key did sign `amount`, and `signed` rises to it: a wallet file put back to an
   * older copy forgets the vouchers signed after that copy, and this is how it learns them again.
   */
  recognize(amount: bigint, signatureHex: string): boolean {
    let signature: Uint8Array;
    try {
      signature = fromHex(signatureHex, 64);
    } catch {
      return false;
    }
    if (amount <= 0n || !this.context.verify(this.voucherKey.publicKey, this.channelId, amount, signature))
      return false;
    if (amount > this.signedMax) this.raiseSigned(amount);
    return true;
  }

  private raiseSigned(amount: bigint): void {
    this.signedMax = amount;
    for (const listener of this.signedListeners) listener();
  }

  /** The deposit the next payment carries, if one is on its way (not yet known on the ledger). */
  get pendingDeposit(): PendingDeposit | null {
    return this.pending?.deposit ?? null;
  }

  /**
   * Sends `deposit` with the next payment. The deposit counts at once (`depositAfter`), since the
   * voucher riding with it is judged only once it landed.
   */
  depositWith(deposit: PendingDeposit, depositAfter: bigint): void {
    this.pending = { deposit, before: this.depositValue };
    if (depositAfter > this.depositValue) this.depositValue = depositAfter;
  }

  /** The deposit is on the ledger (a paid answer to the payment that carried it). */
  depositLanded(): void {
    this.pending = null;
  }

  /** The deposit was refused: the channel's deposit is what it was before it. */
  depositRefused(): void {
    if (!this.pending) return;
    const { before } = this.pending;
    this.pending = null;
    if (before >= this.accepted) this.depositValue = before;
  }

  /** After a top-up on the ledger. */
  setDeposit(deposit: bigint): void {
    if (deposit > this.depositValue) this.depositValue = deposit;
  }

  /**
   * A cooperative refund of `amount` (null: everything not charged) under the channel's refund
   * nonce, signed with the voucher key (core batch-refund.ts): 128 hex characters.
   */
  signRefund(amount: bigint | null, nonce: bigint): string {
    return refundContext(this.context.networkPassphrase, this.channelContract).sign(
      this.voucherKey,
      this.channelId,
      amount,
      nonce,
    );
  }

  /** After a refund on the ledger: the deposit went down to `deposit` (never below what was accepted). */
  refundedTo(deposit: bigint): void {
    if (deposit < this.depositValue) this.depositValue = deposit > this.accepted ? deposit : this.accepted;
  }

  /** Runs `fn` with this channel to itself (one voucher in flight at a time). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /** For a wallet file. Contains the voucher secret: store it like a private key. */
  toState(): SignerState {
    return {
      channelId: this.channelId.toString(),
      deposit: this.depositValue.toString(),
      cumulative: this.accepted.toString(),
      signed: this.signedMax.toString(),
      voucherSecret: this.voucherKey.secret(),
      networkPassphrase: this.context.networkPassphrase,
      channelContract: this.channelContract,
      network: this.network,
      payee: this.payee,
      asset: this.asset,
      ...(this.receiverAuthorizer === null ? {} : { receiverAuthorizer: this.receiverAuthorizer }),
    };
  }

  static fromState(s: SignerState): ChannelSigner {
    return new ChannelSigner({
      channelId: BigInt(s.channelId),
      deposit: BigInt(s.deposit),
      cumulative: BigInt(s.cumulative),
      ...(s.signed === undefined ? {} : { signed: BigInt(s.signed) }),
      voucherKey: keypairFromSecret(s.voucherSecret),
      networkPassphrase: s.networkPassphrase,
      channelContract: s.channelContract,
      network: s.network,
      payee: s.payee,
      asset: s.asset,
      ...(s.receiverAuthorizer === undefined ? {} : { receiverAuthorizer: s.receiverAuthorizer }),
    });
  }
}
