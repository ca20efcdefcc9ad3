// A clock the test moves by hand: "fake the clock, not whole modules" (docs/architecture.md#tests).
import type { Clock } from '../../src/index.js';

export const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

export class FakeClock implements Clock {
  constructor(public ms = T0) {}

  now(): number {
    return this.ms;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}
