// One submission at a time per source account: a Stellar account has one sequence number, so two
// transactions built from the same account state would collide (docs/architecture.md#on-stellar). Different
// accounts proceed in parallel.
//
//   const queue = new SubmissionQueue();
//   await queue.run(source, () => buildSignSendAndPoll());
export class SubmissionQueue {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    // Forget an idle account so the map does not grow with every signer ever seen.
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Accounts with work queued or running (for tests and diagnostics). */
  get busy(): number {
    return this.#tails.size;
  }
}
