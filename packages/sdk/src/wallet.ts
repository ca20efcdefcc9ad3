// A buyer's wallet on the local ledger: one account key and a channel per seller, opened on first
// need (funded from the faucet when the balance is short) and, with a file, kept across runs.
// The file holds secrets: it is written with mode 0600.
//
// x402 `batch-settlement` pays from channels bound to a receiver authorizer (the facilitator's
// key, which may claim less than a voucher's ceiling). Such a channel is opened, and picked, only
// when asked for that authorizer; a `channel`-scheme payment never gets one, nor the reverse: the
// two schemes read a channel's books differently.
import fs from 'node:fs';
import path from 'node:path';
import {
  BATCH_SCHEME,
  BatchRefundError,
  BatchRequirementsSchema,
  channelTermsOf,
  displayAmount,
  keypairFromSecret,
  owedPerPayment,
  randomKeypair,
  requestBatchRefund,
  safeParse,
} from '@svc/core';
import type { BatchRequirements, Keypair, PaymentRequirements, RefundResult } from '@svc/core';
import type { SignerForOptions } from './batch-payment.js';
import { ChannelSigner } from './channel-signer.js';
import type { SignerState } from './channel-signer.js';
import { DEFAULT_CHANNEL_LEDGERS, LocalLedgerClient } from './ledger-client.js';
import { PaymentError, readTerms } from './pay-fetch.js';

/** How close to its expiry ledger a channel is extended before paying on it: twice the facilitator's
 *  default safety margin (60 ledgers), so that a voucher signed now is not refused as expiring. */
const EXPIRY_MARGIN_LEDGERS = 120;

export interface WalletOptions {
  /** Where to keep the wallet; in memory only when omitted. */
  file?: string;
  fetch?: typeof fetch;
  /** The ledger's base URL; defaults to `<facilitator>/ledger` from the terms. */
  ledgerUrl?: string;
  /**
   * How much to deposit into a new channel: at least the seller's minimum deposit
   * (`extra.minDeposit`) and what the payment needs (default: that minimum).
   */
  deposit?: (terms: PaymentRequirements) => bigint;
  /**
   * The most a new channel may lock up. The seller sets its minimum deposit, and the deposit is
   * what a buyer can lose to it: a channel that would need more is not opened (PaymentError
   * `DEPOSIT_ABOVE_LIMIT`). Unset: no limit.
   */
  maxDeposit?: bigint;
  /** Called with a line of progress (opening a channel, using the faucet). */
  log?: (line: string) => void;
}

interface WalletFile {
  version: 1;
  buyer: string;
  channels: SignerState[];
}

