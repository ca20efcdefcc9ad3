import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore, SQLITE_FILE_NAME, SqliteStore, openStore } from '../../src/store/index.js';
import { pgEnabled, withPgDatabase } from '../helpers/pg.js';
import { channel } from './builders.js';

const PG = await pgEnabled();

describe('openStore', () => {
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-open-'));
    dirs.push(dir);
    return dir;
  };

  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('opens a migrated SQLite store in the data directory when DATABASE_URL is unset, creating the directory', async () => {
    const dataDir = path.join(tempDir(), 'missing', 'data');
    const store = await openStore({ dataDir });
    expect(store).toBeInstanceOf(SqliteStore);
    expect(store.kind).toBe('sqlite');
    expect((await store.write([{ op: 'channel.insert', channel: channel(1n) }])).ok).toBe(true);
    await store.close();
    expect(fs.existsSync(path.join(dataDir, SQLITE_FILE_NAME))).toBe(true);
    const again = await openStore({ databaseUrl: '', dataDir });
    expect(await again.getChannel(1n)).toEqual(channel(1n));
    await again.close();
  });

  it('refuses a DATABASE_URL that is not PostgreSQL, naming the variable', async () => {
    await expect(openStore({ databaseUrl: 'mysql://root@localhost/svc', dataDir: tempDir() })).rejects.toThrow(
      /DATABASE_URL/,
    );
    await expect(openStore({ databaseUrl: 'sqlite:///tmp/x.db', dataDir: tempDir() })).rejects.toThrow(/DATABASE_URL/);
  });

  it.runIf(PG)('opens a migrated PostgresStore for postgres:// and postgresql:// URLs', async () => {
    await withPgDatabase(async (url) => {
      for (const databaseUrl of [url, url.replace(/^postgres:/, 'postgresql:')]) {
        const store = await openStore({ databaseUrl, dataDir: tempDir() });
        expect(store).toBeInstanceOf(PostgresStore);
        expect((await store.write([{ op: 'meta.set', key: 'k', value: databaseUrl }])).ok).toBe(true);
        await store.close();
      }
    });
  });
});
