// A `batch-settlement` deposit payload: the buyer's first paid request carries its signed opening
// of the channel (or a top-up of an exhausted one), and the facilitator submits it — the fees are
// the facilitator's (`areFeesSponsored: true`) — then judges the voucher as any other, once the
// opening is durable on the ledger (the local ledger answers a submission after its commit).
//
// The transaction is the payer's own, and money: it is checked strictly before it is sent. It
// calls exactly `channel.open` or `channel.top_up` on this ledger's channel contract (the network
// and contract are in what the payer signed), it is signed by its source (a G… account: here,
// strictly; a smart account's key: by the ledger), an opening pays the seller of the terms with a
// deposit of at least their minimum, under the voucher key that the voucher's channel id derives
// from (packages/ledger/docs/channel-contract.md "Channel ids"), bound to this facilitator as receiver authorizer
// (which a charge below the ceiling and a cooperative refund need), and the voucher verifies under
// that key before anything is submitted. A top-up is of the voucher's channel, which pays this
// seller and is bound to this facilitator.
//
// Resent (a retry of the same payload) it opens nothing twice: a transaction the ledger already
// holds is not sent again, and an opening whose channel already exists under the same payer, payee
// and voucher key stands as landed. Only a transaction that is actually submitted counts against the
// sponsored-deposit limits (per payer and per client address: 429 with Retry-After).
//
// Two forms are taken, as the ledger reads them: on the local ledger the signed local-ledger
// transaction (a JSON object, checked here); on Stellar the payer's signed transaction envelope
// (base64 XDR), which the ledger adapter reads strictly and submits inside a fee-bump of which this
// facilitator is the fee source (packages/ledger/src/stellar/deposit-envelope.ts). The payer's
// balance must cover the deposit before anything is sent (insufficient_balance).
import {
  LEDGER_OP_ARGS,
  SignedLedgerTxSchema,
  channelIdOf,
  fromHex,
  isAccountAddress,
  isStrictPublicKey,
  publicKeyFromAccount,
  safeParse,
  txHash,
  verifyLedgerTx,
} from '@svc/core';
import type { BatchCodeName, BatchPayment, BatchRequirements, Keypair, VoucherContext } from '@svc/core';
import { LedgerTxRefused } from '@svc/ledger';
import type { Ledger, LedgerChannel, TxResult } from '@svc/ledger';
import type { ChannelBook } from './channel-book.js';
import type { LatestLedger } from './latest-ledger.js';

/** The sponsored-deposit limits: each resolves null, or the seconds to wait. */
export interface DepositLimits {
  perPayer(payer: string): Promise<number | null>;
  perIp(ip: string): Promise<number | null>;
}

export interface DepositsDeps {
  ledger: Ledger;
  book: ChannelBook;
  latestLedger: LatestLedger;
  /** The ledger's network passphrase and channel contract (what the payer's signature binds). */
  passphrase: string;
  channelContract: string;
  vouchers: VoucherContext;
  /** This facilitator's account: the receiver authorizer a deposit's channel must be bound to. */
  receiverAuthorizer: string;
  /** The key that pays a deposit's fees where the ledger has fees (the fee-bump's source on Stellar). */
  sponsor: Keypair;
  /** The ledger's asset: the one an opening on it holds. */
  asset: string;
  /** Vouchers are refused this close to a channel's expiry: an opening must outlive it. */
  safetyLedgers: number;
  limits: DepositLimits;
  /** One ledger-watcher pass that starts after the call (a top-up's new deposit reaches the store). */
  caughtUp(): Promise<void>;
}

/**
 * Landed: `deposited` is the transaction of this payload that is on the ledger and what it
 * deposited — null when the same opening was already there under another transaction (this payload
 * deposited nothing, and its answer is a voucher's).
 */
export type DepositLanded = { ok: true; payer: string; deposited: { transaction: string; amount: bigint } | null };
export type DepositRefused = {
  ok: false;
  code: BatchCodeName | 'RATE_LIMITED';
  message: string;
  payer?: string;
  retryAfter?: number;
};

