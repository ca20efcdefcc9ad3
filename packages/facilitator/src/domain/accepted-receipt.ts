// What every accepted payment writes, whichever scheme paid it — a `channel` advance
// (voucher-advance.ts) or a batch-settlement charge (batch-payments.ts): its receipt, signed by this
// facilitator, and `voucher.accepted` in the audit log, in the same write as the receipt. One shape
// for both, so that buyers, the event feed, the console and revenue read them alike.
import { formatUnits, signReceipt, signReceiptAsync } from '@svc/core';
import type { Keypair, Receipt, ReceiptBody } from '@svc/core';
import type { ChannelRecord, WriteOp } from '../store/port.js';

export interface ReceiptSigning {
  network: string;
  signer: Keypair;
  /** Sign on the calling thread rather than the threadpool (VerifierDeps.signReceiptsInline). */
  signReceiptsInline?: boolean;
}

/** What a receipt says was paid: `amount` of `unit`, bringing the channel's total to `cumulative`, at `ts`. */
export interface Charge {
  unit: ReceiptBody['unit'];
  amount: bigint;
  cumulative: bigint;
  ts: string;
}

/** The receipt of one request paid on `record`'s channel, signed. */
export function signedReceipt(
  signing: ReceiptSigning,
  record: ChannelRecord,
  request: { resource: string; method: string; requestHash: string | null },
  charge: Charge,
): Receipt | Promise<Receipt> {
  const body: ReceiptBody = {
    v: 1,
    network: signing.network,
    signer: signing.signer.address,
    channelId: record.id.toString(),
    payer: record.payer,
    payee: record.payee,
    resource: request.resource,
    method: request.method,
    unit: charge.unit,
    amount: formatUnits(charge.amount),
    cumulative: formatUnits(charge.cumulative),
    requestHash: request.requestHash,
    ts: charge.ts,
  };
  return signing.signReceiptsInline ? signReceipt(signing.signer, body) : signReceiptAsync(signing.signer, body);
}

/**
 * The event op of an accepted payment's receipt. Only a batch-settlement event names its scheme:
 * a `channel` one names none, as every event written before that scheme existed.
 */
export function acceptedEvent(receipt: Receipt, latencyMs: number, scheme?: string): WriteOp {
  return {
    op: 'event',
    event: {
      type: 'voucher.accepted',
      source: 'facilitator',
      ts: receipt.ts,
      channelId: BigInt(receipt.channelId),
      accounts: [receipt.payer, receipt.payee],
      data: {
        channelId: receipt.channelId,
        payer: receipt.payer,
        payee: receipt.payee,
        cumulative: receipt.cumulative,
        delta: receipt.amount,
        unit: receipt.unit,
        resource: receipt.resource,
        latencyMs,
        receiptId: receipt.id,
        ...(scheme === undefined ? {} : { scheme }),
      },
    },
  };
}
