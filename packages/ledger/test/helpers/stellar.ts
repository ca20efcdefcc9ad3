// StellarLedger over a recorded fixture, with the scenario's contracts and clock, and a hook that
// fails the test unless every replay it opened was used up exactly as recorded.
import { afterEach } from 'vitest';
import { StellarLedger } from '../../src/index.js';
import type { StellarLedgerOptions } from '../../src/index.js';
import { ASSET_CONTRACT, CHANNEL_CONTRACT, CLOCK_MS, RPC_URL } from '../fixtures/soroban/scenario.js';
import { SorobanReplay } from './soroban-replay.js';

export function stellarLedger(
  replay: SorobanReplay,
  options: Partial<StellarLedgerOptions> = {},
): Promise<StellarLedger> {
  return StellarLedger.create({
    rpcUrl: RPC_URL,
    channelContract: CHANNEL_CONTRACT,
    assetContract: ASSET_CONTRACT,
    fetch: replay.fetch,
    now: () => CLOCK_MS,
    pollIntervalMs: 0,
    maxPolls: 2,
    ...options,
  });
}

/** `replay(name)` loads a fixture; after each test, every one loaded must be used up. */
export function useReplays(): (name: string) => SorobanReplay {
  let open: SorobanReplay[] = [];
  afterEach(() => {
    const done = open;
    open = [];
    for (const r of done) r.assertDone();
  });
  return (name) => {
    const r = SorobanReplay.load(name);
    open.push(r);
    return r;
  };
}
