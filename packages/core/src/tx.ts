// Local-ledger transactions (PROTOCOL.md §9): signed by the source's ed25519 key over
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

export function txSigningHash(networkPassphrase: string, tx: LedgerTxBody): Uint8Array {
  const json = canonicalize({ source: tx.source, seq: tx.seq, op: tx.op, args: tx.args });
  if (json === undefined) throw new TypeError('transaction is not serialisable');
  return sha256(concatBytes(utf8(TX_DOMAIN), networkId(networkPassphrase), utf8(json)));
}

export function txHash(networkPassphrase: string, tx: LedgerTxBody): string {
  return toHex(txSigningHash(networkPassphrase, tx));
}

export function signLedgerTx(signer: Ed25519Signer, networkPassphrase: string, tx: LedgerTxBody): SignedLedgerTx {
  return { source: tx.source, seq: tx.seq, op: tx.op, args: tx.args, signature: toHex(signer.sign(txSigningHash(networkPassphrase, tx))) };
}

export function verifyLedgerTx(publicKey: Uint8Array, networkPassphrase: string, tx: SignedLedgerTx): boolean {
  if (!/^[0-9a-fA-F]{128}$/.test(tx.signature)) return false;
  return verifyStrict(publicKey, txSigningHash(networkPassphrase, tx), fromHex(tx.signature, 64));
}
