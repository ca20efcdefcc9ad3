// The "#transport" default (no Node modules: workers, Deno without the node condition, browsers):
// no transport of its own, so the meter calls the facilitator with fetch (transport.ts).
import type { PostJson } from './transport.js';

export const transport = 'fetch';

export function nativePost(): PostJson | null {
  return null;
}
