// Local-ledger transactions (docs/protocol.md#the-local-ledger): signed by the source's ed25519 key over
//   sha256("svc:tx:v1" ‖ network id ‖ RFC 8785 JSON of { source, seq, op, args }).
// The same hash, in hex, is the transaction's hash.
import canonicalize from 'canonicalize';
import { sha256 } from '#crypto';
import type { Ed25519Signer } from '#crypto';
import { concatBytes, fromHex, toHex, utf8 } from './bytes.js';
import { verifyStrict } from './ed25519.js';
import { networkId } from './network.js';

export const TX_DOMAIN = 'svc:tx:v1';

export interface LedgerTxBody {
  source: string;
  seq: number;
  op: string;
  args: Record<string, unknown>;
}

export interface SignedLedgerTx extends LedgerTxBody {
  signature: string;
}

/** The RFC 8785 JSON of { source, seq, op, args }: the signed part of a transaction. */
export function txCanonicalJson(tx: LedgerTxBody): string {
  const json = canonicalize({ source: tx.source, seq: tx.seq, op: tx.op, args: tx.args });
  if (json === undefined) throw new TypeError('transaction is not serialisable');
  return json;
}

export function txSigningHash(networkPassphrase: string, tx: LedgerTxBody): Uint8Array {
  return sha256(concatBytes(utf8(TX_DOMAIN), networkId(networkPassphrase), utf8(txCanonicalJson(tx))));
}

export function txHash(networkPassphrase: string, tx: LedgerTxBody): string {
  return toHex(txSigningHash(networkPassphrase, tx));
}

export function signLedgerTx(signer: Ed25519Signer, networkPassphrase: string, tx: LedgerTxBody): SignedLedgerTx {
  return {
    source: tx.source,
    seq: tx.seq,
    op: tx.op,
    args: tx.args,
    signature: toHex(signer.sign(txSigningHash(networkPassphrase, tx))),
  };
}

export function verifyLedgerTx(publicKey: Uint8Array, networkPassphrase: string, tx: SignedLedgerTx): boolean {
  if (!/^[0-9a-fA-F]{128}$/.test(tx.signature)) return false;
  return verifyStrict(publicKey, txSigningHash(networkPassphrase, tx), fromHex(tx.signature, 64));
}

// Reports (POST /v1/report): a buyer tells the facilitator about an on-chain transaction of its
// own. The report is signed by the transaction's source (for a smart account: its owner or its
// agent key), so that nobody else can publish someone's transaction with words of their choosing:
//   sha256("svc:report:v1" ‖ network id ‖ RFC 8785 JSON of { account, tx, kind?, details? })
export const REPORT_DOMAIN = 'svc:report:v1';

export interface ReportBody {
  account: string;
  tx: string;
  kind?: 'payment' | 'swap';
  details?: Record<string, string | number | boolean | null>;
}

export function reportSigningHash(networkPassphrase: string, report: ReportBody): Uint8Array {
  const json = canonicalize({
    account: report.account,
    tx: report.tx.toLowerCase(),
    ...(report.kind ? { kind: report.kind } : {}),
    ...(report.details ? { details: report.details } : {}),
  });
  if (json === undefined) throw new TypeError('report is not serialisable');
  return sha256(concatBytes(utf8(REPORT_DOMAIN), networkId(networkPassphrase), utf8(json)));
}

export function signReport(
  signer: Ed25519Signer,
  networkPassphrase: string,
  report: ReportBody,
): ReportBody & { signature: string } {
  return { ...report, signature: toHex(signer.sign(reportSigningHash(networkPassphrase, report))) };
}

export function verifyReport(
  publicKey: Uint8Array,
  networkPassphrase: string,
  report: ReportBody,
  signatureHex: string,
): boolean {
  if (!/^[0-9a-fA-F]{128}$/.test(signatureHex)) return false;
  return verifyStrict(publicKey, reportSigningHash(networkPassphrase, report), fromHex(signatureHex, 64));
}
