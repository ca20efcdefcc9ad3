// The `batch-settlement` cooperative refund: a buyer asks for its unused deposit back, whole or in
// part, and has it at once rather than at expiry. The facilitator — the channel's receiver
// authorizer, bound at its opening — checks the payer's refund signature (core batch-refund.ts,
// over the channel's refund nonce), holds the channel so that no payment is charged meanwhile,
// claims what was charged (the seller keeps every charge: a refund moves no seller money), then
// calls the contract's `refund` under the nonce (packages/ledger/docs/channel-contract.md).
//
// Once per nonce: the contract spends it, and the answer is kept under `refund:<channel>:<nonce>`
// so that the same payload again gets the same answer, not a second refund. The ledger watcher
// turns the contract's `refunded` event into the `channel.refunded` event of the stream; the store
// takes the lower deposit here at once (in nonce order, so the watcher's copy changes nothing).
import { formatUnits, sha256, toHex, utf8 } from '@svc/core';
import type { BatchCodeName, BatchRefund, BatchRequirements, ChannelState, Keypair, RefundContext } from '@svc/core';
import { batchCode } from '@svc/core';
import type { Ledger, LedgerChannel } from '@svc/ledger';
import type { ChannelRecord, Store, WriteOp } from '../store/port.js';
import { channelStateOf } from './batch-amount-checks.js';
import type { BatchRefused } from './batch-types.js';
import type { CachedChannel, ChannelBook } from './channel-book.js';
import type { Claimer } from './claimer.js';
import type { Clock } from './clock.js';
import type { EventLog } from './event-log.js';
import type { Step } from './payment-checks.js';

/** How long a refund holds its channel against payments (the claim and the refund are two transactions). */
const HOLD_MS = 120_000;
/** The ledger lets a payer close its channel from this many ledgers after expiry (channel-contract.md, `close`). */
const CLOSE_DELAY_LEDGERS = 120;

export interface RefundInput {
  refund: BatchRefund;
  /** The seller's terms the refund came with (/verify and /settle carry them); checked when given. */
  requirements: BatchRequirements | null;
}

export type RefundChecked = { ok: true; payer: string; refundable: bigint; channelState: ChannelState } | BatchRefused;

export type RefundDone =
  | {
      ok: true;
      payer: string;
      refunded: bigint;
      /** The refund transaction. */
      tx: string;
      channelState: ChannelState;
      /** The first answer to this very refund (its nonce is spent), not a second refund. */
      replayed?: true;
    }
  | BatchRefused;

export interface BatchRefundsDeps {
  network: string;
  /** The receiver authorizer: this facilitator's key, which signs the claim and the refund. */
  keys: Keypair;
  refunds: RefundContext;
  ledger: Ledger;
  book: ChannelBook;
  store: Store;
  events: EventLog;
  claimer: Claimer;
  clock: Clock;
  /**
   * The channel's voucher rate (payment-checks.ts), taken by a refund that verifies: each costs this
   * facilitator two transactions, so a payer cannot spend its fees on refunds of a unit each.
   */
  checkRate(channelId: bigint): Promise<Step>;
}

/** What is kept under the refund's key: the answer, to give again. */
interface KeptRefund {
  payer: string;
  refunded: string;
  tx: string;
  channelState: ChannelState;
}

export class BatchRefunds {
  /** One refund per channel at a time in this process (the contract's nonce orders them across processes). */
  private readonly running = new Map<bigint, Promise<unknown>>();

  constructor(private readonly deps: BatchRefundsDeps) {}

  /** POST /verify of a refund: would it be refunded now, and how much. Nothing moves. */
  async verify(input: RefundInput): Promise<RefundChecked> {
    const kept = await this.kept(input.refund);
    if (kept) return { ok: true, payer: kept.payer, refundable: 0n, channelState: kept.channelState };
    const checked = await this.check(input);
    if (!checked.ok) return checked;
    return { ok: true, payer: checked.record.payer, refundable: checked.amount, channelState: checked.state };
  }

