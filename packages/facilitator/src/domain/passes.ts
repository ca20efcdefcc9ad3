// One pass at a time, and a caller always gets a pass that starts after its call: a pass already
// running may have read its state before the caller's change, so callers during a pass share the
// next one. The claim scheduler and the ledger watcher both run this way.
//
//   const passes = new Passes(() => this.catchUp());
//   await passes.run();      // a fresh pass, or the one queued behind the running pass
//   await passes.ended();    // the pass under way has ended, failed or not (for stop())

export class Passes {
  #current: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  constructor(private readonly pass: () => Promise<void>) {}

  run(): Promise<void> {
    if (this.#current) {
      // The running pass's failure is its own callers'; those waiting get a pass of their own.
      this.#next ??= this.#current.then(
        () => this.#afterCurrent(),
        () => this.#afterCurrent(),
      );
      return this.#next;
    }
    this.#current = this.pass().finally(() => {
      this.#current = null;
    });
    return this.#current;
  }

  #afterCurrent(): Promise<void> {
    this.#next = null;
    return this.run();
  }

  /** The pass under way (settles when it ends), or null. */
  running(): Promise<void> | null {
    return this.#current;
  }

  /**
   * Settles when the pass under way ends, failed or not: for stop(), which must not fail because a
   * pass failed (its caller handles and logs that failure).
   */
  async ended(): Promise<void> {
    await this.#current?.catch(() => undefined);
  }
}
