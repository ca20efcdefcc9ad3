import { describe, expect, it } from 'vitest';
import { Passes } from '../src/domain/passes.js';

describe('Passes', () => {
  it('runs one pass at a time; callers during a pass share one pass that starts after it', async () => {
    const started: number[] = [];
    let release: () => void = () => undefined;
    const passes = new Passes(async () => {
      started.push(started.length + 1);
      if (started.length === 1) await new Promise<void>((r) => (release = r));
    });
    const first = passes.run();
    const [a, b] = [passes.run(), passes.run()];
    expect(a).toBe(b);
    expect(started).toEqual([1]);
    expect(passes.running()).not.toBeNull();
    release();
    await Promise.all([first, a, b]);
    expect(started).toEqual([1, 2]);
    expect(passes.running()).toBeNull();
  });

  it('lets stop() wait for a failing pass without failing itself (a ledger that is down while the process stops)', async () => {
    let fail: (err: Error) => void = () => undefined;
    const passes = new Passes(() => new Promise<void>((_, reject) => (fail = reject)));
    const pass = passes.run();
    pass.catch(() => undefined); // the caller that started it handles its failure
    const ended = passes.ended();
    fail(new Error('the ledger did not answer'));
    await expect(ended).resolves.toBeUndefined();
    await expect(pass).rejects.toThrow('the ledger did not answer');
    await expect(passes.ended()).resolves.toBeUndefined();
  });
});
