// How many rows one `claim_many` may carry (docs/channel-contract.md, "How many claims fit in one
// transaction"). The bound is computed, not guessed: for each per-transaction limit Soroban
// publishes, what the whole call needs besides its rows, what each row adds in the worst case
// (every row a different channel paying a different payee), and so how many rows fit. The
// smallest wins. The local ledger refuses a larger batch as the contract does (27), so a batch
// that passes here also fits on the network.
//
// Limits: developers.stellar.org/docs/networks/resource-limits-fees ("Per-transaction limits"),
// read 2026-11-27; the byte limits in the exact bytes the network configures (132 KB = 132,096).

/** One per-transaction resource: the network's limit, what the call needs anyway, what each row adds. */
export interface ClaimBatchResource {
  readonly limit: number;
  readonly fixed: number;
  readonly perRow: number;
}

export const CLAIM_BATCH_RESOURCES = {
  /** 100 million. Per row (an estimate with margin; the crypto alone is ~0.43M): the voucher's
   *  sha256 and strict ed25519 verify (soroban-env-host's calibrated costs: 377,524 + ~32/byte,
   *  plus 40,253 to decode the key), the channel entry read and written, the SAC transfer and
   *  its balance entries, two events and the row's Wasm; fixed: instantiating the contract,
   *  the caller's auth and decoding the vector. */
  instructions: { limit: 100_000_000, fixed: 10_000_000, perRow: 3_000_000 },
  /** 100 keys. Per row: the channel entry and the payee's balance (a trustline for a G… payee);
   *  fixed: the contract's instance and code, the SAC's instance, the contract's own balance. */
  footprintKeys: { limit: 100, fixed: 4, perRow: 2 },
  /** 50 entries. Per row: the channel entry and the payee's balance; fixed: the contract's balance. */
  writeEntries: { limit: 50, fixed: 1, perRow: 2 },
  /** 100 entries. Only classic entries (a G… payee's trustline) and archived ones are disk reads. */
  diskReadEntries: { limit: 100, fixed: 0, perRow: 1 },
  /** 132,096 bytes. Per row: the channel entry (516 bytes of XDR with the largest values) and a
   *  trustline (116 bytes; 160 when sponsored, 200 allowed); fixed: the contract's balance entry. */
  writeBytes: { limit: 132_096, fixed: 200, perRow: 716 },
  /** 132,096 bytes. Per row: the ClaimRow (216 bytes) in the arguments and again in the caller's
   *  authorization entry, and its two footprint keys (84 bytes each); fixed: the rest of the
   *  envelope, resources and signature, generously. */
  txBytes: { limit: 132_096, fixed: 2_000, perRow: 600 },
  /** 16,384 bytes of events and return value. Per row: the contract's `claimed` event (228 bytes)
   *  and the SAC's `transfer` event (244 bytes), and the row's i128 in the returned Vec (20). */
  eventBytes: { limit: 16_384, fixed: 12, perRow: 492 },
} as const satisfies Record<string, ClaimBatchResource>;

/** How many rows the resource admits. */
export function rowsWithin(resource: ClaimBatchResource): number {
  return Math.floor((resource.limit - resource.fixed) / resource.perRow);
}

/**
 * The most rows one `claim_many` may carry: 24, bounded by the 50 ledger entries a transaction
 * may write (two per row). A contract call with more is refused with 27.
 */
export const MAX_CLAIMS_PER_TX: number = Math.min(...Object.values(CLAIM_BATCH_RESOURCES).map(rowsWithin));
