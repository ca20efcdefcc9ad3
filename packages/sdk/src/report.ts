// Reporting an on-chain transaction of one's own to a facilitator (POST /v1/report): the facilitator
// checks it against the ledger and publishes it (chain.rejected, dex.swapped, payment.exact). The
// report is signed by the transaction's source — for a smart account, its owner or agent key.
//
//   await reportTransaction({ facilitator, signer: buyer, networkPassphrase, account: buyer.address, tx: hash, kind: 'payment' });
import { signReport } from '@svc/core';
import type { Ed25519Signer, ReportBody } from '@svc/core';

export interface ReportOptions extends ReportBody {
  facilitator: string;
  /** The source's key (a smart account's owner or agent key). */
  signer: Ed25519Signer;
  networkPassphrase: string;
  fetch?: typeof fetch;
}

export interface ReportAnswer {
  status: number;
  body: unknown;
}

export async function reportTransaction(o: ReportOptions): Promise<ReportAnswer> {
  const { facilitator, signer, networkPassphrase, fetch: doFetch = fetch, ...report } = o;
  const res = await doFetch(`${facilitator.replace(/\/+$/, '')}/v1/report`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signReport(signer, networkPassphrase, report)),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as unknown };
}
