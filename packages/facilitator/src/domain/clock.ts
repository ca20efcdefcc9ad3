/** The Clock port: wall time in milliseconds. Tests pass a fake one. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export function isoAt(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