/** A deposit transaction as read: its payer, its call, its hash on the ledger and how to send it. */
interface DepositTx {
  source: string;
  op: string;
  args: unknown;
  hash: string;
  send(): Promise<TxResult>;
}

type Checked = { tx: DepositTx; hash: string; amount: bigint; channelId: bigint; opening: boolean };

export class Deposits {
  constructor(private readonly deps: DepositsDeps) {}

  /**
   * Puts the payment's deposit on the ledger (or finds it there), and makes the channel book see
   * it: then the voucher is judged as any other. `ip` is the client's address (null: none known).
   */
  async land(
    payment: BatchPayment,
    terms: BatchRequirements,
    ip: string | null,
  ): Promise<DepositLanded | DepositRefused> {
    const checked = await this.check(payment, terms);
    if (!checked.ok) return checked;
    const { tx, hash, amount, channelId, opening } = checked.value;
    const landed: DepositLanded = { ok: true, payer: tx.source, deposited: { transaction: hash, amount } };
    const already: DepositLanded = { ok: true, payer: tx.source, deposited: null };
    const known = await this.deps.ledger.getTx(hash);
    if (known?.status === 'SUCCESS') return this.seen(landed, channelId, opening);
    if (known?.status === 'FAILED') return failed(`the ledger failed it before (${known.code}: ${known.message})`, tx);
    if (opening && (await this.sameOpening(tx, channelId))) return this.seen(already, channelId, opening);

    const balance = await this.balanceOf(tx.source);
    if (balance < amount)
      return {
        ok: false,
        code: 'insufficient_balance',
        message: `The payer ${tx.source} holds ${balance} of ${this.deps.asset}, less than the deposit of ${amount}: fund it and retry.`,
        payer: tx.source,
      };
    const limited = await this.limited(tx.source, ip);
    if (limited) return limited;
    let result;
    try {
      result = await tx.send();
    } catch (err) {
      if (!(err instanceof LedgerTxRefused)) throw err;
      // A copy of this very transaction sent at the same time may have landed it.
      if ((await this.deps.ledger.getTx(hash))?.status === 'SUCCESS') return this.seen(landed, channelId, opening);
      return failed(`the ledger refused it: ${err.message.slice(0, 300)}`, tx);
    }
    if (result.status === 'SUCCESS') return this.seen(landed, channelId, opening);
    // 27 on an opening: the voucher key is taken — by this same opening sent in another transaction.
    if (opening && result.code === 27 && (await this.sameOpening(tx, channelId)))
      return this.seen(already, channelId, opening);
    return failed(`the ledger failed it (${result.code}: ${result.message})`, tx);
  }

  /** The transaction as this payment's deposit, checked before anything is sent. */
  private async check(
    payment: BatchPayment,
    terms: BatchRequirements,
  ): Promise<{ ok: true; value: Checked } | DepositRefused> {
    const deposit = payment.deposit;
    if (!deposit) return malformed('a deposit payload carries deposit.amount and deposit.transaction');
    if (terms.asset !== this.deps.asset)
      return refuse(
        'asset_mismatch',
        `The terms ask for ${terms.asset}; a channel on this ledger holds ${this.deps.asset}.`,
      );
    if (terms.extra.channelContract !== this.deps.channelContract)
      return malformed(
        `the terms name the channel contract ${terms.extra.channelContract}, this facilitator's is ${this.deps.channelContract}`,
      );
    const tx = this.read(deposit.transaction);
    if ('message' in tx) return malformed(tx.message);
    if (tx.op === 'channel.open') return this.checkOpen(payment, terms, tx, tx.hash, deposit.amount);
    if (tx.op === 'channel.top_up') return this.checkTopUp(payment, terms, tx, tx.hash, deposit.amount);
    return malformed(
      `deposit.transaction calls ${JSON.stringify(tx.op).slice(0, 70)}; a deposit calls channel.open or channel.top_up`,
    );
  }

