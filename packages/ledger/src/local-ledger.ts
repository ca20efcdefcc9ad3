// LocalLedger: the embedded ledger (PROTOCOL.md §9), a durable simulation of the asset and
// channel contracts in one SQLite file. Every transaction is checked (shape, op, args,
// signature, seq) before anything is written; then seq, effects, events and the tx record are
// written in one SQLite transaction, so a crash leaves all of it or none.
//
//   const ledger = await LocalLedger.open({ dataDir: './data', ledgerSeconds: 5 });
//   await ledger.faucet(buyer.address);
//   const res = await ledger.submit(signLedgerTx(buyer, ledger.passphrase, { source: buyer.address, seq: 1, op: 'channel.open', args }));
import type Database from 'better-sqlite3';
import {
  concatBytes,
  isAccountAddress,
  isAddress,
  networkId,
  publicKeyFromAccount,
  sha256,
  SvcError,
  toHex,
  txHash,
  utf8,
  verifyLedgerTx,
  voucherContext,
} from '@svc/core';
import { signLedgerTx } from '@svc/core';
import type { Keypair, SignedLedgerTx } from '@svc/core';
import { ASSET_CODE, ASSET_DECIMALS, GENESIS_LEDGER, LOCAL_NETWORK, LOCAL_PASSPHRASE, localContracts } from './contracts.js';
import type { LocalContracts } from './contracts.js';
import { checkFaucetLimits, faucetAmount, faucetLimits } from './faucet.js';
import type { FaucetLimits, FaucetOptions, LedgerFaucet } from './faucet.js';
import { assertLedgerSeconds, LedgerClock, SYSTEM_CLOCK } from './ledger-clock.js';
import type { Clock, ClockAnchor } from './ledger-clock.js';
import { openLedgerDb } from './ledger-db.js';
import { LedgerState } from './ledger-state.js';
import { OpContext } from './ops/context.js';
import type { LedgerEnv } from './ops/context.js';
import { DEFAULT_OPS } from './ops/index.js';
import { ContractError } from './ops/registry.js';
import type { OpDefinition, OpRegistry, OpResult } from './ops/registry.js';
import { LedgerTxRefused, LedgerUnavailable } from './port.js';
import type { ClaimArgs, EventsPage, Ledger, LedgerAccount, LedgerChannel, LedgerInfo, TxResult } from './port.js';
import { claimArgs } from './claim-args.js';
import { describeIssues, MAX_EVENTS_PAGE, SignedTxSchema } from './wire.js';

export const DEFAULT_LEDGER_SECONDS = 5;
const FAUCET_DOMAIN = 'svc:faucet:v1';
const META = { passphrase: 'network_passphrase', anchorLedger: 'anchor_ledger', anchorTime: 'anchor_time_ms', ledgerSeconds: 'ledger_seconds' } as const;

export interface LocalLedgerOptions {
  /** Directory of the ledger's SQLite file (created if missing). */
  dataDir: string;
  /** Seconds between ledger closes (default 5). Changing it on reopen continues from the current ledger. */
  ledgerSeconds?: number;
  /** Wall clock in ms; tests pass a fake one. */
  clock?: Clock;
  faucet?: FaucetOptions;
  /** The ops the ledger knows (default DEFAULT_OPS); later contracts and tests extend it. */
  ops?: OpRegistry;
}

type Outcome = { status: 'SUCCESS'; result: OpResult } | { status: 'FAILED'; code: number; message: string };

/** Runs `fn` so that a throw becomes a rejection, for methods whose work is synchronous. */
function settle<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}

function refuse(message: string): never {
  throw new LedgerTxRefused(message);
}

export class LocalLedger implements Ledger, LedgerFaucet {
  readonly network = LOCAL_NETWORK;
  readonly passphrase = LOCAL_PASSPHRASE;
  readonly contracts: LocalContracts;
  readonly #db: Database.Database;
  readonly #state: LedgerState;
  readonly #clock: LedgerClock;
  readonly #env: LedgerEnv;
  readonly #faucet: FaucetLimits;
  readonly #ops: OpRegistry;
  #closed = false;

  private constructor(db: Database.Database, clock: LedgerClock, faucet: FaucetLimits, ops: OpRegistry) {
    this.#db = db;
    this.#ops = ops;
    this.#state = new LedgerState(db);
    this.#clock = clock;
    this.#faucet = faucet;
    this.contracts = localContracts(this.passphrase);
    this.#env = { passphrase: this.passphrase, contracts: this.contracts, vouchers: voucherContext(this.passphrase, this.contracts.channel) };
  }