export class Wallet {
  /** signerFor, one call at a time: calls at once would each open a channel, racing on the ledger. */
  private choosing: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly buyer: Keypair,
    private readonly signers: ChannelSigner[],
    private readonly options: WalletOptions,
  ) {
    for (const signer of signers) this.keep(signer);
  }

  static open(options: WalletOptions = {}): Wallet {
    if (options.file && fs.existsSync(options.file)) {
      const data = JSON.parse(fs.readFileSync(options.file, 'utf8')) as WalletFile;
      return new Wallet(
        keypairFromSecret(data.buyer),
        data.channels.map((c) => ChannelSigner.fromState(c)),
        options,
      );
    }
    const wallet = new Wallet(randomKeypair(), [], options);
    wallet.save();
    return wallet;
  }

  get channels(): readonly ChannelSigner[] {
    return this.signers;
  }

  /**
   * A channel able to pay these terms `count` times, opening one if none fits; bound to
   * `options.receiverAuthorizer` when given.
   */
  signerFor(terms: PaymentRequirements, count = 1n, options: SignerForOptions = {}): Promise<ChannelSigner> {
    const authorizer = options.receiverAuthorizer ?? null;
    const byDeposit = authorizer !== null && options.byDeposit === true;
    const chosen = this.choosing.then(() => this.choose(terms, count, authorizer, byDeposit));
    this.choosing = chosen.catch(() => undefined);
    return chosen;
  }

  private async choose(
    terms: PaymentRequirements,
    count: bigint,
    authorizer: string | null,
    byDeposit: boolean,
  ): Promise<ChannelSigner> {
    const owed = owedPerPayment(terms);
    const ledger = this.ledgerFor(terms);
    let exhausted: ChannelSigner | null = null;
    for (const signer of this.signers) {
      if (!fits(signer, terms) || signer.receiverAuthorizer !== authorizer) continue;
      // Its deposit goes with the next payment (a payment before it may still be carrying it).
      if (byDeposit && signer.pendingDeposit && signer.remaining >= owed) return signer;
      const onLedger = await ledger.channel(signer.channelId);
      if (!(onLedger?.open && onLedger.payee === terms.payTo && onLedger.receiverAuthorizer === authorizer)) {
        this.forget(signer); // the ledger was reset, the channel closed, or its opening never landed
        continue;
      }
      // The ledger's deposit: a top-up whose answer was lost (or refused after it landed) counts.
      signer.setDeposit(BigInt(onLedger.deposit));
      if (signer.remaining >= owed) return this.unexpired(signer, terms, onLedger.expiryLedger, owed * count, ledger);
      exhausted ??= signer;
    }
    if (byDeposit && exhausted) return this.topUpByDeposit(exhausted, terms, owed * count, ledger);
    // A channel with less left than a payment is topped up, not left behind a new one: what is
    // left in it stays usable instead of locked until the payer may close it.
    if (exhausted) return this.topUp(exhausted, terms, owed * count, ledger);
    return byDeposit
      ? this.openByDeposit(terms, owed * count, ledger, authorizer!)
      : this.open(terms, owed * count, ledger, authorizer);
  }

  /** An exhausted channel's top-up, sent to the ledger now (with a later expiry, as an opening's). */
  private async topUp(
    signer: ChannelSigner,
    terms: PaymentRequirements,
    needed: bigint,
    ledger: LocalLedgerClient,
  ): Promise<ChannelSigner> {
    const amount = this.depositFor(terms, needed);
    await this.fund(ledger, amount, terms);
    const latest = (await ledger.info()).latestLedger;
    const left = signer.remaining;
    const topped = await ledger.topUp({
      payer: this.buyer,
      channelId: signer.channelId,
      amount,
      expiryLedger: latest + DEFAULT_CHANNEL_LEDGERS,
    });
    signer.setDeposit(topped.deposit);
    this.options.log?.(
      `channel ${signer.channelId} had ${left} left, less than a payment of ${owedPerPayment(terms)}: topped it up with ${amount} (tx ${topped.tx.slice(0, 12)}…)`,
    );
    this.save();
    return signer;
  }

  /** What a new channel (or a top-up) deposits: the wanted amount, at least the seller's minimum and what is needed. */
  private depositFor(terms: PaymentRequirements, needed: bigint): bigint {
    const minimum = BigInt(terms.extra.minDeposit);
    const wanted = this.options.deposit?.(terms) ?? minimum;
    const deposit = [wanted, minimum, needed].reduce((a, b) => (a > b ? a : b));
    if (this.options.maxDeposit !== undefined && deposit > this.options.maxDeposit)
      throw new PaymentError(
        `a channel to ${terms.payTo} needs a deposit of ${deposit} (the seller's minimum is ${minimum}), above this wallet's limit of ${this.options.maxDeposit}`,
        'DEPOSIT_ABOVE_LIMIT',
      );
    return deposit;
  }

  /** At least `amount` on the buyer's account, from the faucet if short; what to do when even that is not enough. */
  private async fund(ledger: LocalLedgerClient, amount: bigint, terms: PaymentRequirements): Promise<void> {
    if ((await ledger.balance(this.buyer.address)) >= amount) return;
    this.options.log?.(`funding ${this.buyer.address} from the faucet`);
    await ledger.faucet(this.buyer.address);
    const held = await ledger.balance(this.buyer.address);
    if (held < amount)
      throw new PaymentError(
        `a channel to ${terms.payTo} needs a deposit of ${displayAmount(amount)} (the seller's minimum is ${displayAmount(BigInt(terms.extra.minDeposit))}), and ${this.buyer.address} holds ${displayAmount(held)} of the asset ${terms.asset}, a faucet grant included: fund ${this.buyer.address} with at least ${displayAmount(amount - held)} more and pay again`,
        'INSUFFICIENT_FUNDS',
      );
  }

  /** A channel whose opening the next payment carries (a deposit payload): nothing is sent to the ledger here. */
  private async openByDeposit(
    terms: PaymentRequirements,
    needed: bigint,
    ledger: LocalLedgerClient,
    authorizer: string,
  ): Promise<ChannelSigner> {
    const info = await ledger.info();
    const deposit = this.depositFor(terms, needed);
    await this.fund(ledger, deposit, terms);
    const voucherKey = randomKeypair();
    const opening = await ledger.signOpenChannel({
      payer: this.buyer,
      payee: terms.payTo,
      deposit,
      voucherKey,
      receiverAuthorizer: authorizer,
    });
    this.options.log?.(
      `channel ${opening.channelId} to ${terms.payTo} opens with the next payment: a deposit of ${deposit}, bound to the receiver authorizer ${authorizer}, the facilitator paying its fees`,
    );
    const signer = new ChannelSigner({
      channelId: opening.channelId,
      deposit: 0n,
      voucherKey,
      networkPassphrase: info.passphrase,
      channelContract: info.contracts.channel,
      network: info.network,
      payee: terms.payTo,
      asset: info.contracts.asset,
      receiverAuthorizer: authorizer,
    });
    signer.depositWith({ amount: deposit, transaction: { ...opening.tx }, hash: opening.hash }, deposit);
    this.signers.push(signer);
    this.keep(signer);
    this.save();
    return signer;
  }

  /** An exhausted channel's top-up, carried by the next payment (a deposit payload). */
  private async topUpByDeposit(
    signer: ChannelSigner,
    terms: PaymentRequirements,
    needed: bigint,
    ledger: LocalLedgerClient,
  ): Promise<ChannelSigner> {
    const amount = this.depositFor(terms, needed);
    await this.fund(ledger, amount, terms);
    const topUp = await ledger.signTopUp({ payer: this.buyer, channelId: signer.channelId, amount });
    this.options.log?.(`channel ${signer.channelId} is topped up by ${amount} with the next payment`);
    signer.depositWith({ amount, transaction: { ...topUp.tx }, hash: topUp.hash }, signer.deposit + amount);
    this.save();
    return signer;
  }

  /**
   * A channel at or near its expiry ledger takes no voucher (the facilitator refuses those within its
   * safety margin), but what is left in it is the buyer's. Opening a new channel beside it would leave
   * that money locked until the payer may close the old one; a top-up with a later expiry (the
   * contract allows extending it, also after expiry, while the channel is open) keeps it usable.
   */
  private async unexpired(
    signer: ChannelSigner,
    terms: PaymentRequirements,
    expiryLedger: number,
    needed: bigint,
    ledger: LocalLedgerClient,
  ): Promise<ChannelSigner> {
    const latest = (await ledger.info()).latestLedger;
    if (expiryLedger - latest > EXPIRY_MARGIN_LEDGERS) return signer;
    const amount = needed > 0n ? needed : 1n;
    await this.fund(ledger, amount, terms);
    const extended = await ledger.topUp({
      payer: this.buyer,
      channelId: signer.channelId,
      amount,
      expiryLedger: latest + DEFAULT_CHANNEL_LEDGERS,
    });
    signer.setDeposit(extended.deposit);
    this.options.log?.(
      `channel ${signer.channelId} ${expiryLedger <= latest ? 'expired' : 'was about to expire'} at ledger ${expiryLedger} with ${signer.remaining - amount} left: topped it up with ${amount} and extended it to ledger ${extended.expiryLedger} (tx ${extended.tx.slice(0, 12)}…)`,
    );
    this.save();
    return signer;
  }

  /**
   * The channel this wallet already has for these terms and receiver authorizer, open on the
   * ledger; null when none (nothing is opened).
   */
  async channelFor(terms: PaymentRequirements, options: SignerForOptions = {}): Promise<ChannelSigner | null> {
    const authorizer = options.receiverAuthorizer ?? null;
    const ledger = this.ledgerFor(terms);
    for (const signer of this.signers) {
      if (!fits(signer, terms) || signer.receiverAuthorizer !== authorizer) continue;
      const onLedger = await ledger.channel(signer.channelId);
      if (onLedger?.open && onLedger.payee === terms.payTo && onLedger.receiverAuthorizer === authorizer) return signer;
    }
    return null;
  }

  /**
   * A cooperative refund of the channel that pays `url`'s seller under batch-settlement: `amount`
   * back to the buyer at once, or everything not charged when omitted. Asks the seller's terms
   * (a 402 of `url`), then the facilitator they name. Throws BatchRefundError when refused.
   */
  async refund(url: string, options: { amount?: bigint } = {}): Promise<RefundResult & { channelId: bigint }> {
    const doFetch = this.options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const res = await doFetch(url);
    if (res.status !== 402)
      throw new BatchRefundError('terms', `${url} answered ${res.status}, not 402: it names no seller terms to refund`);
    const offered = (await readTerms(res)).accepts.find((a) => (a as { scheme?: unknown }).scheme === BATCH_SCHEME);
    const parsed = safeParse(BatchRequirementsSchema, offered);
    if (!parsed.success)
      throw new BatchRefundError(
        'terms',
        `${url} offers no batch-settlement terms: only such channels can be refunded`,
      );
    const terms: BatchRequirements = parsed.data;
    const signer = await this.channelFor(channelTermsOf(terms), { receiverAuthorizer: terms.extra.receiverAuthorizer });
    if (!signer)
      throw new BatchRefundError(
        'no_channel',
        `this wallet has no open channel to ${terms.payTo} bound to the receiver authorizer ${terms.extra.receiverAuthorizer}`,
      );
    const result = await requestBatchRefund({
      terms,
      channelId: signer.channelId,
      ...(options.amount === undefined ? {} : { amount: options.amount }),
      sign: (amount, nonce) => signer.signRefund(amount, nonce),
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
    });
    signer.refundedTo(BigInt(result.channelState.balance));
    this.save();
    return { ...result, channelId: signer.channelId };
  }

  /** Persists what the signers know (also done each time a signer signs above its highest). */
  save(): void {
    if (!this.options.file) return;
    const mine = this.signers.map((s) => s.toState());
    const data: WalletFile = {
      version: 1,
      buyer: this.buyer.secret(),
      channels: [...mine, ...this.othersOnDisk(mine)],
    };
    fs.mkdirSync(path.dirname(this.options.file), { recursive: true });
    const tmp = `${this.options.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.options.file);
  }

  /**
   * Channels the file holds that this wallet does not: another process using the same file opened
   * them. They are written back as they are, never dropped (their voucher keys are in no other place).
   */
  private othersOnDisk(mine: SignerState[]): SignerState[] {
    let disk: WalletFile;
    try {
      disk = JSON.parse(fs.readFileSync(this.options.file!, 'utf8')) as WalletFile;
    } catch {
      return [];
    }
    if (disk.buyer !== this.buyer.secret() || !Array.isArray(disk.channels)) return [];
    const key = (c: SignerState) => `${c.network} ${c.channelContract} ${c.channelId}`;
    const known = new Set(mine.map(key));
    return disk.channels.filter((c) => !known.has(key(c)));
  }

  private async open(
    terms: PaymentRequirements,
    needed: bigint,
    ledger: LocalLedgerClient,
    authorizer: string | null,
  ): Promise<ChannelSigner> {
    const info = await ledger.info();
    const deposit = this.depositFor(terms, needed);
    await this.fund(ledger, deposit, terms);
    const voucherKey = randomKeypair();
    const opened = await ledger.openChannel({
      payer: this.buyer,
      payee: terms.payTo,
      deposit,
      voucherKey,
      ...(authorizer === null ? {} : { receiverAuthorizer: authorizer }),
    });
    this.options.log?.(
      `opened channel ${opened.channelId} to ${terms.payTo} with a deposit of ${deposit}${authorizer === null ? '' : `, bound to the receiver authorizer ${authorizer}`} (tx ${opened.tx.slice(0, 12)}…)`,
    );
    const signer = new ChannelSigner({
      channelId: opened.channelId,
      deposit,
      voucherKey,
      networkPassphrase: info.passphrase,
      channelContract: info.contracts.channel,
      network: info.network,
      payee: terms.payTo,
      asset: info.contracts.asset,
      ...(authorizer === null ? {} : { receiverAuthorizer: authorizer }),
    });
    this.signers.push(signer);
    this.keep(signer);
    this.save();
    return signer;
  }

  /**
   * Writes the file each time a signer signs above its highest, before the voucher leaves: a later
   * run knows what was signed, and believes no account of the channel above it.
   */
  private keep(signer: ChannelSigner): void {
    signer.onSigned(() => this.save());
  }

  private forget(signer: ChannelSigner): void {
    const i = this.signers.indexOf(signer);
    if (i >= 0) this.signers.splice(i, 1);
  }

  private ledgerFor(terms: PaymentRequirements): LocalLedgerClient {
    return new LocalLedgerClient(this.options.ledgerUrl ?? `${terms.extra.facilitator}/ledger`, this.options.fetch);
  }
}

function fits(signer: ChannelSigner, terms: PaymentRequirements): boolean {
  return (
    signer.payee === terms.payTo &&
    signer.network === terms.network &&
    signer.asset === terms.asset &&
    signer.channelContract === terms.extra.channelContract
  );
}
