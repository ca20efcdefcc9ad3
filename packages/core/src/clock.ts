// The Clock port, one for every package: wall time in milliseconds since the epoch. Code that
// reads the time takes a Clock, so tests move a fake one instead of sleeping.

export interface Clock {
  now(): number;
}

export const SYSTEM_CLOCK: Clock = { now: () => Date.now() };