  static open(options: LocalLedgerOptions): Promise<LocalLedger> {
    return settle(() => {
      const ledgerSeconds = options.ledgerSeconds ?? DEFAULT_LEDGER_SECONDS;
      assertLedgerSeconds(ledgerSeconds);
      const limits = faucetLimits(options.faucet);
      const db = openLedgerDb(options.dataDir);
      try {
        const clock = LocalLedger.#openClock(new LedgerState(db), options.clock ?? SYSTEM_CLOCK, ledgerSeconds);
        return new LocalLedger(db, clock, limits, options.ops ?? DEFAULT_OPS);
      } catch (err) {
        db.close();
        throw err;
      }
    });
  }

  /** Reads (or, on a fresh file, writes) the network and the clock anchor. */
  static #openClock(state: LedgerState, clock: Clock, ledgerSeconds: number): LedgerClock {
    return state.db
      .transaction(() => {
        const passphrase = state.meta(META.passphrase);
        if (passphrase !== undefined && passphrase !== LOCAL_PASSPHRASE) {
          throw new Error(`this data directory holds a ledger of another network (${passphrase})`);
        }
        const stored = LocalLedger.#readAnchor(state);
        const ledgerClock = new LedgerClock(stored ?? { ledger: GENESIS_LEDGER, timeMs: clock.now(), ledgerSeconds }, clock, state.maxTxLedger());
        if (!stored || stored.ledgerSeconds !== ledgerSeconds) {
          state.setMeta(META.passphrase, LOCAL_PASSPHRASE);
          LocalLedger.#writeAnchor(state, stored ? ledgerClock.reanchor(ledgerSeconds) : ledgerClock.anchor);
        }
        return ledgerClock;
      })
      .immediate();
  }

  static #readAnchor(state: LedgerState): ClockAnchor | undefined {
    const [ledger, time, seconds] = [state.meta(META.anchorLedger), state.meta(META.anchorTime), state.meta(META.ledgerSeconds)];
    if (ledger === undefined || time === undefined || seconds === undefined) return undefined;
    return { ledger: Number(ledger), timeMs: Number(time), ledgerSeconds: Number(seconds) };
  }

  static #writeAnchor(state: LedgerState, anchor: ClockAnchor): void {
    state.setMeta(META.anchorLedger, String(anchor.ledger));
    state.setMeta(META.anchorTime, String(anchor.timeMs));
    state.setMeta(META.ledgerSeconds, String(anchor.ledgerSeconds));
  }

  info(): Promise<LedgerInfo> {
    return settle(() => {
      this.#assertOpen();
      return {
        network: this.network,
        passphrase: this.passphrase,
        latestLedger: this.#clock.latest(),
        ledgerSeconds: this.#clock.ledgerSeconds,
        contracts: { ...this.contracts },
        asset: { code: ASSET_CODE, decimals: ASSET_DECIMALS },
      };
    });
  }

  latestLedger(): Promise<number> {
    return settle(() => {
      this.#assertOpen();
      return this.#clock.latest();
    });
  }

  getChannel(id: bigint): Promise<LedgerChannel | null> {
    return settle(() => {
      this.#assertOpen();
      return this.#state.channel(id);
    });
  }

  getAccount(address: string): Promise<LedgerAccount> {
    return settle(() => {
      this.#assertOpen();
      if (!isAddress(address)) throw new SvcError('BAD_REQUEST', 'address must be a G… or C… address', { source: 'ledger' });
      return { address, seq: this.#state.seq(address), balances: this.#state.balances(address) };
    });
  }

  getTx(hash: string): Promise<TxResult | null> {
    return settle(() => {
      this.#assertOpen();
      return /^[0-9a-fA-F]{64}$/.test(hash) ? this.#state.tx(hash.toLowerCase()) : null;
    });
  }

  events(cursor: string | null, limit: number): Promise<EventsPage> {
    return settle(() => {
      this.#assertOpen();
      if (cursor !== null && !/^[0-9]{1,15}$/.test(cursor)) throw new SvcError('BAD_REQUEST', 'cursor must be the id of an event', { source: 'ledger' });
      const from = cursor === null ? 0 : Number(cursor);
      const count = Number.isFinite(limit) ? Math.min(MAX_EVENTS_PAGE, Math.max(0, Math.floor(limit))) : 0;
      const events = count === 0 ? [] : this.#state.events(from, count);
      return { events, cursor: events.at(-1)?.id ?? cursor };
    });
  }

  /** Claims as `signer`: the sequence number is read and used in one step, so claims never collide. */
  claim(args: ClaimArgs, signer: Keypair): Promise<TxResult> {
    return settle(() => {
      this.#assertOpen();
      const body = { source: signer.address, seq: this.#state.seq(signer.address) + 1, op: 'channel.claim', args: claimArgs(args) };
      return this.#apply(signLedgerTx(signer, this.passphrase, body));
    });
  }

  submit(tx: SignedLedgerTx): Promise<TxResult> {
    return settle(() => {
      this.#assertOpen();
      return this.#apply(tx);
    });
  }

  faucet(address: string, amount?: bigint): Promise<TxResult> {
    return settle(() => {
      this.#assertOpen();
      if (!isAddress(address)) throw new SvcError('BAD_REQUEST', 'address must be a G… or C… address', { source: 'ledger' });
      return this.#mint(address, faucetAmount(this.#faucet, amount));
    });
  }

  close(): Promise<void> {
    return settle(() => {
      if (this.#closed) return;
      this.#closed = true;
      this.#db.close();
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new LedgerUnavailable('the local ledger is closed');
  }

  /** Checks everything that refuses a tx, then applies it atomically. */
  #apply(input: unknown): TxResult {
    const parsed = SignedTxSchema.safeParse(input);
    if (!parsed.success) refuse(`malformed transaction: ${describeIssues(parsed.error)}`);
    const tx = parsed.data;
    const op = this.#ops.get(tx.op) ?? refuse(`unknown op ${JSON.stringify(tx.op)}`);
    const args = op.args.safeParse(tx.args);
    if (!args.success) refuse(`bad args for ${tx.op}: ${describeIssues(args.error)}`);
    const hash = this.#authorize(tx);
    return this.#db
      .transaction((): TxResult => {
        const expected = this.#state.seq(tx.source) + 1;
        if (tx.seq !== expected) refuse(`seq ${tx.seq} is not the next sequence number of ${tx.source} (expected ${expected})`);
        this.#state.setSeq(tx.source, tx.seq);
        const ctx = this.#context(tx.source, hash);
        const outcome = this.#run(op, ctx, args.data);
        const record = { hash, ledger: ctx.ledger, source: tx.source, op: tx.op, ts: ctx.ts };
        const result: TxResult =
          outcome.status === 'FAILED'
            ? { ...record, status: 'FAILED', code: outcome.code, message: outcome.message, events: [] }
            : { ...record, status: 'SUCCESS', ...(outcome.result ? { result: outcome.result } : {}), events: ctx.events };
        this.#state.insertTx({ ...result, seq: tx.seq, args: tx.args, signature: tx.signature });
        return result;
      })
      .immediate();
  }

  /**
   * Checks the signature and returns the tx hash. Only `G…` accounts sign today, with their own
   * key; a smart account (`C…`, account.create) will authorise with its agent or owner key here.
   */
  #authorize(tx: SignedLedgerTx): string {
    const source: string = tx.source;
    if (!isAccountAddress(source)) refuse(`source ${tx.source} cannot sign transactions (smart accounts are not supported yet)`);
    let hash: string;
    let signed: boolean;
    try {
      hash = txHash(this.passphrase, tx);
      signed = verifyLedgerTx(publicKeyFromAccount(tx.source), this.passphrase, tx);
    } catch {
      // RFC 8785 cannot encode NaN, Infinity or bigint: such a tx has no hash to sign.
      return refuse('the transaction is not serialisable as RFC 8785 JSON');
    }
    if (!signed) refuse(`bad signature: the transaction is not signed by ${tx.source}`);
    return hash;
  }

  #context(source: string, hash: string): OpContext {
    const ledger = this.#clock.latest();
    const ts = new Date(this.#clock.now()).toISOString();
    return new OpContext({ env: this.#env, state: this.#state, source, tx: hash, ledger, ts });
  }

  /** The op in a savepoint: a contract failure undoes its effects but keeps the consumed seq. */
  #run(op: OpDefinition, ctx: OpContext, args: unknown): Outcome {
    try {
      return { status: 'SUCCESS', result: this.#db.transaction(() => op.apply(ctx, args))() };
    } catch (err) {
      if (err instanceof ContractError) return { status: 'FAILED', code: err.code, message: err.message };
      throw err;
    }
  }

  /** A faucet grant, recorded as a tx of the asset contract (no seq, no signature). */
  #mint(address: string, amount: bigint): TxResult {
    return this.#db
      .transaction((): TxResult => {
        const nowMs = this.#clock.now();
        checkFaucetLimits(this.#state, this.#faucet, address, nowMs);
        const grant = this.#state.nextGrant();
        const hash = toHex(sha256(concatBytes(utf8(FAUCET_DOMAIN), networkId(this.passphrase), utf8(`${grant}:${address}:${amount}`))));
        const ctx = this.#context(this.contracts.asset, hash);
        try {
          ctx.mint(address, amount);
        } catch (err) {
          if (err instanceof ContractError) throw new SvcError('BAD_REQUEST', err.message, { source: 'ledger' });
          throw err;
        }
        const result = { amount: amount.toString(), balance: ctx.balance(address).toString() };
        const record = { hash, ledger: ctx.ledger, source: ctx.source, op: 'faucet', ts: ctx.ts };
        this.#state.insertTx({ ...record, seq: null, args: { address, amount: amount.toString() }, signature: null, status: 'SUCCESS', result });
        this.#state.insertGrant(address, nowMs, hash);
        return { ...record, status: 'SUCCESS', result, events: ctx.events };
      })
      .immediate();
  }
}
