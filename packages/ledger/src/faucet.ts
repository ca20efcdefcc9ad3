// The test-funds faucet (docs/protocol.md#the-local-ledger POST /ledger/faucet): 10,000 asset units by default,
// limited per address and in total over a sliding hour. Grants are stored with the ledger, so a
// restart does not reset the limits.
import { SvcError } from '@svc/core';
import type { LedgerState } from './ledger-state.js';
import type { TxResult } from './port.js';

/** 10,000 units of a 7-decimal asset. */
export const DEFAULT_FAUCET_AMOUNT = 100_000_000_000n;
export const DEFAULT_FAUCET_PER_ADDRESS_PER_HOUR = 5;
export const DEFAULT_FAUCET_PER_HOUR = 1000;
export const FAUCET_WINDOW_MS = 3_600_000;

export interface FaucetOptions {
  /** The default grant, and the most one request may ask for. */
  amount?: bigint;
  perAddressPerHour?: number;
  totalPerHour?: number;
}

export type FaucetLimits = Required<FaucetOptions>;

/** A ledger that hands out test funds (LocalLedger, HttpLedger). */
export interface LedgerFaucet {
  /**
   * Mints `amount` (default and maximum: the faucet's amount) to `address`. Rejects with
   * SvcError BAD_REQUEST for a bad address or amount, RATE_LIMITED (with `retryAfter`) over the
   * limits.
   */
  faucet(address: string, amount?: bigint): Promise<TxResult>;
}

export function faucetLimits(options: FaucetOptions = {}): FaucetLimits {
  const limits = {
    amount: options.amount ?? DEFAULT_FAUCET_AMOUNT,
    perAddressPerHour: options.perAddressPerHour ?? DEFAULT_FAUCET_PER_ADDRESS_PER_HOUR,
    totalPerHour: options.totalPerHour ?? DEFAULT_FAUCET_PER_HOUR,
  };
  if (limits.amount <= 0n) throw new RangeError('faucet amount must be positive');
  for (const key of ['perAddressPerHour', 'totalPerHour'] as const) {
    if (!Number.isInteger(limits[key]) || limits[key] < 0)
      throw new RangeError(`faucet ${key} must be a non-negative integer`);
  }
  return limits;
}

/** The amount a request asks for, or a BAD_REQUEST saying why it cannot have it. */
export function faucetAmount(limits: FaucetLimits, requested: bigint | undefined): bigint {
  const amount = requested ?? limits.amount;
  if (amount <= 0n || amount > limits.amount) {
    throw new SvcError('BAD_REQUEST', `The faucet grants between 1 and ${limits.amount} base units.`, {
      source: 'ledger',
    });
  }
  return amount;
}

/** Throws RATE_LIMITED when a grant to `address` now would pass a limit. */
export function checkFaucetLimits(state: LedgerState, limits: FaucetLimits, address: string, nowMs: number): void {
  const since = nowMs - FAUCET_WINDOW_MS;
  const checks = [
    {
      window: state.grantsSince(since, address),
      limit: limits.perAddressPerHour,
      what: `${limits.perAddressPerHour} grants per address per hour`,
    },
    {
      window: state.grantsSince(since),
      limit: limits.totalPerHour,
      what: `${limits.totalPerHour} grants per hour in total`,
    },
  ];
  for (const { window, limit, what } of checks) {
    if (window.count < limit) continue;
    // The oldest grant leaves the window first; Retry-After is whole seconds, at least one.
    const waitMs = window.oldestMs === null ? FAUCET_WINDOW_MS : window.oldestMs + FAUCET_WINDOW_MS - nowMs;
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    throw new SvcError('RATE_LIMITED', `The faucet allows ${what}; retry in ${retryAfter} s.`, {
      source: 'ledger',
      retryAfter,
    });
  }
}
