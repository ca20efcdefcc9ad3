// The order in which a scheduler pass claims its due channels (claim-scheduler.ts claimOrder):
// near expiry first, soonest expiry first, then the most owed; ties by channel id, so a pass is
// the same whatever order the store listed the channels in.
import { describe, expect, it } from 'vitest';
import { claimOrder } from '../src/domain/claim-scheduler.js';

const due = (id: bigint, nearExpiry: boolean, expiryLedger: number, unclaimed: bigint) => ({
  id,
  nearExpiry,
  expiryLedger,
  unclaimed,
});

describe('claimOrder', () => {
  it('puts near-expiry channels first (soonest first, then most owed), then the rest by most owed', () => {
    const channels = [
      due(1n, false, 900, 5_000_000n),
      due(2n, true, 120, 10n),
      due(3n, false, 100, 9_000_000n),
      due(4n, true, 110, 20n),
      due(5n, true, 110, 30n),
      due(6n, false, 500, 5_000_000n),
    ];
    for (const listed of [channels, [...channels].reverse()]) {
      expect([...listed].sort(claimOrder).map((c) => c.id)).toEqual([5n, 4n, 2n, 3n, 1n, 6n]);
    }
  });

  it('orders by amount as bigint, beyond what a float tells apart', () => {
    const big = 2n ** 60n;
    const sorted = [due(1n, false, 0, big), due(2n, false, 0, big + 1n)].sort(claimOrder);
    expect(sorted.map((c) => c.id)).toEqual([2n, 1n]);
  });
});
