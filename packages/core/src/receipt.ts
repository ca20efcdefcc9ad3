// Signed receipts (docs/protocol.md#receipts). Canonical bytes are RFC 8785 (JCS) JSON of the receipt
// without `id` and `signature`; id = sha256 hex of them; signature = ed25519 over them. Anyone
// can check a receipt offline with the signer's public key.
import canonicalize from 'canonicalize';
import { sha256 } from '#crypto';
import type { Ed25519Signer } from '#crypto';
import { fromHex, toHex, utf8 } from './bytes.js';
import { verifyStrict } from './ed25519.js';
import { isAccountAddress, publicKeyFromAccount } from './strkey.js';
import { ReceiptSchema } from './x402.js';
import type { Receipt } from './x402.js';
import { safeParse } from './safe-parse.js';

export type ReceiptBody = Omit<Receipt, 'id' | 'signature'>;

export function receiptBytes(body: ReceiptBody): Uint8Array {
  const { v, network, signer, channelId, payer, payee, resource, method, unit, amount, cumulative, requestHash, ts } =
    body;
  const text = canonicalize({
    v,
    network,
    signer,
    channelId,
    payer,
    payee,
    resource,
    method,
    unit,
    amount,
    cumulative,
    requestHash,
    ts,
  });
  if (text === undefined) throw new TypeError('receipt is not serialisable');
  return utf8(text);
}

export function signReceipt(signer: Ed25519Signer, body: ReceiptBody): Receipt {
  const bytes = receiptBytes(body);
  return { v: body.v, id: toHex(sha256(bytes)), ...withoutV(body), signature: toHex(signer.sign(bytes)) };
}

/** signReceipt with the signature computed off the calling thread (Node's threadpool). */
export async function signReceiptAsync(signer: Ed25519Signer, body: ReceiptBody): Promise<Receipt> {
  const bytes = receiptBytes(body);
  const signature = await signer.signAsync(bytes);
  return { v: body.v, id: toHex(sha256(bytes)), ...withoutV(body), signature: toHex(signature) };
}

export type ReceiptCheck = { ok: true } | { ok: false; reason: string };

/**
 * Checks a receipt offline: shape, id, and signature under `signer`. With `trustedSigners`, the
 * signer must also be one of them (a receipt signed by anyone else proves nothing).
 */
export function verifyReceipt(receipt: unknown, trustedSigners?: readonly string[]): ReceiptCheck {
  const parsed = safeParse(ReceiptSchema, receipt);
  if (!parsed.success) return { ok: false, reason: 'not a receipt' };
  const r = parsed.data;
  if (!isAccountAddress(r.signer)) return { ok: false, reason: 'signer is not an account key' };
  if (trustedSigners && !trustedSigners.includes(r.signer)) return { ok: false, reason: 'signer is not trusted' };
  const bytes = receiptBytes(r);
  if (toHex(sha256(bytes)) !== r.id) return { ok: false, reason: 'id does not match the contents' };
  const ok = verifyStrict(publicKeyFromAccount(r.signer), bytes, fromHex(r.signature, 64));
  return ok ? { ok: true } : { ok: false, reason: 'bad signature' };
}

/** sha256 hex of `METHOD \n URL \n body-or-empty` (docs/protocol.md#receipts). */
export function requestHash(method: string, url: string, body?: Uint8Array | string | null): string {
  const bodyBytes =
    body === null || body === undefined ? new Uint8Array() : typeof body === 'string' ? utf8(body) : body;
  const head = utf8(`${method.toUpperCase()}\n${url}\n`);
  const all = new Uint8Array(head.length + bodyBytes.length);
  all.set(head);
  all.set(bodyBytes, head.length);
  return toHex(sha256(all));
}

function withoutV(body: ReceiptBody): Omit<ReceiptBody, 'v'> {
  const { v: _v, ...rest } = body;
  return rest;
}
