// Leadership: the work exactly one instance may do at a time — the claim scheduler, the ledger
// watcher and the float sampler. One process on SQLite is always the leader; instances on one
// PostgreSQL elect one with an advisory lock (postgres-leadership.ts).
//
//   const leadership = new SoleLeadership();          // or await PostgresLeadership.open(…)
//   leadership.run({ gain: async () => start(), lose: async () => stop() });
//   leadership.isLeader;                              // for /health
//   await leadership.close();                         // loses (stops the work) first

export interface LeaderWork {
  /** Called when this instance becomes the leader: start the singleton work. */
  gain(): Promise<void>;
  /** Called when it stops being the leader (or closes): stop it, and wait until it has stopped. */
  lose(): Promise<void>;
}

export interface Leadership {
  readonly isLeader: boolean;
  readonly mode: 'sole' | 'elected';
  run(work: LeaderWork): void;
  close(): Promise<void>;
}

/** One instance, always the leader. */
export class SoleLeadership implements Leadership {
  readonly mode = 'sole' as const;
  #work: LeaderWork | null = null;
  #leader = false;

  get isLeader(): boolean {
    return this.#leader;
  }

  run(work: LeaderWork): void {
    this.#work = work;
    this.#leader = true;
    void work.gain();
  }

  async close(): Promise<void> {
    if (this.#leader && this.#work) await this.#work.lose();
    this.#leader = false;
  }
}
