// Node's own metrics (CPU, memory, event-loop delay, garbage collection, handles) describe the
// process, not one facilitator in it, and some of them start a monitor that runs for the life of the
// process: one registry per process, made by the first facilitator that serves metrics.
import { Registry, collectDefaultMetrics } from 'prom-client';

let registry: Registry | null = null;

export function processMetrics(): Registry {
  if (registry === null) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
