// The Idempotency-Key the meter sends with every /verify: unique per request, within the
// facilitator's rules, and ordered by time so the facilitator's index of keys grows at its end.
import { describe, expect, it } from 'vitest';
import { idempotencyKey } from '../src/facilitator-client.js';

/** What the facilitator accepts as an Idempotency-Key (routes/x402.ts). */
const FACILITATOR_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

describe('the Idempotency-Key of a paid request', () => {
  it('is 12 hex digits of the time in ms, then 32 random hex digits, as the facilitator accepts', () => {
    const key = idempotencyKey(Date.UTC(2026, 10, 26));
    expect(key).toMatch(/^[0-9a-f]{44}$/);
    expect(key).toMatch(FACILITATOR_KEY);
    expect(key.slice(0, 12)).toBe(Date.UTC(2026, 10, 26).toString(16).padStart(12, '0'));
  });

  it('never repeats, and a later key sorts after an earlier one', () => {
    const keys = Array.from({ length: 10_000 }, () => idempotencyKey(1_000));
    expect(new Set(keys).size).toBe(keys.length);
    const later = idempotencyKey(1_001);
    expect(keys.every((k) => k < later)).toBe(true);
  });
});
