// Money conservation after the load, from three independent books — what the client saw accepted,
// what the facilitator reports, and what the ledger holds:
//   per seller:  earned == settled + receivable + lost; earned (and payments) == what the client saw
//                accepted; settled == the ledger's claimed over its channels == its ledger balance;
//   per channel: ledger claimed ≤ deposit; facilitator claimed == ledger claimed ≤ lastAccepted;
//                facilitator lastAccepted == the client's last accepted cumulative.
import { LedgerError } from '@svc/core';
import { mapLimit } from './channels.js';
import { errorCode, field } from './http.js';
import type { Buyer, Seller } from './market.js';
import type { Reader, Snapshot } from './settle.js';

const SHOWN_PER_KIND = 5;

export interface Verdict {
  lines: string[];
  failures: string[];
}

class Findings {
  private readonly byKind = new Map<string, string[]>();
  add(kind: string, detail: string): void {
    const list = this.byKind.get(kind) ?? [];
    list.push(detail);
    this.byKind.set(kind, list);
  }
  /** One failure per kind, with its count and the first few cases. */
  failures(): string[] {
    return [...this.byKind].map(
      ([kind, list]) =>
        `${kind}: ${list.length} (${list.slice(0, SHOWN_PER_KIND).join('; ')}${list.length > SHOWN_PER_KIND ? '; …' : ''})`,
    );
  }
}

export async function checkConservation(
  reader: Reader,
  sellers: Seller[],
  buyers: Buyer[],
  snapshot: Snapshot,
): Promise<Verdict> {
  const found = new Findings();
  const onLedger = new Map<Seller, bigint>();
  buyers.forEach((b, i) => {
    const claimed = checkChannel(found, b, snapshot.facilitator[i] ?? null, snapshot.ledger[i] ?? null);
    onLedger.set(b.seller, (onLedger.get(b.seller) ?? 0n) + claimed);
  });
  const lines = [
    '  seller                                                    price  payments  client accepted   earned      settled     receivable  ledger balance',
  ];
  lines.push(...(await mapLimit(sellers, 4, (s) => checkSeller(found, reader, s, onLedger.get(s) ?? 0n))));
  const accepted = sellers.reduce((sum, s) => sum + s.acceptedSum, 0n);
  const claimed = [...onLedger.values()].reduce((sum, v) => sum + v, 0n);
  const deposits = buyers.reduce((sum, b) => sum + b.channel.deposit, 0n);
  lines.push(
    `  all: client accepted ${accepted} = claimed on the ledger ${claimed} + unclaimed ${accepted - claimed}; deposits ${deposits} over ${buyers.length} channels`,
  );
  return { lines, failures: found.failures() };
}

/** Returns what the ledger says was claimed on the channel. */
function checkChannel(
  found: Findings,
  b: Buyer,
  fac: Snapshot['facilitator'][number],
  ledger: Snapshot['ledger'][number],
): bigint {
  const id = `#${b.channel.id}`;
  if (!ledger) found.add('channel missing on the ledger', id);
  if (!fac) found.add('channel unknown to the facilitator', id);
  if (!ledger || !fac) return ledger?.claimed ?? 0n;
  if (ledger.claimed > ledger.deposit)
    found.add('ledger claimed > deposit', `${id} ${ledger.claimed} > ${ledger.deposit}`);
  if (fac.claimed !== ledger.claimed)
    found.add('facilitator claimed ≠ ledger claimed', `${id} ${fac.claimed} ≠ ${ledger.claimed}`);
  if (fac.claimed > fac.lastAccepted)
    found.add('facilitator claimed > lastAccepted', `${id} ${fac.claimed} > ${fac.lastAccepted}`);
  if (fac.lastAccepted !== b.last)
    found.add(
      'facilitator lastAccepted ≠ client last accepted',
      `${id} ${fac.lastAccepted} ≠ ${b.last}${b.retired ? ` (buyer stopped: ${b.retired})` : ''}`,
    );
  if (fac.deposit !== ledger.deposit)
    found.add('facilitator deposit ≠ ledger deposit', `${id} ${fac.deposit} ≠ ${ledger.deposit}`);
  if (fac.payee !== b.seller.address || ledger.payee !== b.seller.address) found.add('channel payee ≠ its seller', id);
  return ledger.claimed;
}

async function checkSeller(found: Findings, reader: Reader, s: Seller, claimedOnLedger: bigint): Promise<string> {
  const name = `seller ${s.index}`;
  const reply = await reader.client.get(new URL(`${reader.next()}/sellers/${s.address}/revenue`));
  if (reply.status !== 200) {
    found.add('revenue unreadable', `${name}: ${reply.status} ${errorCode(reply)}`);
    return `  ${s.address}  revenue: ${reply.status}`;
  }
  const totals = field(reply.body, 'totals');
  const amount = (k: string) => BigInt(String(field(totals, k)));
  const [earned, settled, receivable, lost, payments] = [
    amount('earned'),
    amount('settled'),
    amount('receivable'),
    amount('lost'),
    Number(field(totals, 'payments')),
  ];
  const balance = await balanceOf(reader, s.address);
  if (earned !== settled + receivable + lost)
    found.add('earned ≠ settled + receivable + lost', `${name}: ${earned} ≠ ${settled} + ${receivable} + ${lost}`);
  if (lost !== 0n) found.add('lost (no channel closes in a load run)', `${name}: ${lost}`);
  if (earned !== s.acceptedSum) found.add('earned ≠ client accepted', `${name}: ${earned} ≠ ${s.acceptedSum}`);
  if (payments !== s.acceptedCount)
    found.add('payments ≠ client accepted vouchers', `${name}: ${payments} ≠ ${s.acceptedCount}`);
  if (settled !== claimedOnLedger)
    found.add('settled ≠ claimed on the ledger', `${name}: ${settled} ≠ ${claimedOnLedger}`);
  if (balance !== claimedOnLedger)
    found.add("seller's ledger balance ≠ claimed on the ledger", `${name}: ${balance} ≠ ${claimedOnLedger}`);
  const cols = [s.price, payments, s.acceptedSum, earned, settled, receivable, balance].map(String);
  return `  ${s.address}  ${cols[0]!.padStart(5)}  ${cols[1]!.padStart(8)}  ${cols
    .slice(2)
    .map((c) => c.padStart(14))
    .join('')}`;
}

async function balanceOf(reader: Reader, address: string): Promise<bigint> {
  try {
    return await reader.ledger.balance(address);
  } catch (err) {
    if (err instanceof LedgerError && err.status === 404) return 0n;
    throw err;
  }
}
