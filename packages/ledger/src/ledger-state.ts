// Typed reads and writes of the ledger's tables. No rules live here: the ops decide, this module
// only stores. Every amount crosses this boundary as bigint and is stored as a decimal string.
import type Database from 'better-sqlite3';
import { U64_MAX } from '@svc/core';
import type { LedgerBalance, LedgerChannel, LedgerEvent, TxResult, TxStatus } from './port.js';
import { PoolStore } from './pool-store.js';
import { SmartAccountStore } from './smart-account-store.js';

/**
 * A channel id (u64) as its row's key: SQLite's INTEGER is an i64, so the same 64 bits read as
 * signed. Ids below 2^63 (every id of a file made before derived ids) are stored unchanged.
 */
const rowId = (id: bigint): bigint => BigInt.asIntN(64, id);
const channelIdOfRow = (key: bigint): bigint => BigInt.asUintN(64, key);

interface ChannelRow {
  id: bigint;
  payer: string;
  payee: string;
  asset: string;
  deposit: string;
  claimed: string;
  voucher_key: string;
  expiry_ledger: bigint;
  open: bigint;
  receiver_authorizer: string | null;
  refund_nonce: string;
}

interface EventRow {
  id: number;
  tx: string;
  ledger: number;
  ts: string;
  type: string;
  data: string;
}

interface TxRow {
  hash: string;
  source: string;
  op: string;
  status: string;
  code: number | null;
  message: string | null;
  result: string | null;
  ledger: number;
  ts: string;
}

export interface NewEvent {
  tx: string;
  ledger: number;
  ts: string;
  type: string;
  data: Record<string, unknown>;
}

export interface NewTx {
  hash: string;
  source: string;
  seq: number | null;
  op: string;
  args: Record<string, unknown>;
  signature: string | null;
  status: TxStatus;
  code?: number;
  message?: string;
  result?: Record<string, unknown>;
  ledger: number;
  ts: string;
}

