// Reaching the ledger at start without depending on it (before, with LEDGER_URL unreachable,
// `svc start` exited, so a restart during a ledger outage became a full outage). The ledger's
// description and its time are kept in the store's meta: a restart while the ledger is down starts
// degraded from them, exactly as a running instance behaves, and catches up when the ledger answers.
import { LedgerInfoSchema, safeParse } from '@svc/core';
import { LedgerUnavailable } from '@svc/ledger';
import type { Ledger, LedgerInfo } from '@svc/ledger';
import { z } from 'zod';
import type { Store } from '../store/port.js';
import type { LatestLedger } from './latest-ledger.js';

export const LEDGER_INFO_KEY = 'ledger.info';
export const LEDGER_TIME_KEY = 'ledger.time';
const WAIT_RETRY_MS = 2_000;
const WAIT_LOG_EVERY = 5;

const SavedTimeSchema = z.object({ ledger: z.number().int().min(0), wallMs: z.number() });

export interface ConnectionLog {
  warn(obj: object, msg: string): void;
}

/**
 * The ledger's description: read from the ledger (and saved), or, when it does not answer, the one
 * an earlier run saved. A data directory that never reached its ledger has nothing to go on: then
 * this waits for the ledger, saying so, rather than exiting.
 */
export async function ledgerInfoOf(
  ledger: Ledger,
  store: Store,
  log: ConnectionLog,
  retryMs = WAIT_RETRY_MS,
): Promise<LedgerInfo> {
  for (let attempt = 0; ; attempt++) {
    try {
      const info = await ledger.info();
      await store.write([{ op: 'meta.set', key: LEDGER_INFO_KEY, value: JSON.stringify(info) }]);
      return info;
    } catch (err) {
      if (!(err instanceof LedgerUnavailable)) throw err;
      const saved = await savedInfo(store);
      if (saved) {
        log.warn(
          { reason: err.message },
          'the ledger does not answer: starting degraded from what the last run saw; catching up when it answers',
        );
        return saved;
      }
      if (attempt % WAIT_LOG_EVERY === 0)
        log.warn(
          { reason: err.message },
          'the ledger does not answer and this store has never reached it: waiting for it',
        );
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
}

async function savedInfo(store: Store): Promise<LedgerInfo | null> {
  const raw = await store.getMeta(LEDGER_INFO_KEY);
  const parsed = raw === null ? null : safeParse(LedgerInfoSchema, parseJson(raw));
  return parsed?.success ? parsed.data : null;
}

/** Reads the ledger's time now; if it does not answer, starts from the time the last run saved. */
export async function startLatestLedger(clock: LatestLedger, store: Store, wallNow: number): Promise<void> {
  try {
    await clock.refresh();
  } catch (err) {
    if (!(err instanceof LedgerUnavailable)) throw err;
    const raw = await store.getMeta(LEDGER_TIME_KEY);
    const saved = raw === null ? null : safeParse(SavedTimeSchema, parseJson(raw));
    if (saved?.success) clock.restore(saved.data, wallNow);
  }
}

/** Saves the clock's reading, for a restart while the ledger is down. */
export async function saveLedgerTime(clock: LatestLedger, store: Store, wallNow: number): Promise<void> {
  const saved = clock.save(wallNow);
  if (saved) await store.write([{ op: 'meta.set', key: LEDGER_TIME_KEY, value: JSON.stringify(saved) }]);
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return null;
  }
}
