// LocalLedger: the embedded ledger (docs/protocol.md#the-local-ledger), a durable simulation of the asset, channel,
// smart-account, DEX and credit-pool contracts in one SQLite file. Every transaction is checked (shape, op, args,
// signature, seq) before anything is written; then seq, effects, events and the tx record are
// written in one SQLite transaction, so a crash leaves all of it or none.
//
//   const ledger = await LocalLedger.open({ dataDir: './data', ledgerSeconds: 5 });
//   await ledger.faucet(buyer.address);
//   const res = await ledger.submit(signLedgerTx(buyer, ledger.passphrase, { source: buyer.address, seq: 1, op: 'channel.open', args }));
import type Database from 'better-sqlite3';
import {
  MAX_LEDGER_EVENTS_PAGE,
  SignedLedgerTxSchema,
  SvcError,
  concatBytes,
  isAccountAddress,
  isAddress,
  networkId,
  publicKeyFromAccount,
  safeParse,
  sha256,
  toHex,
  txHash,
  utf8,
  verifyLedgerTx,
  voucherContext,
} from '@svc/core';
import { signLedgerTx } from '@svc/core';
import type { Keypair, SignedLedgerTx } from '@svc/core';
import {
  ASSET_CODE,
  ASSET_DECIMALS,
  DEX_GENESIS_RESERVES,
  GENESIS_LEDGER,
  LOCAL_NETWORK,
  LOCAL_PASSPHRASE,
  localContracts,
} from './contracts.js';
import type { DexReserves, LocalContracts } from './contracts.js';
import { checkFaucetLimits, faucetAmount, faucetLimits } from './faucet.js';
import type { FaucetLimits, FaucetOptions, LedgerFaucet } from './faucet.js';
import { assertLedgerSeconds, LedgerClock, SYSTEM_CLOCK } from './ledger-clock.js';
import type { Clock, ClockAnchor } from './ledger-clock.js';
import { lockDataDir } from './data-dir-lock.js';
import type { DataDirLock } from './data-dir-lock.js';
import { LEDGER_DB_FILE, openLedgerDb } from './ledger-db.js';
import { LedgerState } from './ledger-state.js';
import { OpContext } from './ops/context.js';
import type { LedgerEnv, TxSigner } from './ops/context.js';
import { DEFAULT_OPS } from './ops/index.js';
import { ContractError } from './ops/contract-error.js';
import type { OpDefinition, OpRegistry, OpResult } from './ops/registry.js';
import { LedgerTxRefused, LedgerUnavailable } from './port.js';
import type {
  ClaimArgs,
  ClaimRow,
  EventsPage,
  Ledger,
  LedgerAccount,
  LedgerChannel,
  LedgerInfo,
  PoolState,
  RefundArgs,
  SmartAccountState,
  TxResult,
} from './port.js';
import { claimArgs, claimManyArgs, refundArgs } from './claim-args.js';
import { poolState } from './pool-view.js';
import { describeIssues } from './describe-issues.js';

