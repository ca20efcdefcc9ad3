// The `batch-settlement` cooperative refund (packages/ledger/docs/channel-contract.md, `refund`): a
// buyer asks for its unused deposit back, whole or in part, signed by the channel's voucher key
// over a refund digest bound to the channel's refund nonce, so that one signature refunds once:
//
//   message = "svc:refund:v1" ‖ sha256(passphrase) ‖ contract id (32) ‖ channel id (u64 BE)
//             ‖ amount (i128 BE; 0 = everything not charged) ‖ refund nonce (u64 BE)   — 109 bytes
//   signature = ed25519(voucher key, sha256(message))
//
// The domain differs from the voucher's ("svc:voucher:v1", voucher.ts) and so does the length, so
// no voucher signature is a refund signature nor the reverse. The facilitator, the channel's
// receiver authorizer, checks it and calls the contract's `refund` under that nonce.
import { z } from 'zod';
import { sha256 } from '#crypto';
import type { Ed25519Signer } from '#crypto';
import { U64_MAX, parseUnits } from './amount.js';
import { concatBytes, fromHex, i128be, toHex, u64be, utf8 } from './bytes.js';
import { verifyStrictAsync } from './ed25519.js';
import type { Decoded } from './header.js';
import { networkId } from './network.js';
import { safeParse } from './safe-parse.js';
import { zChannelId, zNetwork, zSignatureHex, zUnits } from './schemas.js';
import { rawFromContract } from './strkey.js';

export const REFUND_DOMAIN = 'svc:refund:v1';
export const REFUND_MESSAGE_LENGTH = 109;

const zNonce = z
  .string()
  .regex(/^[0-9]{1,20}$/, 'a decimal u64')
  .refine((v) => /^[0-9]{1,20}$/.test(v) && BigInt(v) <= U64_MAX, 'exceeds u64')
  .meta({ description: "The channel's current refund nonce (channelState.refundNonce), as a decimal string." });

/** The `refund` payload of `batch-settlement`: `amount` absent asks for everything not charged. */
export const BatchRefundSchema = z
  .object({
    type: z.literal('refund'),
    channelId: zChannelId,
    amount: zUnits.refine((v) => !/^0+$/.test(v), 'a refund of more than 0').optional(),
    nonce: zNonce,
    signature: zSignatureHex,
  })
  .meta({ id: 'BatchRefund' });
export type BatchRefundPayload = z.infer<typeof BatchRefundSchema>;

const BatchRefundPaymentPayloadSchema = z.object({
  x402Version: z.literal(2),
  accepted: z.looseObject({ scheme: z.literal('batch-settlement'), network: zNetwork }),
  payload: BatchRefundSchema,
  resource: z.looseObject({ url: z.string().max(2048) }).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

/** A decoded refund request. */
export interface BatchRefund {
  network: string;
  channelId: bigint;
  /** What is asked back; null: everything not charged. */
  amount: bigint | null;
  nonce: bigint;
  /** 128 lowercase hex characters. */
  signature: string;
  accepted: Record<string, unknown>;
}

/** Whether a decoded JSON payment payload is a `batch-settlement` refund (then decodeBatchRefund reads it). */
export function isBatchRefundPayload(value: unknown): boolean {
  const v = value as { accepted?: { scheme?: unknown }; payload?: { type?: unknown } } | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.accepted?.scheme === 'batch-settlement' &&
    typeof v.payload === 'object' &&
    v.payload !== null &&
    v.payload.type === 'refund'
  );
}

export function decodeBatchRefund(value: unknown): Decoded<BatchRefund> {
  const parsed = safeParse(BatchRefundPaymentPayloadSchema, value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'payload';
    return {
      ok: false,
      code: 'PAYMENT_MALFORMED',
      message: `Malformed refund: ${`${where}: ${issue?.message ?? 'invalid payload'}`.slice(0, 200)}.`,
    };
  }
  const { payload, accepted } = parsed.data;
  return {
    ok: true,
    value: {
      network: accepted.network,
      channelId: BigInt(payload.channelId),
      amount: payload.amount === undefined ? null : parseUnits(payload.amount),
      nonce: BigInt(payload.nonce),
      signature: payload.signature.toLowerCase(),
      accepted,
    },
  };
}

/** Binds refunds to one network and one channel contract, as voucherContext binds vouchers. */
export interface RefundContext {
  /** `amount` null (or 0n): everything not charged. */
  hash(channelId: bigint, amount: bigint | null, nonce: bigint): Uint8Array;
  sign(signer: Ed25519Signer, channelId: bigint, amount: bigint | null, nonce: bigint): string;
  verifyAsync(
    voucherKey: Uint8Array,
    channelId: bigint,
    amount: bigint | null,
    nonce: bigint,
    signatureHex: string,
  ): Promise<boolean>;
}

export function refundContext(networkPassphrase: string, channelContract: string): RefundContext {
  const raw = rawFromContract(channelContract);
  if (raw.length !== 32) throw new TypeError('a contract id is 32 bytes');
  const prefix = concatBytes(utf8(REFUND_DOMAIN), networkId(networkPassphrase), raw);
  const hash = (channelId: bigint, amount: bigint | null, nonce: bigint) =>
    sha256(concatBytes(prefix, u64be(channelId), i128be(amount ?? 0n), u64be(nonce)));
  return {
    hash,
    sign: (signer, channelId, amount, nonce) => toHex(signer.sign(hash(channelId, amount, nonce))),
    verifyAsync: (key, channelId, amount, nonce, signatureHex) =>
      verifyStrictAsync(key, hash(channelId, amount, nonce), fromHex(signatureHex, 64)),
  };
}

/** A refund the facilitator refused: `code` is the scheme's (or svc's), `message` says what to do. */
export class BatchRefundError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'BatchRefundError';
  }
}

