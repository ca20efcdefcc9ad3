// The ledger clock: a ledger closes every `ledgerSeconds` (docs/protocol.md#networks-and-ledgers). Instead of a timer,
// the latest ledger is computed from a persisted anchor (ledger number, wall time, seconds per
// ledger), so time keeps passing while the process is down, as on a real network, and tests
// move a fake clock instead of sleeping.

import { SYSTEM_CLOCK } from '@svc/core';
import type { Clock } from '@svc/core';

export { SYSTEM_CLOCK };
export type { Clock };

export interface ClockAnchor {
  ledger: number;
  timeMs: number;
  ledgerSeconds: number;
}

export function assertLedgerSeconds(value: number): void {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`ledgerSeconds must be a positive number, got ${value}`);
}

export class LedgerClock {
  #anchor: ClockAnchor;
  #highWater: number;

  /** `floor` is the highest ledger already used (a recorded transaction), never gone back on. */
  constructor(
    anchor: ClockAnchor,
    private readonly clock: Clock,
    floor = anchor.ledger,
  ) {
    this.#anchor = anchor;
    this.#highWater = Math.max(floor, anchor.ledger);
  }

  get anchor(): ClockAnchor {
    return this.#anchor;
  }

  get ledgerSeconds(): number {
    return this.#anchor.ledgerSeconds;
  }

  now(): number {
    return this.clock.now();
  }

  /**
   * The latest closed ledger. Never decreases, even if the wall clock steps back (NTP, a fake
   * clock, a restart on another machine): a ledger number once handed out stays valid.
   */
  latest(): number {
    const { ledger, timeMs, ledgerSeconds } = this.#anchor;
    const elapsed = Math.max(0, this.clock.now() - timeMs);
    const computed = ledger + Math.floor(elapsed / (ledgerSeconds * 1000));
    if (computed > this.#highWater) this.#highWater = computed;
    return this.#highWater;
  }

  /**
   * Continues from the current ledger at a new pace; the caller persists the returned anchor.
   * Used when a data directory is reopened with a different `ledgerSeconds`.
   */
  reanchor(ledgerSeconds: number): ClockAnchor {
    assertLedgerSeconds(ledgerSeconds);
    this.#anchor = { ledger: this.latest(), timeMs: this.clock.now(), ledgerSeconds };
    return this.#anchor;
  }
}