export const DEFAULT_LEDGER_SECONDS = 5;
const FAUCET_DOMAIN = 'svc:faucet:v1';
const META = {
  passphrase: 'network_passphrase',
  anchorLedger: 'anchor_ledger',
  anchorTime: 'anchor_time_ms',
  ledgerSeconds: 'ledger_seconds',
  dexReserves: 'dex_genesis_reserves',
} as const;

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
  /** The DEX pool's genesis reserves (default DEX_GENESIS_RESERVES); used once, when the file is new. */
  dexReserves?: DexReserves;
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
  readonly #lock: DataDirLock;
  #closed = false;

  private constructor(
    db: Database.Database,
    lock: DataDirLock,
    clock: LedgerClock,
    faucet: FaucetLimits,
    ops: OpRegistry,
  ) {
    this.#db = db;
    this.#lock = lock;
    this.#ops = ops;
    this.#state = new LedgerState(db);
    this.#clock = clock;
    this.#faucet = faucet;
    this.contracts = localContracts(this.passphrase);
    this.#env = {
      passphrase: this.passphrase,
      contracts: this.contracts,
      vouchers: voucherContext(this.passphrase, this.contracts.channel),
    };
  }

  static open(options: LocalLedgerOptions): Promise<LocalLedger> {
    return settle(() => {
      const ledgerSeconds = options.ledgerSeconds ?? DEFAULT_LEDGER_SECONDS;
      assertLedgerSeconds(ledgerSeconds);
      const limits = faucetLimits(options.faucet);
      // One process writes a ledger's file: a second ledger on it would keep a clock and seqs of its own.
      const lock = lockDataDir(options.dataDir, 'ledger', `the local ledger's file ${LEDGER_DB_FILE}`);
      let db: Database.Database | undefined;
      try {
        db = openLedgerDb(options.dataDir);
        const state = new LedgerState(db);
        const clock = LocalLedger.#openClock(state, options.clock ?? SYSTEM_CLOCK, ledgerSeconds);
        LocalLedger.#seedDex(state, options.dexReserves ?? DEX_GENESIS_RESERVES);
        return new LocalLedger(db, lock, clock, limits, options.ops ?? DEFAULT_OPS);
      } catch (err) {
        db?.close();
        lock.release();
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
        const ledgerClock = new LedgerClock(
          stored ?? { ledger: GENESIS_LEDGER, timeMs: clock.now(), ledgerSeconds },
          clock,
          state.maxTxLedger(),
        );
        if (!stored || stored.ledgerSeconds !== ledgerSeconds) {
          state.setMeta(META.passphrase, LOCAL_PASSPHRASE);
          LocalLedger.#writeAnchor(state, stored ? ledgerClock.reanchor(ledgerSeconds) : ledgerClock.anchor);
        }
        return ledgerClock;
      })
      .immediate();
  }

  /**
   * Gives the DEX pool its reserves, once per data directory: part of the genesis state, like a
   * network's genesis ledger, so no tx or event records it. A file made before the pool existed
   * gets them on its first open by this build (added to whatever the address already held).
   */
  static #seedDex(state: LedgerState, reserves: DexReserves): void {
    state.db
      .transaction(() => {
        if (state.meta(META.dexReserves) !== undefined) return;
        const { dex, asset, xlm } = localContracts(LOCAL_PASSPHRASE);
        for (const [token, amount] of [
          [asset, reserves.asset],
          [xlm, reserves.xlm],
        ] as const) {
          if (amount < 0n) throw new RangeError('DEX reserves cannot be negative');
          state.setBalance(dex, token, state.balance(dex, token) + amount);
        }
        state.setMeta(META.dexReserves, `${reserves.asset}:${reserves.xlm}`);
      })
      .immediate();
  }

  static #readAnchor(state: LedgerState): ClockAnchor | undefined {
    const [ledger, time, seconds] = [
      state.meta(META.anchorLedger),
      state.meta(META.anchorTime),
      state.meta(META.ledgerSeconds),
    ];
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
      if (!isAddress(address))
        throw new SvcError('BAD_REQUEST', 'address must be a G… or C… address', { source: 'ledger' });
      const account = { address, seq: this.#state.seq(address), balances: this.#state.balances(address) };
      const smart = this.#smartAccount(address);
      return smart ? { ...account, account: smart } : account;
    });
  }

  /** A smart account's state as of now: a spend recorded on an earlier UTC day reads as 0 today. */
  #smartAccount(address: string): SmartAccountState | undefined {
    const stored = this.#state.smartAccounts.get(address);
    if (!stored) return undefined;
    const today = new Date(this.#clock.now()).toISOString().slice(0, 10);
    const { owner, policy, frozen } = stored;
    return {
      owner,
      policy,
      frozen,
      ...(stored.day === today ? { spentToday: stored.spentToday, day: stored.day } : { spentToday: 0n, day: today }),
    };
  }

  getTx(hash: string): Promise<TxResult | null> {
    return settle(() => {
      this.#assertOpen();
      return /^[0-9a-fA-F]{64}$/.test(hash) ? this.#state.tx(hash.toLowerCase()) : null;
    });
  }

  /** The credit pool now: its books, every open line valued against the account's holdings, every position. */
  getPool(): Promise<PoolState> {
    return settle(() => {
      this.#assertOpen();
      // One read transaction: the books, lines and balances it combines are of the same moment.
      return this.#db.transaction(() => poolState(this.#state, this.contracts))();
    });
  }

  events(cursor: string | null, limit: number): Promise<EventsPage> {
    return settle(() => {
      this.#assertOpen();
      if (cursor !== null && !/^[0-9]{1,15}$/.test(cursor))
        throw new SvcError('BAD_REQUEST', 'cursor must be the id of an event', { source: 'ledger' });
      const from = cursor === null ? 0 : Number(cursor);
      const count = Number.isFinite(limit) ? Math.min(MAX_LEDGER_EVENTS_PAGE, Math.max(0, Math.floor(limit))) : 0;
      const events = count === 0 ? [] : this.#state.events(from, count);
      return { events, cursor: events.at(-1)?.id ?? cursor };
    });
  }

  claim(args: ClaimArgs, signer: Keypair): Promise<TxResult> {
    return this.#submitAs(signer, 'channel.claim', claimArgs(args));
  }

  claimMany(rows: readonly ClaimRow[], signer: Keypair): Promise<TxResult> {
    return this.#submitAs(signer, 'channel.claim_many', claimManyArgs(rows));
  }

  refund(args: RefundArgs, signer: Keypair): Promise<TxResult> {
    return this.#submitAs(signer, 'channel.refund', refundArgs(args));
  }

  /** A tx of `signer`: the sequence number is read and used in one step, so its txs never collide. */
  #submitAs(signer: Keypair, op: string, args: Record<string, unknown>): Promise<TxResult> {
    return settle(() => {
      this.#assertOpen();
      const body = { source: signer.address, seq: this.#state.seq(signer.address) + 1, op, args };
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
      if (!isAddress(address))
        throw new SvcError('BAD_REQUEST', 'address must be a G… or C… address', { source: 'ledger' });
      return this.#mint(address, faucetAmount(this.#faucet, amount));
    });
  }

  close(): Promise<void> {
    return settle(() => {
      if (this.#closed) return;
      this.#closed = true;
      this.#db.close();
      this.#lock.release();
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new LedgerUnavailable('the local ledger is closed');
  }

  /** Checks everything that refuses a tx, then applies it atomically. */
  #apply(input: unknown): TxResult {
    const parsed = safeParse(SignedLedgerTxSchema, input);
    if (!parsed.success) refuse(`malformed transaction: ${describeIssues(parsed.error)}`);
    const tx = parsed.data;
    const op = this.#ops.get(tx.op) ?? refuse(`unknown op ${JSON.stringify(tx.op)}`);
    const args = safeParse(op.args, tx.args);
    if (!args.success) refuse(`bad args for ${tx.op}: ${describeIssues(args.error)}`);
    const hash = this.#hash(tx);
    // A G… source's key is its address: checked before the write lock. A smart account's keys are
    // state, read under the lock so that a concurrent set_policy cannot slip in between.
    const signer = isAccountAddress(tx.source) ? this.#verifyAccount(tx) : undefined;
    return this.#db
      .transaction((): TxResult => {
        const ctxSigner = signer ?? this.#verifySmartAccount(tx);
        const expected = this.#state.seq(tx.source) + 1;
        if (tx.seq !== expected)
          refuse(`seq ${tx.seq} is not the next sequence number of ${tx.source} (expected ${expected})`);
        this.#state.setSeq(tx.source, tx.seq);
        const ctx = this.#context(tx.source, hash, ctxSigner);
        const outcome = this.#run(op, ctx, args.data);
        const record = { hash, ledger: ctx.ledger, source: tx.source, op: tx.op, ts: ctx.ts };
        const result: TxResult =
          outcome.status === 'FAILED'
            ? { ...record, status: 'FAILED', code: outcome.code, message: outcome.message, events: [] }
            : {
                ...record,
                status: 'SUCCESS',
                ...(outcome.result ? { result: outcome.result } : {}),
                events: ctx.events,
              };
        this.#state.insertTx({ ...result, seq: tx.seq, args: tx.args, signature: tx.signature });
        return result;
      })
      .immediate();
  }

  /** The tx hash (what its signature covers). */
  #hash(tx: SignedLedgerTx): string {
    try {
      return txHash(this.passphrase, tx);
    } catch {
      // RFC 8785 cannot encode NaN, Infinity or bigint: such a tx has no hash to sign.
      return refuse('the transaction is not serialisable as RFC 8785 JSON');
    }
  }

  #signedBy(tx: SignedLedgerTx, key: string): boolean {
    return verifyLedgerTx(publicKeyFromAccount(key), this.passphrase, tx);
  }

  /** A `G…` source signs with its own key. */
  #verifyAccount(tx: SignedLedgerTx): TxSigner {
    if (!this.#signedBy(tx, tx.source)) refuse(`bad signature: the transaction is not signed by ${tx.source}`);
    return { key: tx.source, role: 'source' };
  }

  /**
   * A `C…` source must be a smart account, and the signature must verify under its owner key
   * (tried first: the owner is never limited) or the agent key of its current policy. Anything
   * else is refused like any bad signature, with no effect; the policy itself is checked when the
   * op runs, where a failure consumes the seq (agent-guard.ts).
   */
  #verifySmartAccount(tx: SignedLedgerTx): TxSigner {
    const account =
      this.#state.smartAccounts.get(tx.source) ??
      refuse(`source ${tx.source} is not a smart account: no key signs for it`);
    if (this.#signedBy(tx, account.owner)) return { key: account.owner, role: 'owner' };
    const agent = account.policy?.agentKey;
    if (agent !== undefined && this.#signedBy(tx, agent)) return { key: agent, role: 'agent' };
    return refuse(`bad signature: the transaction is signed by neither the owner nor the agent key of ${tx.source}`);
  }

  #context(source: string, hash: string, signer?: TxSigner): OpContext {
    const ledger = this.#clock.latest();
    const ts = new Date(this.#clock.now()).toISOString();
    return new OpContext({
      env: this.#env,
      state: this.#state,
      source,
      tx: hash,
      ledger,
      ts,
      ...(signer ? { signer } : {}),
    });
  }

  /**
   * The op in a savepoint: a contract failure undoes its effects but keeps the consumed seq. An
   * agent-signed tx first passes its account's freeze and policy expiry (agent-guard.ts).
   */
  #run(op: OpDefinition, ctx: OpContext, args: unknown): Outcome {
    const apply = () => {
      ctx.agent?.admit();
      return op.apply(ctx, args);
    };
    try {
      return { status: 'SUCCESS', result: this.#db.transaction(apply)() };
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
        const hash = toHex(
          sha256(concatBytes(utf8(FAUCET_DOMAIN), networkId(this.passphrase), utf8(`${grant}:${address}:${amount}`))),
        );
        const ctx = this.#context(this.contracts.asset, hash);
        try {
          ctx.mint(address, amount);
        } catch (err) {
          if (err instanceof ContractError) throw new SvcError('BAD_REQUEST', err.message, { source: 'ledger' });
          throw err;
        }
        const result = { amount: amount.toString(), balance: ctx.balance(address).toString() };
        const record = { hash, ledger: ctx.ledger, source: ctx.source, op: 'faucet', ts: ctx.ts };
        this.#state.insertTx({
          ...record,
          seq: null,
          args: { address, amount: amount.toString() },
          signature: null,
          status: 'SUCCESS',
          result,
        });
        this.#state.insertGrant(address, nowMs, hash);
        return { ...record, status: 'SUCCESS', result, events: ctx.events };
      })
      .immediate();
  }
}