export interface RefundRequest {
  /** The seller's batch-settlement option (a 402's `accepts` element): names the facilitator. */
  terms: Record<string, unknown> & { network: string; extra: { facilitator: string } };
  channelId: bigint;
  /** What to ask back; absent: everything not charged. */
  amount?: bigint;
  /** Signs the refund digest with the channel's voucher key (RefundContext.sign). */
  sign(amount: bigint | null, nonce: bigint): string;
  /** The nonce to try first (default 0); a refusal that shows the channel's current one is signed again once. */
  nonce?: bigint;
  fetch?: typeof fetch;
}

export interface RefundResult {
  refunded: bigint;
  /** The ledger transaction of the refund. */
  transaction: string;
  /** The channel after the refund, as the facilitator shows it. */
  channelState: { balance: string; refundNonce: string } & Record<string, unknown>;
}

/**
 * Asks the terms' facilitator for a cooperative refund (POST /settle with a `refund` payload),
 * straight, not through the seller: the facilitator is the channel's receiver authorizer, the
 * one that can refund. Throws BatchRefundError when refused.
 */
export async function requestBatchRefund(req: RefundRequest): Promise<RefundResult> {
  const doFetch = req.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const amount = req.amount ?? null;
  if (amount !== null && amount <= 0n) throw new BatchRefundError('refund_amount', 'a refund asks for more than 0');
  const url = `${req.terms.extra.facilitator.replace(/\/+$/, '')}/settle`;
  let nonce = req.nonce ?? 0n;
  for (let attempt = 0; ; attempt++) {
    const payload = {
      type: 'refund',
      channelId: req.channelId.toString(),
      ...(amount === null ? {} : { amount: amount.toString() }),
      nonce: nonce.toString(),
      signature: req.sign(amount, nonce),
    };
    const res = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: req.terms, payload },
        paymentRequirements: req.terms,
      }),
    });
    const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (body === null || typeof body !== 'object')
      throw new BatchRefundError('facilitator', `the facilitator at ${url} answered ${res.status} without JSON`);
    if (body['success'] === true) {
      const extra = body['extra'] as { channelState?: RefundResult['channelState'] } | undefined;
      const refunded = String(body['amount']);
      if (!/^[0-9]{1,39}$/.test(refunded) || !extra?.channelState)
        throw new BatchRefundError(
          'facilitator',
          `the facilitator's answer is not a refund: ${JSON.stringify(body).slice(0, 200)}`,
        );
      return { refunded: BigInt(refunded), transaction: String(body['transaction']), channelState: extra.channelState };
    }
    const code = textOf(body['errorReason']) ?? textOf(body['error']) ?? String(res.status);
    const message = textOf(body['errorMessage']) ?? textOf(body['message']) ?? 'refused';
    const current = (body['extra'] as { channelState?: { refundNonce?: unknown } } | undefined)?.channelState
      ?.refundNonce;
    // The channel's nonce moved on (an earlier refund): sign once more under the current one.
    if (attempt === 0 && typeof current === 'string' && /^[0-9]{1,20}$/.test(current) && BigInt(current) !== nonce) {
      nonce = BigInt(current);
      continue;
    }
    throw new BatchRefundError(code, message);
  }
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' ? value.slice(0, 500) : null;
}
