// The manual claim (POST /channels/:id/claim): callable by anyone, since it pays only the channel's
// payee; so what bounds it is the facilitator's cost — a minimum unclaimed amount, and one claim per
// channel per cooldown (counted on the limiter backend, so across every instance of a cluster).
import { SvcError, formatUnits } from '@svc/core';
import type { ClaimResponse } from '@svc/core';
import type { Limiter } from '../limits/limiter.js';
import type { Store } from '../store/port.js';
import type { ChannelBook } from './channel-book.js';
import type { Claimer } from './claimer.js';

export interface ManualClaimsDeps {
  store: Store;
  book: ChannelBook;
  claimer: Claimer;
  network: string;
  /** MANUAL_CLAIM_MIN: less unclaimed than this is refused (409). */
  minimum: bigint;
  /** One manual claim per channel per `cooldownSeconds` (null: no cooldown). */
  cooldown: Limiter | null;
  cooldownSeconds: number;
}

export class ManualClaims {
  constructor(private readonly deps: ManualClaimsDeps) {}

  /** Claims what the channel's payee is owed now; an SvcError says why not. */
  async claim(id: bigint): Promise<ClaimResponse> {
    const { store, book, claimer } = this.deps;
    const record = (await store.getChannel(id)) ?? (await book.get(id))?.record;
    if (!record) throw new SvcError('NOT_FOUND', `Channel ${id} does not exist on ${this.deps.network}.`);
    // The contract takes claims only until the channel closes (docs/protocol.md#channels-and-records): sending one
    // now would only be refused (21) and cost a transaction.
    if (record.status === 'closed')
      throw new SvcError('CONFLICT', `Channel ${id} is closed; nothing more can be claimed on it.`);
    const unclaimed = record.charged - record.claimed;
    if (unclaimed < this.deps.minimum) {
      throw new SvcError(
        'CONFLICT',
        `Channel ${id} has ${unclaimed > 0n ? unclaimed : 0n} unclaimed; a manual claim needs at least ${this.deps.minimum}.`,
      );
    }
    const wait = (await this.deps.cooldown?.take(id.toString())) ?? null;
    if (wait !== null)
      throw new SvcError(
        'RATE_LIMITED',
        `Channel ${id} was claimed manually less than ${this.deps.cooldownSeconds} s ago.`,
        { retryAfter: wait },
      );
    const out = await claimer.claim(id);
    if (out.status === 'nothing') throw new SvcError('CONFLICT', `Channel ${id} has nothing left to claim.`);
    if (out.status === 'rejected') {
      throw new SvcError('LEDGER_REJECTED', `The ledger rejected the claim: ${out.codeName} (${out.code}).`, {
        source: 'ledger',
        tx: out.tx,
      });
    }
    return {
      channelId: id.toString(),
      amount: formatUnits(out.amount),
      cumulative: formatUnits(out.cumulative),
      vouchersCovered: out.vouchersCovered,
      tx: out.tx,
      ledger: out.ledger,
    };
  }
}
