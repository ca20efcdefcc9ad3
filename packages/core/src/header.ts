// Header codec: standard base64 of UTF-8 JSON (docs/protocol.md#payment-payload). Decoding never throws: a bad
// payment header is the reason code PAYMENT_MALFORMED, never a 500.
import sjson from 'secure-json-parse';
import type { z } from 'zod';
import { parseUnits } from './amount.js';
import { fromBase64, fromUtf8, toBase64, utf8 } from './bytes.js';
import { MAX_JSON_DEPTH, jsonDepth } from './json-depth.js';
import { PaymentPayloadSchema } from './x402.js';
import type { Payment } from './x402.js';
import { safeParse } from './safe-parse.js';

export const MAX_PAYMENT_HEADER_BYTES = 8 * 1024;
/** secure-json-parse's message for a __proto__ key or a constructor with a prototype. */
const FORBIDDEN_PROTOTYPE = 'Object contains forbidden prototype property';

export type Decoded<T> = { ok: true; value: T } | { ok: false; code: 'PAYMENT_MALFORMED'; message: string };

export function encodeJsonHeader(value: unknown): string {
  return toBase64(utf8(JSON.stringify(value)));
}

/** Base64 JSON → value; refuses over `maxBytes`, bad base64, bad UTF-8, bad JSON and JSON nested past MAX_JSON_DEPTH. */
export function decodeJsonHeader(header: string, maxBytes = MAX_PAYMENT_HEADER_BYTES): Decoded<unknown> {
  if (typeof header !== 'string' || header.length === 0) return malformed('the header is empty');
  if (header.length > maxBytes) return malformed(`the header is larger than ${maxBytes} bytes`);
  let text: string;
  try {
    text = fromUtf8(fromBase64(header.trim()));
  } catch {
    return malformed('the header is not standard base64 of UTF-8 JSON');
  }
  let value: unknown;
  try {
    // The facilitator's body parser refuses the prototype-poisoning keys too: a gateway that
    // forwarded them would get its own /verify refused as a body that is not JSON.
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    return malformed(
      (err as Error).message === FORBIDDEN_PROTOTYPE
        ? 'the JSON has a __proto__ key, or a constructor key with a prototype'
        : 'the header is not standard base64 of UTF-8 JSON',
    );
  }
  if (jsonDepth(value) > MAX_JSON_DEPTH) return malformed(`the JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return { ok: true, value };
}

/** A decoded JSON payment payload (either form) → Payment. */
export function decodePayment(value: unknown): Decoded<Payment> {
  const parsed = safeParse(PaymentPayloadSchema, value);
  if (!parsed.success) return malformed(describe(parsed.error));
  const p = parsed.data;
  const payment: Payment = {
    x402Version: p.x402Version,
    network: 'accepted' in p ? p.accepted.network : p.network,
    channelId: BigInt(p.payload.channelId),
    cumulative: parseUnits(p.payload.cumulative),
    signature: p.payload.signature.toLowerCase(),
  };
  if ('accepted' in p) payment.accepted = p.accepted;
  if ('extensions' in p && p.extensions) payment.extensions = p.extensions;
  return { ok: true, value: payment };
}

/** PAYMENT-SIGNATURE (or v1 X-PAYMENT) header → Payment. */
export function decodePaymentHeader(header: string): Decoded<Payment> {
  const json = decodeJsonHeader(header);
  return json.ok ? decodePayment(json.value) : json;
}

function malformed(message: string): Decoded<never> {
  return { ok: false, code: 'PAYMENT_MALFORMED', message: `Malformed payment: ${message}.` };
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid payload';
  const path = issue.path.length ? issue.path.join('.') : 'payload';
  return `${path}: ${issue.message}`.slice(0, 200);
}
