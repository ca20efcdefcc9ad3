// Whether the facilitator answers. Every request and the event stream report here; the page shows
// a banner while the facilitator is unreachable and probes it until it answers again, then tells
// the views to read everything afresh (nothing shown meanwhile is current).
export type Reachability = 'connecting' | 'up' | 'down';

const PROBE_MS = 2000;
const PROBE_PATH = '/supported';

type Listener = (state: Reachability) => void;

export class Connection {
  private current: Reachability = 'connecting';
  private readonly listeners = new Set<Listener>();
  private probe: number | null = null;

  get state(): Reachability {
    return this.current;
  }

  /** Calls `listener` on every change (not now). Returns the unsubscribe. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  up(): void {
    this.set('up');
  }

  down(): void {
    this.set('down');
    this.probe ??= window.setInterval(() => void this.tryProbe(), PROBE_MS);
  }

  private async tryProbe(): Promise<void> {
    try {
      const res = await fetch(PROBE_PATH, { cache: 'no-store' });
      if (res.ok) this.up();
    } catch {
      // still down
    }
  }

  private set(state: Reachability): void {
    if (state === 'up' && this.probe !== null) {
      window.clearInterval(this.probe);
      this.probe = null;
    }
    if (state === this.current) return;
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }
}

export const connection = new Connection();
