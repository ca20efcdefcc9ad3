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
});
