import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LEDGER_DB_FILE, openLedgerDb } from '../src/ledger-db.js';
import { tempDir } from './helpers/actors.js';

describe('the ledger database file', () => {
  it('is opened in WAL mode with synchronous = FULL (this is money)', () => {
    const tmp = tempDir();
    const db = openLedgerDb(path.join(tmp.dir, 'nested'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    db.close();
    const again = new Database(path.join(tmp.dir, 'nested', LEDGER_DB_FILE), { readonly: true });
    expect(again.pragma('journal_mode', { simple: true })).toBe('wal');
    again.close();
    tmp.remove();
  });

  it('stores amounts as exact decimal text: SQLite cannot coerce them to floats', () => {
    const tmp = tempDir();
    const db = openLedgerDb(tmp.dir);
    const huge = ((1n << 127n) - 1n).toString();
    db.prepare('INSERT INTO balances (address, asset, amount) VALUES (?, ?, ?)').run('G', 'C', huge);
    expect(db.prepare('SELECT amount, typeof(amount) AS t FROM balances').get()).toEqual({ amount: huge, t: 'text' });
    const insert = db.prepare('INSERT INTO balances (address, asset, amount) VALUES (?, ?, ?)');
    for (const bad of [1.5, 7, '-1', '', '1e5', ' 1', '1'.repeat(40)])
      expect(() => insert.run('G2', 'C', bad), String(bad)).toThrow(/CHECK/);
    db.close();
    tmp.remove();
  });

  it('refuses a file written by a newer schema', () => {
    const tmp = tempDir();
    fs.mkdirSync(tmp.dir, { recursive: true });
    const raw = new Database(path.join(tmp.dir, LEDGER_DB_FILE));
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => openLedgerDb(tmp.dir)).toThrow(/schema version 99/);
    tmp.remove();
  });
});
