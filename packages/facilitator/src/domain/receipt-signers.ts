// Which keys sign for a store. A store remembers the signer its receipts are written
// under (meta `facilitator.signer`, recorded on first start), and the signers a rotation retired
// (meta `facilitator.signers.retired`): their receipts still count, so GET /supported lists them
// after the current one. A start whose key is not the recorded signer — the secret file went
// missing and would be generated anew, or FACILITATOR_SECRET names another key — is refused: it
// would sign receipts under a key nobody was told of, and every seller token would stop working.
// A new signer is made on purpose only, by `svc rotate-key` (rotationOps). Addresses only here:
// never a secret.
import { z } from 'zod';
import type { Store, WriteOp } from '../store/port.js';

export const SIGNER_META = 'facilitator.signer';
export const RETIRED_SIGNERS_META = 'facilitator.signers.retired';

const RetiredSchema = z.array(z.object({ address: z.string(), retiredAt: z.string() }));

export interface RetiredSigner {
  address: string;
  /** When a rotation retired it (ISO 8601). */
  retiredAt: string;
}

/** The store's signers: the one its receipts are signed with now (null before any), and those retired. */
export interface StoreSigners {
  current: string | null;
  retired: RetiredSigner[];
}

/**
 * The store's record. A store written before signers were recorded names its signer only in its
 * receipts: then the newest receipt's signer stands for it.
 */
export async function storeSigners(store: Store): Promise<StoreSigners> {
  const [current, retired] = await Promise.all([store.getMeta(SIGNER_META), store.getMeta(RETIRED_SIGNERS_META)]);
  const parsed = retired === null ? null : RetiredSchema.safeParse(parseJson(retired));
  return {
    current: current ?? (await store.listReceipts({ limit: 1 }))[0]?.receipt.signer ?? null,
    retired: parsed?.success ? parsed.data : [],
  };
}

/** Whether the store holds anything a key was used for: channels or receipts. */
export async function storeInUse(store: Store): Promise<boolean> {
  if ((await store.countChannels()) > 0) return true;
  return (await store.listReceipts({ limit: 1 })).length > 0;
}

/**
 * Records `address` as the store's signer unless one is recorded already, and returns the one that
 * stands: on a shared database two instances starting at once with different keys cannot both win.
 */
export async function recordSigner(store: Store, address: string): Promise<string> {
  await store.write([{ op: 'meta.init', key: SIGNER_META, value: address }]);
  return (await store.getMeta(SIGNER_META)) ?? address;
}

/** The writes of a rotation: `next` signs from now on, the current signer (if any) joins the retired. */
export function rotationOps(signers: StoreSigners, next: string, at: string): WriteOp[] {
  const retired = signers.retired.filter((r) => r.address !== next && r.address !== signers.current);
  if (signers.current !== null && signers.current !== next) retired.push({ address: signers.current, retiredAt: at });
  return [
    { op: 'meta.set', key: SIGNER_META, value: next },
    { op: 'meta.set', key: RETIRED_SIGNERS_META, value: JSON.stringify(retired) },
  ];
}

/** Every address whose receipts count, the current signer first (GET /supported's `signers`). */
export function receiptSignerList(current: string, retired: readonly RetiredSigner[]): string[] {
  return [current, ...retired.map((r) => r.address).filter((a) => a !== current)];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