function toEvent(row: EventRow): LedgerEvent {
  return {
    id: String(row.id),
    ledger: row.ledger,
    tx: row.tx,
    ts: row.ts,
    type: row.type,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

function toChannel(row: ChannelRow): LedgerChannel {
  return {
    id: channelIdOfRow(row.id),
    payer: row.payer,
    payee: row.payee,
    asset: row.asset,
    deposit: BigInt(row.deposit),
    claimed: BigInt(row.claimed),
    voucherKey: row.voucher_key,
    receiverAuthorizer: row.receiver_authorizer,
    expiryLedger: Number(row.expiry_ledger),
    refundNonce: BigInt(row.refund_nonce),
    open: row.open === 1n,
  };
}

export class LedgerState {
  private readonly stmt;
  /** The smart accounts made by `account.create` (docs/protocol.md#channels-and-records). */
  readonly smartAccounts: SmartAccountStore;
  /** The credit pool's books, positions and open lines (docs/protocol.md#the-local-ledger pool.*). */
  readonly pool: PoolStore;

  constructor(readonly db: Database.Database) {
    this.smartAccounts = new SmartAccountStore(db);
    this.pool = new PoolStore(db);
    this.stmt = {
      metaGet: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      metaSet: db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      seqGet: db.prepare<[string], { seq: number }>('SELECT seq FROM accounts WHERE address = ?'),
      seqSet: db.prepare(
        'INSERT INTO accounts (address, seq) VALUES (?, ?) ON CONFLICT (address) DO UPDATE SET seq = excluded.seq',
      ),
      balanceGet: db.prepare<[string, string], { amount: string }>(
        'SELECT amount FROM balances WHERE address = ? AND asset = ?',
      ),
      balanceSet: db.prepare(
        'INSERT INTO balances (address, asset, amount) VALUES (?, ?, ?) ON CONFLICT (address, asset) DO UPDATE SET amount = excluded.amount',
      ),
      balancesOf: db.prepare<[string], { asset: string; amount: string }>(
        'SELECT asset, amount FROM balances WHERE address = ? ORDER BY asset',
      ),
      channelGet: db.prepare<[bigint], ChannelRow>('SELECT * FROM channels WHERE id = ?').safeIntegers(true),
      channelInsert: db.prepare(
        `INSERT INTO channels (id, payer, payee, asset, deposit, claimed, voucher_key, expiry_ledger, open, receiver_authorizer, refund_nonce)
         VALUES (@id, @payer, @payee, @asset, @deposit, @claimed, @voucherKey, @expiryLedger, @open, @receiverAuthorizer, @refundNonce)`,
      ),
      channelUpdate: db.prepare(
        'UPDATE channels SET deposit = @deposit, claimed = @claimed, expiry_ledger = @expiryLedger, open = @open, refund_nonce = @refundNonce WHERE id = @id',
      ),
      eventInsert: db.prepare('INSERT INTO events (tx, ledger, ts, type, data) VALUES (?, ?, ?, ?, ?)'),
      eventsAfter: db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?'),
      eventsOfTx: db.prepare<[string], EventRow>('SELECT * FROM events WHERE tx = ? ORDER BY id'),
      txInsert: db.prepare(
        `INSERT INTO txs (hash, source, seq, op, args, signature, status, code, message, result, ledger, ts)
         VALUES (@hash, @source, @seq, @op, @args, @signature, @status, @code, @message, @result, @ledger, @ts)`,
      ),
      txGet: db.prepare<[string], TxRow>(
        'SELECT hash, source, op, status, code, message, result, ledger, ts FROM txs WHERE hash = ?',
      ),
      txMaxLedger: db.prepare<[], { ledger: number | null }>('SELECT MAX(ledger) AS ledger FROM txs'),
      grantsSince: db.prepare<[number], { n: number; oldest: number | null }>(
        'SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM faucet_grants WHERE at_ms > ?',
      ),
      grantsOfSince: db.prepare<[string, number], { n: number; oldest: number | null }>(
        'SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM faucet_grants WHERE address = ? AND at_ms > ?',
      ),
      grantInsert: db.prepare('INSERT INTO faucet_grants (address, at_ms, tx) VALUES (?, ?, ?)'),
      grantMaxId: db.prepare<[], { id: number }>('SELECT COALESCE(MAX(id), 0) AS id FROM faucet_grants'),
    };
  }

  meta(key: string): string | undefined {
    return this.stmt.metaGet.get(key)?.value;
  }

  setMeta(key: string, value: string): void {
    this.stmt.metaSet.run(key, value);
  }

  /** The sequence number of the account's last transaction; 0 for an account never seen. */
  seq(address: string): number {
    return this.stmt.seqGet.get(address)?.seq ?? 0;
  }

  setSeq(address: string, seq: number): void {
    this.stmt.seqSet.run(address, seq);
  }

  balance(address: string, asset: string): bigint {
    const row = this.stmt.balanceGet.get(address, asset);
    return row ? BigInt(row.amount) : 0n;
  }

  setBalance(address: string, asset: string, amount: bigint): void {
    this.stmt.balanceSet.run(address, asset, amount.toString(10));
  }

  balances(address: string): LedgerBalance[] {
    return this.stmt.balancesOf.all(address).map((row) => ({ asset: row.asset, amount: BigInt(row.amount) }));
  }

  channel(id: bigint): LedgerChannel | null {
    if (id < 1n || id > U64_MAX) return null;
    const row = this.stmt.channelGet.get(rowId(id));
    return row ? toChannel(row) : null;
  }

  /** Stores a new channel under its id (the contract derives it; ops/channel.ts checks it is free). */
  insertChannel(channel: LedgerChannel): void {
    const { payer, payee, asset, voucherKey, receiverAuthorizer } = channel;
    this.stmt.channelInsert.run({
      payer,
      payee,
      asset,
      voucherKey,
      receiverAuthorizer,
      ...this.channelParams(channel),
    });
  }

  /** Writes what may change: the amounts, the expiry, the refund nonce and whether it is open. */
  updateChannel(channel: LedgerChannel): void {
    this.stmt.channelUpdate.run(this.channelParams(channel));
  }

  private channelParams(channel: LedgerChannel) {
    return {
      id: rowId(channel.id),
      deposit: channel.deposit.toString(10),
      claimed: channel.claimed.toString(10),
      expiryLedger: channel.expiryLedger,
      refundNonce: channel.refundNonce.toString(10),
      open: channel.open ? 1 : 0,
    };
  }

  insertEvent(event: NewEvent): LedgerEvent {
    const info = this.stmt.eventInsert.run(event.tx, event.ledger, event.ts, event.type, JSON.stringify(event.data));
    return {
      id: String(info.lastInsertRowid),
      ledger: event.ledger,
      tx: event.tx,
      ts: event.ts,
      type: event.type,
      data: event.data,
    };
  }

  events(after: number, limit: number): LedgerEvent[] {
    return this.stmt.eventsAfter.all(after, limit).map(toEvent);
  }

  insertTx(tx: NewTx): void {
    this.stmt.txInsert.run({
      hash: tx.hash,
      source: tx.source,
      seq: tx.seq,
      op: tx.op,
      args: JSON.stringify(tx.args),
      signature: tx.signature,
      status: tx.status,
      code: tx.code ?? null,
      message: tx.message ?? null,
      result: tx.result ? JSON.stringify(tx.result) : null,
      ledger: tx.ledger,
      ts: tx.ts,
    });
  }

  tx(hash: string): TxResult | null {
    const row = this.stmt.txGet.get(hash);
    if (!row) return null;
    return {
      hash: row.hash,
      status: row.status as TxStatus,
      ledger: row.ledger,
      source: row.source,
      op: row.op,
      ...(row.result !== null ? { result: JSON.parse(row.result) as Record<string, unknown> } : {}),
      ...(row.code !== null ? { code: row.code } : {}),
      ...(row.message !== null ? { message: row.message } : {}),
      events: this.stmt.eventsOfTx.all(hash).map(toEvent),
      ts: row.ts,
    };
  }

  /** The highest ledger any recorded transaction landed in (0 when none). */
  maxTxLedger(): number {
    return this.stmt.txMaxLedger.get()?.ledger ?? 0;
  }

  /** Faucet grants after `sinceMs`, overall or for one address, with the oldest one's time. */
  grantsSince(sinceMs: number, address?: string): { count: number; oldestMs: number | null } {
    const row =
      address === undefined ? this.stmt.grantsSince.get(sinceMs) : this.stmt.grantsOfSince.get(address, sinceMs);
    return { count: row?.n ?? 0, oldestMs: row?.oldest ?? null };
  }

  insertGrant(address: string, atMs: number, tx: string): void {
    this.stmt.grantInsert.run(address, atMs, tx);
  }

  /** The number the next faucet grant will have (grants are numbered from 1). */
  nextGrant(): number {
    return (this.stmt.grantMaxId.get()?.id ?? 0) + 1;
  }
}
