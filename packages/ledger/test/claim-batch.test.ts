// MAX_CLAIMS_PER_TX (src/claim-batch.ts, docs/channel-contract.md): the bound is the smallest over
// Soroban's per-transaction limits, and the per-row byte figures it rests on are at least what the
// SDK encodes for a worst-case row (largest ids and amounts, a G… payee holding a trustline).
import { Address, Asset, Keypair as StellarKeypair, nativeToScVal, xdr } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { randomKeypair, U64_MAX, I128_MAX } from '@svc/core';
import { CLAIM_BATCH_RESOURCES, MAX_CLAIMS_PER_TX, rowsWithin } from '../src/index.js';
import { ASSET_CONTRACT, CHANNEL_CONTRACT } from './fixtures/soroban/scenario.js';
import { contractEvent } from './fixtures/soroban/xdr-builders.js';

const sym = (s: string) => xdr.ScVal.scvSymbol(s);
const u64 = (v: bigint) => nativeToScVal(v, { type: 'u64' });
const i128 = (v: bigint) => nativeToScVal(v, { type: 'i128' });
const addr = (a: string) => new Address(a).toScVal();
const struct = (fields: Record<string, xdr.ScVal>) =>
  xdr.ScVal.scvMap(
    Object.keys(fields)
      .sort()
      .map((k) => new xdr.ScMapEntry({ key: sym(k), val: fields[k]! })),
  );

const PAYEE = randomKeypair().address;
const ISSUER = randomKeypair().address;
const channelKey = xdr.LedgerKey.contractData(
  new xdr.LedgerKeyContractData({
    contract: new Address(CHANNEL_CONTRACT).toScAddress(),
    key: xdr.ScVal.scvVec([sym('Channel'), u64(U64_MAX)]),
    durability: xdr.ContractDataDurability.persistent(),
  }),
);
const trustlineKey = xdr.LedgerKey.trustline(
  new xdr.LedgerKeyTrustLine({
    accountId: StellarKeypair.fromPublicKey(PAYEE).xdrAccountId(),
    asset: new Asset('USDC', ISSUER).toTrustLineXDRObject(),
  }),
);

describe('MAX_CLAIMS_PER_TX', () => {
  it('is 24, bounded by the 50 entries a transaction may write (two per row, one shared)', () => {
    expect(MAX_CLAIMS_PER_TX).toBe(24);
    expect(rowsWithin(CLAIM_BATCH_RESOURCES.writeEntries)).toBe(24);
  });

  it('fits under every per-transaction limit', () => {
    for (const [name, r] of Object.entries(CLAIM_BATCH_RESOURCES)) {
      expect(r.fixed + MAX_CLAIMS_PER_TX * r.perRow, name).toBeLessThanOrEqual(r.limit);
      expect(rowsWithin(r), name).toBeGreaterThanOrEqual(MAX_CLAIMS_PER_TX);
    }
  });

  it('rests on per-row sizes no smaller than the SDK’s encoding of a worst-case row', () => {
    const row = struct({
      channel_id: u64(U64_MAX),
      max_claimable: i128(I128_MAX),
      signature: xdr.ScVal.scvBytes(Buffer.alloc(64)),
      total: i128(I128_MAX),
    });
    const claimed = contractEvent(
      CHANNEL_CONTRACT,
      [sym('claimed'), u64(U64_MAX)],
      struct({ payee: addr(PAYEE), amount: i128(I128_MAX), cumulative: i128(I128_MAX) }),
    );
    const transfer = contractEvent(
      ASSET_CONTRACT,
      [sym('transfer'), addr(CHANNEL_CONTRACT), addr(PAYEE), xdr.ScVal.scvString(`USDC:${ISSUER}`)],
      i128(I128_MAX),
    );
    const eventBytes = claimed.toXDR().length + transfer.toXDR().length + i128(I128_MAX).toXDR().length;
    expect(eventBytes).toBeLessThanOrEqual(CLAIM_BATCH_RESOURCES.eventBytes.perRow);
    // The row in the arguments and again in the caller's authorization, and its two footprint keys.
    const txBytes = 2 * row.toXDR().length + channelKey.toXDR().length + trustlineKey.toXDR().length;
    expect(txBytes).toBeLessThanOrEqual(CLAIM_BATCH_RESOURCES.txBytes.perRow);
    const channel = struct({
      payer: addr(PAYEE),
      payee: addr(PAYEE),
      deposit: i128(I128_MAX),
      claimed: i128(I128_MAX),
      voucher_key: xdr.ScVal.scvBytes(Buffer.alloc(32)),
      receiver_authorizer: addr(PAYEE),
      expiry_ledger: xdr.ScVal.scvU32(2 ** 32 - 1),
      refund_nonce: u64(U64_MAX),
      open: xdr.ScVal.scvBool(true),
    });
    const entry = new xdr.LedgerEntry({
      lastModifiedLedgerSeq: 1,
      data: xdr.LedgerEntryData.contractData(
        new xdr.ContractDataEntry({
          ext: new xdr.ExtensionPoint(0),
          contract: new Address(CHANNEL_CONTRACT).toScAddress(),
          key: channelKey.contractData().key(),
          durability: xdr.ContractDataDurability.persistent(),
          val: channel,
        }),
      ),
      ext: new xdr.LedgerEntryExt(0),
    });
    const sponsoredTrustline = 160;
    expect(entry.toXDR().length + sponsoredTrustline).toBeLessThanOrEqual(CLAIM_BATCH_RESOURCES.writeBytes.perRow);
  });
});
