// Typed reads and writes of the smart_accounts table (docs/protocol.md#channels-and-records account record). Like
// LedgerState, it stores and decides nothing: the account ops and the agent guard hold the rules.
import type Database from 'better-sqlite3';
import type { AccountPolicy, SmartAccountState } from './port.js';

/** A smart account as stored: its state plus its address. */
export interface StoredSmartAccount extends SmartAccountState {
  address: string;
}

interface SmartAccountRow {
  address: string;
  owner: string;
  agent_key: string | null;
  per_tx_cap: string | null;
  daily_cap: string | null;
  payees: string | null;
  expires_ledger: number | null;
  frozen: number;
  spent_today: string;
  day: string;
}

function toPolicy(row: SmartAccountRow): AccountPolicy | null {
  if (
    row.agent_key === null ||
    row.per_tx_cap === null ||
    row.daily_cap === null ||
    row.payees === null ||
    row.expires_ledger === null
  )
    return null;
  return {
    agentKey: row.agent_key,
    perTxCap: BigInt(row.per_tx_cap),
    dailyCap: BigInt(row.daily_cap),
    payees: JSON.parse(row.payees) as string[],
    expiresLedger: row.expires_ledger,
  };
}

function toAccount(row: SmartAccountRow): StoredSmartAccount {
  return {
    address: row.address,
    owner: row.owner,
    policy: toPolicy(row),
    frozen: row.frozen === 1,
    spentToday: BigInt(row.spent_today),
    day: row.day,
  };
}

function params(account: StoredSmartAccount) {
  const p = account.policy;
  return {
    address: account.address,
    owner: account.owner,
    agentKey: p?.agentKey ?? null,
    perTxCap: p?.perTxCap.toString(10) ?? null,
    dailyCap: p?.dailyCap.toString(10) ?? null,
    payees: p ? JSON.stringify(p.payees) : null,
    expiresLedger: p?.expiresLedger ?? null,
    frozen: account.frozen ? 1 : 0,
    spentToday: account.spentToday.toString(10),
    day: account.day,
  };
}

export class SmartAccountStore {
  private readonly stmt;

  constructor(db: Database.Database) {
    this.stmt = {
      get: db.prepare<[string], SmartAccountRow>('SELECT * FROM smart_accounts WHERE address = ?'),
      insert: db.prepare(
        `INSERT INTO smart_accounts (address, owner, agent_key, per_tx_cap, daily_cap, payees, expires_ledger, frozen, spent_today, day, created_tx)
         VALUES (@address, @owner, @agentKey, @perTxCap, @dailyCap, @payees, @expiresLedger, @frozen, @spentToday, @day, @createdTx)`,
      ),
      update: db.prepare(
        `UPDATE smart_accounts SET agent_key = @agentKey, per_tx_cap = @perTxCap, daily_cap = @dailyCap, payees = @payees,
         expires_ledger = @expiresLedger, frozen = @frozen, spent_today = @spentToday, day = @day WHERE address = @address AND owner = @owner`,
      ),
    };
  }

  get(address: string): StoredSmartAccount | null {
    const row = this.stmt.get.get(address);
    return row ? toAccount(row) : null;
  }

  insert(account: StoredSmartAccount, createdTx: string): void {
    this.stmt.insert.run({ ...params(account), createdTx });
  }

  /** Writes policy, frozen flag and spend; the owner never changes. */
  update(account: StoredSmartAccount): void {
    const info = this.stmt.update.run(params(account));
    if (info.changes !== 1) throw new Error(`smart account ${account.address} of ${account.owner} does not exist`);
  }
}
