// x402's `payment-identifier` extension: a buyer names a payment with an id of its own, and a retry
// of the same payment under the same id gets the first answer instead of a second charge. The
// seller declares it in its 402 (`extensions['payment-identifier']`, `required: false`); the buyer
// echoes it in its payment payload with `info.id` (16–128 of [A-Za-z0-9_-]). svc honours it for
// `batch-settlement` payments: the facilitator keeps the answer per (payTo, id) and answers a copy
// of the same payment for the same request with it, charged once; the same id on another payment
// is refused with `invalid_payment_identifier_conflict`, a malformed id with
// `invalid_payment_identifier` (codes.ts).
import { z } from 'zod';
import { randomBytes } from '#crypto';
import { toHex } from './bytes.js';

export const PAYMENT_IDENTIFIER = 'payment-identifier';
export const PAYMENT_ID_MIN_LENGTH = 16;
export const PAYMENT_ID_MAX_LENGTH = 128;
export const PAYMENT_ID_RE = /^[A-Za-z0-9_-]{16,128}$/;

/** The JSON Schema the extension's `info` is declared with (as the extension's specification gives it). */
export const PAYMENT_IDENTIFIER_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    required: { type: 'boolean' },
    id: { type: 'string', minLength: PAYMENT_ID_MIN_LENGTH, maxLength: PAYMENT_ID_MAX_LENGTH },
  },
  required: ['required'],
} as const;

export interface PaymentIdentifierExtension {
  info: { required: boolean; id?: string };
  schema: typeof PAYMENT_IDENTIFIER_SCHEMA;
}

/** The declaration as a 402 carries it (read by buyers: the schema is kept as sent). */
export const PaymentIdentifierDeclarationSchema = z
  .object({
    info: z.object({ required: z.boolean(), id: z.string().regex(PAYMENT_ID_RE).optional() }),
    schema: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'PaymentIdentifierExtension' });

/** What a seller's 402 carries under `extensions['payment-identifier']`: svc never requires an id. */
export function paymentIdentifierDeclaration(): PaymentIdentifierExtension {
  return { info: { required: false }, schema: PAYMENT_IDENTIFIER_SCHEMA };
}

/** A fresh id: `pay_` and 32 random hex digits (128 bits), as the extension recommends. */
export function generatePaymentId(): string {
  return `pay_${toHex(randomBytes(16))}`;
}

export function isPaymentId(value: unknown): value is string {
  return typeof value === 'string' && PAYMENT_ID_RE.test(value);
}

export type PaymentIdRead = { ok: true; id: string | null } | { ok: false; message: string };

/**
 * The id a payment payload carries in `extensions['payment-identifier'].info.id`: null when it
 * carries none (no extension, or the extension without an id), an error when one is there and is
 * not 16–128 characters of [A-Za-z0-9_-].
 */
export function readPaymentId(payload: Record<string, unknown>): PaymentIdRead {
  const extensions = payload['extensions'];
  if (!isRecord(extensions)) return { ok: true, id: null };
  const extension = extensions[PAYMENT_IDENTIFIER];
  if (extension === undefined) return { ok: true, id: null };
  const info = isRecord(extension) ? extension['info'] : undefined;
  if (!isRecord(info))
    return {
      ok: false,
      message: `extensions['${PAYMENT_IDENTIFIER}'] must be an object with info { required, id }; send it as the 402 declares it.`,
    };
  const id = info['id'];
  if (id === undefined) return { ok: true, id: null };
  if (!isPaymentId(id))
    return {
      ok: false,
      message: `The payment identifier must be ${PAYMENT_ID_MIN_LENGTH}–${PAYMENT_ID_MAX_LENGTH} characters of [A-Za-z0-9_-] (e.g. pay_ and 32 hex digits); send a new one.`,
    };
  return { ok: true, id };
}

/**
 * `extensions` with this payment's id appended to the seller's declaration (the declaration kept as
 * it came); unchanged when the seller declared no `payment-identifier`. Throws on a malformed id.
 */
export function withPaymentId(
  extensions: Record<string, unknown> | undefined,
  id: string,
): Record<string, unknown> | undefined {
  if (!PAYMENT_ID_RE.test(id))
    throw new TypeError(
      `a payment id is ${PAYMENT_ID_MIN_LENGTH}–${PAYMENT_ID_MAX_LENGTH} characters of [A-Za-z0-9_-], not ${JSON.stringify(id.slice(0, 40))}`,
    );
  const declared = extensions?.[PAYMENT_IDENTIFIER];
  if (!isRecord(declared)) return extensions;
  const info = isRecord(declared['info']) ? declared['info'] : { required: false };
  return { ...extensions, [PAYMENT_IDENTIFIER]: { ...declared, info: { ...info, id } } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
