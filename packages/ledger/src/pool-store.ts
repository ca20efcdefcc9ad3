// Typed reads and writes of the credit pool's tables (pool_totals, pool_positions, pool_lines).
// Like LedgerState, it stores and decides nothing: the pool ops (ops/pool*.ts) hold the rules.
// Amounts cross this boundary as bigint and are stored as decimal strings.
import type Database from 'better-sqlite3';

/** The pool's own books. `idle` is what the pool accounts for, not its token balance (see ops/pool-book.ts). */
export interface PoolTotals {
  idle: bigint;
  totalShares: bigint;
}

/** An open credit line as stored: what was lent and what is owed (principal + fee). */
export interface StoredLine {
  account: string;
  principal: bigint;
  debt: bigint;
  openedLedger: number;
  openedAt: string;
  openedTx: string;
}

interface LineRow {
  account: string;
  principal: string;
  debt: string;
  opened_ledger: number;
  opened_at: string;
  opened_tx: string;
}

function toLine(row: LineRow): StoredLine {
  return {
    account: row.account,
    principal: BigInt(row.principal),
    debt: BigInt(row.debt),
    openedLedger: row.opened_ledger,
    openedAt: row.opened_at,
    openedTx: row.opened_tx,
  };
}

export class PoolStore {
  private readonly stmt;

  constructor(db: Database.Database) {
    this.stmt = {
      totalsGet: db.prepare<[], { idle: string; total_shares: string }>(
        'SELECT idle, total_shares FROM pool_totals WHERE id = 1',
      ),
      totalsSet: db.prepare(
        `INSERT INTO pool_totals (id, idle, total_shares) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET idle = excluded.idle, total_shares = excluded.total_shares`,
      ),
      positionGet: db.prepare<[string], { shares: string }>('SELECT shares FROM pool_positions WHERE address = ?'),
      positionSet: db.prepare(
        'INSERT INTO pool_positions (address, shares) VALUES (?, ?) ON CONFLICT (address) DO UPDATE SET shares = excluded.shares',
      ),
      positionDelete: db.prepare('DELETE FROM pool_positions WHERE address = ?'),
      positions: db.prepare<[], { address: string; shares: string }>(
        'SELECT address, shares FROM pool_positions ORDER BY address',
      ),
      lineGet: db.prepare<[string], LineRow>('SELECT * FROM pool_lines WHERE account = ?'),
      lineInsert: db.prepare(
        `INSERT INTO pool_lines (account, principal, debt, opened_ledger, opened_at, opened_tx)
         VALUES (@account, @principal, @debt, @openedLedger, @openedAt, @openedTx)`,
      ),
      lineDelete: db.prepare('DELETE FROM pool_lines WHERE account = ?'),
      lines: db.prepare<[], LineRow>('SELECT * FROM pool_lines ORDER BY opened_ledger, account'),
    };
  }

  /** The pool's books; all zero before the first deposit. */
  totals(): PoolTotals {
    const row = this.stmt.totalsGet.get();
    return row ? { idle: BigInt(row.idle), totalShares: BigInt(row.total_shares) } : { idle: 0n, totalShares: 0n };
  }

  setTotals(totals: PoolTotals): void {
    this.stmt.totalsSet.run(totals.idle.toString(10), totals.totalShares.toString(10));
  }

  shares(address: string): bigint {
    const row = this.stmt.positionGet.get(address);
    return row ? BigInt(row.shares) : 0n;
  }

  /** Sets a holder's shares; 0 removes the position. */
  setShares(address: string, shares: bigint): void {
    if (shares === 0n) this.stmt.positionDelete.run(address);
    else this.stmt.positionSet.run(address, shares.toString(10));
  }

  /** Every holder with shares, by address. */
  positions(): Array<{ address: string; shares: bigint }> {
    return this.stmt.positions.all().map((row) => ({ address: row.address, shares: BigInt(row.shares) }));
  }

  line(account: string): StoredLine | null {
    const row = this.stmt.lineGet.get(account);
    return row ? toLine(row) : null;
  }

  insertLine(line: StoredLine): void {
    const { account, openedLedger, openedAt, openedTx } = line;
    this.stmt.lineInsert.run({
      account,
      openedLedger,
      openedAt,
      openedTx,
      principal: line.principal.toString(10),
      debt: line.debt.toString(10),
    });
  }

  deleteLine(account: string): void {
    const info = this.stmt.lineDelete.run(account);
    if (info.changes !== 1) throw new Error(`no open credit line of ${account} to delete`);
  }

  /** Every open line, oldest first. */
  lines(): StoredLine[] {
    return this.stmt.lines.all().map(toLine);
  }
}