  /** POST /settle of a refund: what was charged claimed, then the rest (or the amount asked) back to the payer. */
  refund(input: RefundInput): Promise<RefundDone> {
    const id = input.refund.channelId;
    const before = this.running.get(id) ?? Promise.resolve();
    const run = before.then(() => this.refundNow(input));
    const tail = run.catch(() => undefined);
    this.running.set(id, tail);
    void tail.then(() => {
      if (this.running.get(id) === tail) this.running.delete(id);
    });
    return run;
  }

  private async refundNow(input: RefundInput): Promise<RefundDone> {
    const { refund } = input;
    const replay = await this.replay(refund);
    if (replay) return replay;
    const checked = await this.check(input);
    if (!checked.ok) return checked;
    const rate = await this.deps.checkRate(checked.record.id);
    if (!rate.ok)
      return {
        ok: false,
        code: 'RATE_LIMITED',
        message: rate.message,
        payer: checked.record.payer,
        ...(rate.retryAfter ? { retryAfter: rate.retryAfter } : {}),
      };
    const fingerprint = holdFingerprint(refund);
    const record = await this.hold(checked.record, fingerprint);
    if (!record) return this.busy(checked.record);
    const payer = record.payer;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await this.deps.store.write([{ op: 'channel.release', channelId: record.id, fingerprint }]);
      this.deps.book.invalidate(record.id);
    };
    try {
      // What was charged is the seller's: claimed before anything goes back.
      const onLedger = await this.claimCharged(record);
      if (!onLedger.ok) {
        await release();
        return onLedger;
      }
      const channel = onLedger.channel;
      const unused = channel.deposit - record.charged;
      const amount = refund.amount ?? unused;
      if (amount <= 0n || amount > unused) {
        await release();
        return amount <= 0n ? this.noBalance(record, channel) : this.tooMuch(record, channel, amount, unused);
      }
      const result = await this.deps.ledger.refund(
        { channelId: record.id, amount, nonce: refund.nonce },
        this.deps.keys,
      );
      if (result.status !== 'SUCCESS') {
        await release();
        // The same refund, sent at once from elsewhere, spent the nonce first.
        const again = await this.replay(refund);
        if (again) return again;
        return {
          ...this.refuse(
            'refund_transaction_failed',
            `The ledger refused the refund (code ${result.code ?? 'none'}${result.message ? `: ${result.message.slice(0, 200)}` : ''}).`,
          ),
          payer,
        };
      }
      const reported = result.result?.['refunded'];
      const refunded = typeof reported === 'string' && /^[0-9]{1,39}$/.test(reported) ? BigInt(reported) : amount;
      const after: ChannelRecord = {
        ...record,
        deposit: channel.deposit - refunded,
        claimed: channel.claimed,
        refundNonce: Number(refund.nonce + 1n),
        reservation: null,
      };
      const channelState = channelStateOf(after);
      const kept: KeptRefund = { payer, refunded: formatUnits(refunded), tx: result.hash, channelState };
      const at = this.now();
      const ops: WriteOp[] = [
        { op: 'channel.refunded', channelId: record.id, refundNonce: after.refundNonce, deposit: after.deposit },
        { op: 'channel.release', channelId: record.id, fingerprint },
        {
          op: 'idempotency',
          key: refundKey(refund),
          fingerprint: refund.signature,
          response: JSON.stringify(kept),
          at,
        },
      ];
      const written = await this.deps.events.commit(ops);
      // Another instance kept an answer under this key first: the refund and the release still stand.
      if (!written.ok) await this.deps.events.commit(ops.filter((op) => op.op !== 'idempotency'));
      released = true;
      this.deps.book.invalidate(record.id);
      return { ok: true, payer, refunded, tx: result.hash, channelState };
    } catch (err) {
      await release().catch(() => undefined);
      throw err;
    }
  }

  /**
   * The checks of a refund, in order: network, channel found and open, the seller's, bound to this
   * facilitator, the payer's signature, the current nonce, something left to refund.
   */
  private async check(
    input: RefundInput,
  ): Promise<{ ok: true; record: ChannelRecord; amount: bigint; state: ChannelState } | BatchRefused> {
    const { refund, requirements } = input;
    const { network } = this.deps;
    if (refund.network !== network || (requirements !== null && requirements.network !== network))
      return this.refuse(
        'network_mismatch',
        `This facilitator settles on ${network}, not ${refund.network === network ? requirements?.network : refund.network}.`,
      );
    const channel = await this.deps.book.get(refund.channelId);
    if (!channel) return this.refuse('channel_not_found', `Channel ${refund.channelId} does not exist on ${network}.`);
    const { record } = channel;
    const payer = record.payer;
    if (record.status !== 'open')
      return { ...this.refuse('channel_closed', `Channel ${record.id} is closed: nothing is left to refund.`), payer };
    if (requirements !== null && record.payee !== requirements.payTo)
      return {
        ...this.refuse(
          'receiver_mismatch',
          `Channel ${record.id} pays ${record.payee}, but these terms are ${requirements.payTo}'s.`,
        ),
        payer,
      };
    const mine = this.deps.keys.address;
    if (record.receiverAuthorizer !== mine)
      return {
        ...this.refuse(
          'receiver_authorizer_mismatch',
          `Channel ${record.id} ${record.receiverAuthorizer === null ? 'has no receiver authorizer' : `is bound to the receiver authorizer ${record.receiverAuthorizer}`}, so this facilitator cannot refund it: the seller must have channels opened with this facilitator (${mine}) as receiver authorizer; this one the payer closes itself from ledger ${record.expiryLedger + CLOSE_DELAY_LEDGERS} (its expiry ${record.expiryLedger} + ${CLOSE_DELAY_LEDGERS}), which returns what was not claimed.`,
        ),
        payer,
      };
    if (!(await this.signedByPayer(channel, refund)))
      return {
        ...this.refuse(
          'voucher_signature',
          `The refund signature does not verify under channel ${record.id}'s voucher key for (amount ${refund.amount ?? 'all'}, nonce ${refund.nonce}).`,
        ),
        payer,
      };
    const onLedger = await this.deps.ledger.getChannel(record.id);
    if (!onLedger || !onLedger.open)
      return { ...this.refuse('channel_closed', `Channel ${record.id} is closed on the ledger.`), payer };
    const state = stateOf(record, onLedger);
    if (refund.nonce !== onLedger.refundNonce)
      return {
        ...this.refuse(
          'refund_payload',
          `The refund names nonce ${refund.nonce}, but channel ${record.id}'s refund nonce is ${onLedger.refundNonce}: sign the refund again with ${onLedger.refundNonce}.`,
        ),
        payer,
        channelState: state,
      };
    const unused = onLedger.deposit - record.charged;
    if (unused <= 0n) return this.noBalance(record, onLedger);
    if (refund.amount !== null && refund.amount > unused) return this.tooMuch(record, onLedger, refund.amount, unused);
    return { ok: true, record, amount: refund.amount ?? unused, state };
  }

  private signedByPayer(channel: CachedChannel, refund: BatchRefund): Promise<boolean> {
    if (!channel.keyIsStrict) return Promise.resolve(false);
    return this.deps.refunds.verifyAsync(
      channel.voucherKey,
      refund.channelId,
      refund.amount,
      refund.nonce,
      refund.signature,
    );
  }

  /**
   * Reserves the channel for the refund, as a payment's /verify would: no payment is charged
   * meanwhile. The channel as it was held, or null while a payment holds it.
   */
  private async hold(record: ChannelRecord, fingerprint: string): Promise<ChannelRecord | null> {
    let current = record;
    for (let attempt = 0; attempt < 3; attempt++) {
      const at = this.now();
      const held = await this.deps.store.write([
        {
          op: 'channel.reserve',
          channelId: current.id,
          expectedCharged: current.charged,
          fingerprint,
          until: new Date(this.deps.clock.now() + HOLD_MS).toISOString(),
          at,
        },
      ]);
      this.deps.book.invalidate(current.id);
      if (held.ok) return current;
      const reloaded = await this.deps.store.getChannel(record.id);
      if (!reloaded || reloaded.status !== 'open') return null;
      const r = reloaded.reservation;
      if (r !== null && r.until > at && r.fingerprint !== fingerprint) return null;
      current = reloaded;
    }
    return null;
  }

  /** The channel on the ledger once what was charged is claimed (a claim by the claimer, recorded as every claim). */
  private async claimCharged(record: ChannelRecord): Promise<{ ok: true; channel: LedgerChannel } | BatchRefused> {
    let channel = await this.deps.ledger.getChannel(record.id);
    if (channel && channel.claimed < record.charged) {
      const outcome = await this.deps.claimer.claim(record.id);
      channel = await this.deps.ledger.getChannel(record.id);
      if (outcome.status === 'rejected' && channel && channel.claimed < record.charged)
        return {
          ...this.refuse(
            'refund_transaction_failed',
            `Claiming the ${record.charged} charged on channel ${record.id} before the refund failed on the ledger: ${outcome.codeName} (${outcome.code}); nothing was refunded.`,
          ),
          payer: record.payer,
        };
    }
    if (!channel || !channel.open)
      return { ...this.refuse('channel_closed', `Channel ${record.id} is closed on the ledger.`), payer: record.payer };
    if (channel.claimed < record.charged)
      return {
        ...this.refuse(
          'refund_transaction_failed',
          `Channel ${record.id} shows ${channel.claimed} claimed of the ${record.charged} charged; nothing was refunded.`,
        ),
        payer: record.payer,
      };
    return { ok: true, channel };
  }

  /** The answer kept for this very refund (the same signature under the same nonce). */
  private async kept(refund: BatchRefund): Promise<KeptRefund | null> {
    const kept = await this.deps.store.getIdempotent(refundKey(refund));
    if (!kept || kept.fingerprint !== refund.signature) return null;
    return JSON.parse(kept.response) as KeptRefund;
  }

  private async replay(refund: BatchRefund): Promise<RefundDone | null> {
    const kept = await this.kept(refund);
    if (!kept) return null;
    return {
      ok: true,
      payer: kept.payer,
      refunded: BigInt(kept.refunded),
      tx: kept.tx,
      channelState: kept.channelState,
      replayed: true,
    };
  }

  private noBalance(record: ChannelRecord, onLedger: LedgerChannel): BatchRefused {
    return {
      ...this.refuse(
        'refund_no_balance',
        `Channel ${record.id} has nothing unused to refund: its deposit ${onLedger.deposit} is all charged (${record.charged}).`,
      ),
      payer: record.payer,
      channelState: stateOf(record, onLedger),
    };
  }

  private tooMuch(record: ChannelRecord, onLedger: LedgerChannel, asked: bigint, unused: bigint): BatchRefused {
    return {
      ...this.refuse(
        'refund_amount_invalid',
        `The refund asks ${asked}, but channel ${record.id} has ${unused} unused (deposit ${onLedger.deposit}, charged ${record.charged}): ask at most ${unused}, or omit the amount for all of it.`,
      ),
      payer: record.payer,
      channelState: stateOf(record, onLedger),
    };
  }

  private busy(record: ChannelRecord): BatchRefused {
    return {
      ...this.refuse(
        'channel_busy',
        `Channel ${record.id} is serving a payment; retry the refund once it is answered.`,
      ),
      payer: record.payer,
      retryAfter: 1,
    };
  }

  private refuse(name: BatchCodeName, message: string): BatchRefused {
    return { ok: false, code: batchCode(name), message };
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

/** The channel as the ledger has it now, with what the facilitator charged on it. */
function stateOf(record: ChannelRecord, onLedger: LedgerChannel): ChannelState {
  return channelStateOf({
    ...record,
    deposit: onLedger.deposit,
    claimed: onLedger.claimed,
    refundNonce: Number(onLedger.refundNonce),
  });
}

function refundKey(refund: BatchRefund): string {
  return `refund:${refund.channelId}:${refund.nonce}`;
}

/** The reservation a refund holds its channel with (never a payment's: a payment's fingerprint hashes other parts). */
function holdFingerprint(refund: BatchRefund): string {
  return toHex(sha256(utf8(`refund:${refund.channelId}:${refund.nonce}:${refund.signature}`)));
}
