// The Clock port is @svc/core's, shared by every package; tests pass a fake one.
import type { Clock } from '@svc/core';

export type { Clock } from '@svc/core';
export { SYSTEM_CLOCK } from '@svc/core';

export function isoAt(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
