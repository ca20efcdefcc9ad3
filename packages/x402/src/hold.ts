// One payment in flight per channel. A voucher is signed when @x402/core asks for a payload and
// confirmed when @x402/fetch reports the paid response, two calls apart: the hold keeps a second
// request on the same channel from signing the same cumulative in between. If the report never
// comes (the paid request threw), the hold lapses after `timeoutMs` so the channel is not stuck.
export type Release = () => void;

export class Hold {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly timeoutMs: number) {}

  async acquire(): Promise<Release> {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => gate);
    await previous;
    const timer = setTimeout(open, this.timeoutMs);
    timer.unref();
    return () => {
      clearTimeout(timer);
      open();
    };
  }
}
