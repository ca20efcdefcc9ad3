// backupSqlite while another connection keeps committing: the copy is the store as it was when the
// backup began, and it is copied once (SQLite's online backup, left to itself, starts over whenever
// another connection commits between two of its steps, and under steady writes may never finish).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/index.js';
import { backupSqlite } from '../../src/store/sqlite/sqlite-backup.js';
import type { BackupProgress } from '../../src/store/sqlite/sqlite-backup.js';
import { event } from './builders.js';

/** Events of ~4 KB each: a store of ~20 MB, copied in several steps. */
const FILLER_EVENTS = 5_000;
const FILLER_BYTES = 4_000;
/** How long the writer keeps committing, whether or not the copy is done (a copy that starts over may never be). */
const WRITING_MS = 3_000;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function filledStore(dir: string): Promise<SqliteStore> {
  const store = await SqliteStore.open({ file: path.join(dir, 'facilitator.sqlite'), writer: 'inline' });
  await store.migrate();
  const pad = 'x'.repeat(FILLER_BYTES);
  for (let i = 0; i < FILLER_EVENTS; i += 500)
    await store.write(Array.from({ length: 500 }, () => ({ op: 'event' as const, event: event({ data: { pad } }) })));
  return store;
}

describe('backupSqlite beside a writer', () => {
  it('copies the store as it was when it began, once through, while another connection commits', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backup-store-'));
    dirs.push(dir);
    const store = await filledStore(dir);
    const before = await store.lastEventId();
    let copying = true;
    let written = 0;
    const until = Date.now() + WRITING_MS;
    // One commit per turn of the event loop, between the backup's steps, from another connection.
    const writer = (async () => {
      while (copying && Date.now() < until) {
        await store.write([{ op: 'event', event: event({ data: { n: written } }) }]);
        written++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const progress: BackupProgress[] = [];
    try {
      const copy = await backupSqlite({
        source: store.file,
        destination: path.join(dir, 'copy.sqlite'),
        onProgress: (p) => progress.push(p),
      });
      expect(copy.events).toBe(before);
      expect(copy.lastEventId).toBe(before);
    } finally {
      copying = false;
      await writer;
      await store.close();
    }
    expect(written).toBeGreaterThan(0);
    expect(progress.length).toBeGreaterThan(3);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!.copiedPages).toBeGreaterThanOrEqual(progress[i - 1]!.copiedPages);
    const copy = new Database(path.join(dir, 'copy.sqlite'), { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      copy.close();
    }
  });
});
