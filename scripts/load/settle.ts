// After the load: settle what is owed and wait until the facilitator and the ledger agree.
//   1. A buyer whose last answer was lost reads its channel to learn whether it was accepted.
//   2. Every channel with something unclaimed is claimed now (POST /channels/:id/claim); one the
//      scheduler already claimed answers 409, one under MANUAL_CLAIM_MIN too (it stays receivable).
//   3. Channels are re-read from the facilitator and the ledger until their `claimed` agree (the
//      ledger watcher of another instance may still be catching up) or the time is up.
import type { LocalLedgerClient } from '@svc/sdk';
import { mapLimit } from './channels.js';
import { sleep } from './driver.js';
import { errorCode, field } from './http.js';
import type { JsonClient } from './http.js';
import { accepted } from './market.js';
import type { Buyer } from './market.js';
import { Counts } from './tally.js';
import type { Tally } from './tally.js';

const PARALLEL_READS = 16;
const PARALLEL_CLAIMS = 4;
const CLAIM_ATTEMPTS = 4;
const AGREE_POLL_MS = 1000;

/** The facilitator's channel view (docs/protocol.md#channels-and-records), the fields checked here. */
export interface FacilitatorChannel {
  payee: string;
  deposit: bigint;
  claimed: bigint;
  lastAccepted: bigint;
}

/** The contract's own record (GET /ledger/channels/:id). */
export interface LedgerChannel {
  payee: string;
  deposit: bigint;
  claimed: bigint;
}

export interface Snapshot {
  facilitator: (FacilitatorChannel | null)[];
  ledger: (LedgerChannel | null)[];
}

export interface ClaimReport {
  claimed: number;
  amount: bigint;
  /** Vouchers the final claims covered (the claim answer's vouchersCovered). */
  vouchers: number;
  /** The final claims' transactions: every other settlement of the run was the facilitator's own. */
  txs: Set<string>;
  outcomes: Counts;
}

export class Reader {
  private turn = 0;
  constructor(
    readonly client: JsonClient,
    readonly urls: string[],
    readonly ledger: LocalLedgerClient,
  ) {}

  /** Next facilitator base URL (round-robin, so every instance is read). */
  next(): string {
    return this.urls[this.turn++ % this.urls.length]!;
  }

  async channel(id: bigint): Promise<FacilitatorChannel | null> {
    const reply = await this.client.get(new URL(`${this.next()}/channels/${id}`));
    if (reply.status === 404) return null;
    if (reply.status !== 200) throw new Error(`GET /channels/${id} answered ${reply.status} ${errorCode(reply)}`);
    const amount = (name: string) => BigInt(String(field(reply.body, name)));
    return {
      payee: String(field(reply.body, 'payee')),
      deposit: amount('deposit'),
      claimed: amount('claimed'),
      lastAccepted: amount('lastAccepted'),
    };
  }

  async snapshot(buyers: Buyer[]): Promise<Snapshot> {
    const facilitator = await mapLimit(buyers, PARALLEL_READS, (b) => this.channel(b.channel.id));
    const ledger = await mapLimit(buyers, PARALLEL_READS, async (b) => {
      const c = await this.ledger.channel(b.channel.id);
      return c && { payee: c.payee, deposit: BigInt(c.deposit), claimed: BigInt(c.claimed) };
    });
    return { facilitator, ledger };
  }
}

/** Step 1: a lost answer is settled by what the facilitator holds now. */
export async function resolveUnsure(reader: Reader, buyers: Buyer[], tally: Tally): Promise<void> {
  await mapLimit(
    buyers.filter((b) => b.unsure),
    PARALLEL_READS,
    async (b) => {
      const view = await reader.channel(b.channel.id);
      const owed = b.last + b.seller.price;
      if (view?.lastAccepted === owed) {
        accepted(b, owed);
        tally.resolvedAccepted++;
      } else {
        b.unsure = false;
        tally.resolvedNotAccepted++;
      }
    },
  );
}

/** Step 2: claims every channel with something unclaimed, honouring 429 Retry-After until `deadline`. */
export async function claimAll(reader: Reader, buyers: Buyer[], deadline: number): Promise<ClaimReport> {
  const report: ClaimReport = { claimed: 0, amount: 0n, vouchers: 0, txs: new Set(), outcomes: new Counts() };
  await mapLimit(buyers, PARALLEL_CLAIMS, async (b) => {
    try {
      await claimOne(reader, b, deadline, report);
    } catch (err) {
      report.outcomes.add(`error: ${(err as Error).message}`);
    }
  });
  return report;
}

async function claimOne(reader: Reader, b: Buyer, deadline: number, report: ClaimReport): Promise<void> {
  const view = await reader.channel(b.channel.id);
  if (!view || view.lastAccepted <= view.claimed) return report.outcomes.add('nothing unclaimed');
  // 429 (the per-IP costly limit or the cooldown of a running facilitator) waits its Retry-After
  // for as long as the deadline allows; a 5xx is retried a few times.
  for (let failures = 0; ;) {
    const reply = await reader.client.post(new URL(`${reader.next()}/channels/${b.channel.id}/claim`), {});
    if (reply.status === 200) {
      report.claimed++;
      report.amount += BigInt(String(field(reply.body, 'amount')));
      report.vouchers += Number(field(reply.body, 'vouchersCovered') ?? 0);
      report.txs.add(String(field(reply.body, 'tx')));
      return report.outcomes.add('200 claimed');
    }
    const what = `${reply.status} ${errorCode(reply)}`;
    if (reply.status >= 500) failures++;
    const wait = reply.status === 429 ? 1000 * Math.max(1, Number(reply.retryAfter) || 1) : 500 * failures;
    const retry =
      (reply.status === 429 || (reply.status >= 500 && failures < CLAIM_ATTEMPTS)) &&
      performance.now() + wait < deadline;
    if (!retry) return report.outcomes.add(what);
    report.outcomes.add(`${what} (retried)`);
    await sleep(wait);
  }
}

/** Step 3: snapshots until every channel's claimed agrees between facilitator and ledger, or `deadline`. */
export async function agree(
  reader: Reader,
  buyers: Buyer[],
  deadline: number,
): Promise<{ snapshot: Snapshot; waitedMs: number }> {
  const started = performance.now();
  for (;;) {
    const snapshot = await reader.snapshot(buyers);
    const settled = buyers.every((_, i) => snapshot.facilitator[i]?.claimed === snapshot.ledger[i]?.claimed);
    if (settled || performance.now() + AGREE_POLL_MS >= deadline)
      return { snapshot, waitedMs: performance.now() - started };
    await sleep(AGREE_POLL_MS);
  }
}
