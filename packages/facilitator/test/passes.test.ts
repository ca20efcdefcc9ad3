import { describe, expect, it } from 'vitest';
import { Passes } from '../src/domain/passes.js';
import { until } from './helpers/until.js';

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

  it('after a pass fails, callers that waited during it still get a pass of their own, and so does every later caller', async () => {
    const results: (() => void)[] = [];
    const failures: ((err: Error) => void)[] = [];
    let started = 0;
    const passes = new Passes(
      () =>
        new Promise<void>((resolve, reject) => {
          started++;
          results.push(resolve);
          failures.push(reject);
        }),
    );
    const first = passes.run();
    first.catch(() => undefined);
    const waiting = passes.run(); // during the first pass: gets the next one
    failures[0]!(new Error('the store did not answer'));
    await expect(first).rejects.toThrow('the store did not answer');
    await until(() => Promise.resolve(started === 2), 1_000, 1);
    results[1]!();
    await expect(waiting).resolves.toBeUndefined();

    // Later, a pass is running again and another caller comes along: it waits for a new pass, not
    // for the first pass's old failure.
    const third = passes.run();
    const later = passes.run();
    let settled = false;
    later.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    results[2]!();
    await third;
    await until(() => Promise.resolve(started === 4), 1_000, 1);
    results[3]!();
    await expect(later).resolves.toBeUndefined();
  });
});