  /**
   * The deposit transaction in the ledger's own form: read by the ledger adapter where it has one
   * (Stellar), else the signed local-ledger transaction, checked here (a G… source strictly; a
   * smart account's keys are the ledger's to check).
   */
  private read(transaction: unknown): DepositTx | { message: string } {
    const { ledger, sponsor, passphrase } = this.deps;
    if (ledger.readDeposit && ledger.submitDeposit) {
      const read = ledger.readDeposit(transaction, sponsor.address);
      if (!read.ok) return { message: read.message };
      const submitDeposit = ledger.submitDeposit.bind(ledger);
      return { ...read, send: () => submitDeposit(transaction as string, sponsor) };
    }
    if (typeof transaction === 'string')
      return {
        message:
          'on this ledger (stellar:local) deposit.transaction is the signed local-ledger transaction, a JSON object',
      };
    const parsed = safeParse(SignedLedgerTxSchema, transaction);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { message: `deposit.transaction: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}` };
    }
    const tx = parsed.data;
    let hash: string;
    try {
      hash = txHash(passphrase, tx);
    } catch {
      return { message: 'deposit.transaction cannot be hashed (not RFC 8785 JSON)' };
    }
    if (isAccountAddress(tx.source) && !verifyLedgerTx(publicKeyFromAccount(tx.source), passphrase, tx))
      return { message: `deposit.transaction is not signed by its source ${tx.source} on this network` };
    return { source: tx.source, op: tx.op, args: tx.args, hash, send: () => ledger.submit(tx) };
  }

  /** The payer's balance of this ledger's asset. */
  private async balanceOf(address: string): Promise<bigint> {
    const account = await this.deps.ledger.getAccount(address);
    return account.balances.find((b) => b.asset === this.deps.asset)?.amount ?? 0n;
  }

  private async checkOpen(
    payment: BatchPayment,
    terms: BatchRequirements,
    tx: DepositTx,
    hash: string,
    amount: bigint,
  ): Promise<{ ok: true; value: Checked } | DepositRefused> {
    const args = safeParse(LEDGER_OP_ARGS['channel.open'], tx.args);
    if (!args.success)
      return malformed(`deposit.transaction's channel.open args: ${args.error.issues[0]?.message ?? 'invalid'}`);
    const a = args.data;
    if (a.payee !== terms.payTo)
      return refuse('receiver_mismatch', `The opening pays ${a.payee}; this seller is ${terms.payTo}.`);
    if (a.deposit !== amount) return malformed(`deposit.amount is ${amount}, but the opening deposits ${a.deposit}`);
    const minimum = BigInt(terms.extra.minDeposit);
    if (a.deposit < minimum)
      return malformed(`the opening deposits ${a.deposit}, below this seller's minimum deposit ${minimum}`);
    if (a.receiverAuthorizer !== this.deps.receiverAuthorizer)
      return refuse(
        'receiver_authorizer_mismatch',
        `The opening must name this facilitator (${this.deps.receiverAuthorizer}) as receiverAuthorizer, as the terms' extra.receiverAuthorizer says.`,
      );
    const key = fromHex(a.voucherKey, 32);
    if (!isStrictPublicKey(key))
      return malformed("the opening's voucherKey is not a strictly valid ed25519 public key");
    const channelId = channelIdOf(this.deps.passphrase, this.deps.channelContract, key);
    if (channelId !== payment.channelId)
      return malformed(
        `the voucher names channel ${payment.channelId}, but the opening's voucher key derives channel ${channelId}`,
      );
    const left = a.expiryLedger - this.deps.latestLedger.currentLedger;
    if (left <= this.deps.safetyLedgers)
      return malformed(
        `the opening expires in ${left} ledgers; vouchers are refused within ${this.deps.safetyLedgers} ledgers of expiry: set a later expiryLedger`,
      );
    if (payment.cumulative > a.deposit)
      return refuse(
        'cumulative_exceeds_balance',
        `The voucher's ceiling ${payment.cumulative} exceeds the deposit ${a.deposit}.`,
      );
    const signature = fromHex(payment.signature, 64);
    if (!(await this.deps.vouchers.verifyAsync(key, channelId, payment.cumulative, signature)))
      return refuse('voucher_signature', "The voucher does not verify under the opening's voucher key.");
    return { ok: true, value: { tx, hash, amount, channelId, opening: true } };
  }

  private async checkTopUp(
    payment: BatchPayment,
    terms: BatchRequirements,
    tx: DepositTx,
    hash: string,
    amount: bigint,
  ): Promise<{ ok: true; value: Checked } | DepositRefused> {
    const args = safeParse(LEDGER_OP_ARGS['channel.top_up'], tx.args);
    if (!args.success)
      return malformed(`deposit.transaction's channel.top_up args: ${args.error.issues[0]?.message ?? 'invalid'}`);
    const a = args.data;
    if (a.channelId !== payment.channelId)
      return malformed(`the voucher names channel ${payment.channelId}, but the top-up is of channel ${a.channelId}`);
    if (a.amount !== amount) return malformed(`deposit.amount is ${amount}, but the top-up adds ${a.amount}`);
    if (a.amount <= 0n) return malformed('a top-up adds a positive amount');
    const channel = await this.deps.ledger.getChannel(a.channelId);
    if (!channel)
      return refuse('channel_not_found', `Channel ${a.channelId} does not exist: open it with channel.open.`);
    if (!channel.open) return refuse('channel_closed', `Channel ${a.channelId} is closed: open a new one.`);
    if (channel.payee !== terms.payTo)
      return refuse(
        'receiver_mismatch',
        `Channel ${a.channelId} pays ${channel.payee}; this seller is ${terms.payTo}.`,
      );
    if (channel.payer !== tx.source)
      return malformed(`channel ${a.channelId} is ${channel.payer}'s; only its payer tops it up`);
    if (channel.receiverAuthorizer !== this.deps.receiverAuthorizer)
      return refuse(
        'receiver_authorizer_mismatch',
        `Channel ${a.channelId} is not bound to this facilitator (${this.deps.receiverAuthorizer}) as receiver authorizer.`,
      );
    return { ok: true, value: { tx, hash, amount, channelId: a.channelId, opening: false } };
  }

  /** Whether the ledger holds this very opening already (the same payer, seller and voucher key). */
  private async sameOpening(tx: DepositTx, channelId: bigint): Promise<boolean> {
    const channel: LedgerChannel | null = await this.deps.ledger.getChannel(channelId);
    const args = tx.args as { payee?: unknown; voucherKey?: unknown };
    return (
      channel !== null &&
      channel.payer === tx.source &&
      channel.payee === args.payee &&
      typeof args.voucherKey === 'string' &&
      channel.voucherKey.toLowerCase() === args.voucherKey.toLowerCase()
    );
  }

  /** A payer over its limit is refused before its address is counted: it uses up no one else's. */
  private async limited(payer: string, ip: string | null): Promise<DepositRefused | null> {
    const wait = (await this.deps.limits.perPayer(payer)) ?? (ip === null ? null : await this.deps.limits.perIp(ip));
    if (wait === null) return null;
    return {
      ok: false,
      code: 'RATE_LIMITED',
      message: `Too many sponsored deposits; retry in ${wait} s, or open the channel yourself and pay with a voucher payload.`,
      payer,
      retryAfter: wait,
    };
  }

  /** Landed: the channel book drops what it knew, and a top-up's new deposit is in the store first. */
  private async seen(landed: DepositLanded, channelId: bigint, opening: boolean): Promise<DepositLanded> {
    if (!opening) await this.deps.caughtUp();
    this.deps.book.invalidate(channelId);
    return landed;
  }
}

function malformed(message: string): DepositRefused {
  return { ok: false, code: 'deposit_payload', message: `Malformed deposit: ${message}.` };
}

function refuse(code: BatchCodeName, message: string): DepositRefused {
  return { ok: false, code, message };
}

function failed(why: string, tx: DepositTx): DepositRefused {
  return {
    ok: false,
    code: 'deposit_transaction_failed',
    message: `The deposit transaction did not land: ${why}. Sign a new one (the next sequence number of ${tx.source}) and retry.`,
    payer: tx.source,
  };
}
