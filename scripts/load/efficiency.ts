// Settlement efficiency: vouchers per on-chain claim. What counts is how the
// facilitator settles on its own — the claim scheduler's claims of channels past the threshold —
// not the final claims the test forces of every leftover to check conservation, which cover
// whatever a channel took since its last claim: an artifact of ending the run. Every settlement
// of the run's sellers is read from GET /sellers/:payTo/revenue; those whose transaction is not
// one of the final claims' were the facilitator's own. The scheduler claims many channels in one
// `claim_many` transaction, so its settlements are also counted by transaction: channels per claim
// transaction and vouchers per transaction (what the fees are paid per).
import { RevenueReportSchema } from '@svc/core';
import type { RevenueReport } from '@svc/core';
import { mapLimit } from './channels.js';
import { errorCode } from './http.js';
import type { Seller } from './market.js';
import type { ClaimReport, Reader } from './settle.js';

/** The goal at the default threshold and the demo's price (a competitor's live figure: 28.7). */
export const VOUCHERS_PER_CLAIM_GOAL = 200;

export interface Claims {
  /** Channel claims (settlements). */
  claims: number;
  vouchers: number;
  /** The on-chain transactions they came in. */
  txs: number;
}

export interface Efficiency {
  /** The facilitator's own claims (the scheduler's), with what they covered. */
  own: Claims;
  /** Of those, claims whose coverage the facilitator does not know (made by someone else). */
  ownUnknown: number;
  final: Claims;
  policy: RevenueReport['settlementPolicy'] | null;
  /** A seller's settlement list was cut short (over 500 in the window): the figures undercount. */
  truncated: boolean;
}

export async function settlementEfficiency(reader: Reader, sellers: Seller[], final: ClaimReport): Promise<Efficiency> {
  const reports = await mapLimit(sellers, 4, async (s) => {
    const reply = await reader.client.get(new URL(`${reader.next()}/sellers/${s.address}/revenue`));
    if (reply.status !== 200) throw new Error(`GET /sellers/${s.address}/revenue answered ${errorCode(reply)}`);
    return RevenueReportSchema.parse(reply.body);
  });
  const out: Efficiency = {
    own: { claims: 0, vouchers: 0, txs: 0 },
    ownUnknown: 0,
    final: { claims: final.claimed, vouchers: final.vouchers, txs: final.txs.size },
    policy: reports[0]?.settlementPolicy ?? null,
    truncated: reports.some((r) => r.settlementsTruncated),
  };
  const ownTxs = new Set<string>();
  for (const r of reports) {
    for (const s of r.settlements) {
      if (final.txs.has(s.tx)) continue;
      if (s.paymentsCovered === null) {
        out.ownUnknown++;
        continue;
      }
      out.own.claims++;
      out.own.vouchers += s.paymentsCovered;
      ownTxs.add(s.tx); // one transaction pays channels of several sellers
    }
  }
  out.own.txs = ownTxs.size;
  return out;
}

/** The lines `npm run load` prints; `price` is what one voucher pays (every seller's). */
export function describeEfficiency(e: Efficiency, price: bigint): string[] {
  const per = (n: number, d: number) => (d === 0 ? '—' : (n / d).toFixed(1));
  const line = (c: Claims) =>
    `${c.claims} claim${c.claims === 1 ? '' : 's'} covering ${c.vouchers} vouchers = ${per(c.vouchers, c.claims)} vouchers per on-chain claim; ` +
    `${c.txs} transaction${c.txs === 1 ? '' : 's'}: ${per(c.claims, c.txs)} channels per claim transaction, ${per(c.vouchers, c.txs)} vouchers per transaction`;
  const all = {
    claims: e.own.claims + e.final.claims,
    vouchers: e.own.vouchers + e.final.vouchers,
    txs: e.own.txs + e.final.txs,
  };
  const p = e.policy;
  const lines = [
    p
      ? `\nsettlement efficiency (claim threshold ${p.threshold}, checked every ${p.intervalSeconds} s: a threshold claim covers ≥ ${(BigInt(p.threshold) + price - 1n) / price} vouchers of ${price})`
      : '\nsettlement efficiency',
  ];
  const goal =
    e.own.claims === 0
      ? `goal ≥ ${VOUCHERS_PER_CLAIM_GOAL}: no claim to judge`
      : e.own.vouchers / e.own.claims >= VOUCHERS_PER_CLAIM_GOAL
        ? `goal ≥ ${VOUCHERS_PER_CLAIM_GOAL}: met`
        : `goal ≥ ${VOUCHERS_PER_CLAIM_GOAL}: NOT met`;
  lines.push(
    e.own.claims > 0
      ? `  by the facilitator on its own (claim scheduler): ${line(e.own)}  (${goal})`
      : `  by the facilitator on its own (claim scheduler): none — no scheduler pass${p ? ` (every ${p.intervalSeconds} s)` : ''} found a channel past the threshold during the run (run longer, or with fewer LOAD_BUYERS)`,
  );
  if (e.ownUnknown > 0) lines.push(`    and ${e.ownUnknown} claims by someone else (coverage unknown, left out)`);
  lines.push(`  final claims forced by the end of the test: ${line(e.final)}`);
  lines.push(`  overall: ${line(all)}`);
  if (e.truncated)
    lines.push('  (a settlement list was cut at 500: the figures above count only the newest 500 per seller)');
  return lines;
}
