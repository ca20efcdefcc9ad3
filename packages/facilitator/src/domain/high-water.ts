// What this data directory has seen of the store: the last event id, kept in a small file beside
// the store and rewritten every few seconds. Event ids only grow, so a store whose last event is
// below the mark has lost writes — an empty file in place of the old one, or an older copy put
// back — and is not to be trusted where the ledger cannot be read to check it (reconciler.ts).
// The mark also remembers that such a store still owes its reconciliation, across restarts, until
// the reconciler resets it to the reconciled store.
//
//   const mark = new HighWater(path.join(dataDir, HIGH_WATER_FILE), store, log);
//   const seen = mark.read(); // null: no mark yet (a new data directory)
//   mark.start(2000);
import fs from 'node:fs';
import path from 'node:path';
import type { Store } from '../store/port.js';

export const HIGH_WATER_FILE = 'facilitator.high-water.json';

export interface HighWaterMark {
  /** The highest event id the store was seen to hold. */
  lastEventId: number;
  /** The store was found behind the mark and has not been reconciled with the ledger since. */
  pending: boolean;
}

export interface HighWaterLog {
  warn(obj: object, msg: string): void;
}

export class HighWater {
  private timer: NodeJS.Timeout | null = null;
  private mark: HighWaterMark | null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly store: Pick<Store, 'lastEventId'>,
    private readonly log: HighWaterLog,
  ) {
    this.mark = readMark(file);
  }

  /** The mark as the data directory held it when this process started (null: none yet). */
  read(): HighWaterMark | null {
    return this.mark;
  }

  /** Keeps the mark up to date every `everyMs`. */
  start(everyMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.update(), everyMs);
    this.timer.unref();
  }

  /** Stops the timer after a last update. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.update();
  }

  /** Raises the mark to the store's last event id (never lowers it). */
  update(): Promise<void> {
    return this.queue(async () => {
      const id = await this.store.lastEventId();
      if (this.mark && id <= this.mark.lastEventId) return;
      await this.write({ lastEventId: id, pending: this.mark?.pending ?? false });
    });
  }

  /** Records that the store is behind the mark and owes its reconciliation (kept across restarts). */
  owe(): Promise<void> {
    return this.queue(async () => {
      await this.write({ lastEventId: this.mark?.lastEventId ?? 0, pending: true });
    });
  }

  /** The store is reconciled: the mark becomes the store's own last event id, lower or not. */
  reset(): Promise<void> {
    return this.queue(async () => {
      await this.write({ lastEventId: await this.store.lastEventId(), pending: false });
    });
  }

  private queue(step: () => Promise<void>): Promise<void> {
    this.writing = this.writing.then(step).catch((err: unknown) => {
      this.log.warn({ err }, 'could not update the store’s high-water mark');
    });
    return this.writing;
  }

  private async write(mark: HighWaterMark): Promise<void> {
    // Written beside and renamed over the mark: a crash leaves the old mark or the new, never half.
    const tmp = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${process.pid}.tmp`);
    await fs.promises.writeFile(tmp, `${JSON.stringify({ ...mark, at: new Date().toISOString() })}\n`);
    await fs.promises.rename(tmp, this.file);
    this.mark = mark;
  }
}

function readMark(file: string): HighWaterMark | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { lastEventId?: unknown; pending?: unknown };
    const id = parsed.lastEventId;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return null;
    return { lastEventId: id, pending: parsed.pending === true };
  } catch {
    return null;
  }
}
