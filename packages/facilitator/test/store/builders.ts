// Builders for store tests: real signed receipts, channel records with overrides, and the ops of
// an accepted voucher exactly as the verifier writes them (port.ts example).
import { fromHex, keypairFromSeed, signReceipt } from '@svc/core';
import type { Receipt } from '@svc/core';
import type { ChannelRecord, NewEvent, WriteOp } from '../../src/store/index.js';

export const SIGNER = keypairFromSeed(fromHex('11'.repeat(32), 32));
export const PAYER = keypairFromSeed(fromHex('22'.repeat(32), 32)).address;
export const PAYEE = keypairFromSeed(fromHex('33'.repeat(32), 32)).address;
export const OTHER_PAYEE = keypairFromSeed(fromHex('44'.repeat(32), 32)).address;
export const OTHER_PAYER = keypairFromSeed(fromHex('55'.repeat(32), 32)).address;
export const I128_MAX = 170141183460469231731687303715884105727n;
export const U64_MAX = 18446744073709551615n;
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

/** ISO 8601 with milliseconds, `n` seconds after a fixed start. */
export function iso(n: number): string {
  return new Date(T0 + n * 1000).toISOString();
}

/** A well-formed 64-byte signature in hex, different for every n. */
export function sig(n: bigint): string {
  return n.toString(16).padStart(128, '0');
}

export function channel(id: bigint, over: Partial<ChannelRecord> = {}): ChannelRecord {
  return {
    id,
    network: 'stellar:local',
    channelContract: 'CCHANNELCONTRACT',
    payer: PAYER,
    payee: PAYEE,
    asset: 'CASSET',
    voucherKey: 'ab'.repeat(32),
    deposit: 1_000_000n,
    claimed: 0n,
    lastAccepted: 0n,
    lastSignature: null,
    expiryLedger: 5_000,
    status: 'open',
    vouchers: 0,
    vouchersClaimed: 0,
    openedAt: iso(0),
    lastVoucherAt: null,
    closedAt: null,
    refunded: null,
    createdAt: iso(0),
    ...over,
  };
}

export function receipt(channelId: bigint, cumulative: bigint, over: { amount?: bigint; payee?: string; ts?: string } = {}): Receipt {
  return signReceipt(SIGNER, {
    v: 1,
    network: 'stellar:local',
    signer: SIGNER.address,
    channelId: channelId.toString(),
    payer: PAYER,
    payee: over.payee ?? PAYEE,
    resource: 'https://seller.example/demo/book?q=ü&x=1',
    method: 'GET',
    unit: 'request',
    amount: (over.amount ?? 5_000n).toString(),
    cumulative: cumulative.toString(),
    requestHash: null,
    ts: over.ts ?? iso(1),
  });
}

export function event(over: Partial<NewEvent> = {}): NewEvent {
  return { type: 'voucher.accepted', source: 'facilitator', ts: iso(2), accounts: [PAYER, PAYEE], data: {}, ...over };
}

/** The ops of one accepted voucher: the compare-and-set, its receipt, its event. */
export function acceptOps(channelId: bigint, expected: bigint, cumulative: bigint, at = iso(3)): { ops: WriteOp[]; receipt: Receipt } {
  const r = receipt(channelId, cumulative, { amount: cumulative - expected, ts: at });
  const ops: WriteOp[] = [
    { op: 'channel.advance', channelId, expected, cumulative, signature: sig(cumulative), at },
    { op: 'receipt', receipt: r },
    {
      op: 'event',
      event: event({
        ts: at,
        channelId,
        data: { channelId: channelId.toString(), cumulative: cumulative.toString(), delta: (cumulative - expected).toString(), receiptId: r.id },
      }),
    },
  ];
  return { ops, receipt: r };
}
