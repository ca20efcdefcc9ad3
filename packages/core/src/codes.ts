// Reason codes and their HTTP statuses (docs/protocol.md#errors), in one table with its own test.

export const REASON_STATUS = {
  PAYMENT_REQUIRED: 402,
  CHANNEL_NOT_FOUND: 402,
  CHANNEL_CLOSED: 402,
  CHANNEL_EXPIRING: 402,
  WRONG_PAYEE: 402,
  WRONG_ASSET: 402,
  WRONG_NETWORK: 402,
  VOUCHER_BAD_SIGNATURE: 402,
  VOUCHER_NOT_INCREASING: 402,
  VOUCHER_UNDERPAID: 402,
  CHANNEL_EXHAUSTED: 402,
  ACCOUNT_FROZEN: 402,
  UNSUPPORTED_SCHEME: 402,
  UNSUPPORTED_VERSION: 402,
  PAYMENT_MALFORMED: 400,
  BAD_REQUEST: 400,
  /** x402's payment-identifier extension: the id is not 16–128 of [A-Za-z0-9_-]. */
  invalid_payment_identifier: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  STREAM_NOT_FOUND: 404,
  CONFLICT: 409,
  /** x402's payment-identifier extension (payment-identifier.ts): the id is another payment's. */
  invalid_payment_identifier_conflict: 409,
  REPORT_NOT_VERIFIED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  LEDGER_REJECTED: 502,
  LEDGER_UNAVAILABLE: 503,
  FACILITATOR_UNAVAILABLE: 503,
  SELLER_MISCONFIGURED: 502,
} as const satisfies Record<string, number>;

export type ReasonCode = keyof typeof REASON_STATUS;

/** The codes a payment can be rejected with (HTTP 402 at a seller, isValid: false at /verify). */
export type PaymentRejection =
  | {
      [K in ReasonCode]: (typeof REASON_STATUS)[K] extends 402 ? K : never;
    }[ReasonCode]
  | 'PAYMENT_MALFORMED'
  | 'RATE_LIMITED'
  | PaymentIdRejection;

/** A payment refused for its `payment-identifier` (payment-identifier.ts), whatever its scheme. */
export type PaymentIdRejection = 'invalid_payment_identifier' | 'invalid_payment_identifier_conflict';

export const DEFAULT_MESSAGES: Record<ReasonCode, string> = {
  PAYMENT_REQUIRED: 'Payment required: send a signed voucher in the PAYMENT-SIGNATURE header.',
  CHANNEL_NOT_FOUND: 'The channel named in the payment does not exist on this network.',
  CHANNEL_CLOSED: 'The channel is closed; open a new channel.',
  CHANNEL_EXPIRING:
    'The channel is too close to its expiry to accept vouchers; top it up with a later expiry or open a new one.',
  WRONG_PAYEE: "The channel's payee is not this seller's payTo address.",
  WRONG_ASSET: 'The payment is in a different asset than the one asked for.',
  WRONG_NETWORK: 'The payment is for a different network than the one asked for.',
  VOUCHER_BAD_SIGNATURE: "The voucher signature does not verify under the channel's voucher key.",
  VOUCHER_NOT_INCREASING: "The voucher's cumulative amount is not above the last accepted one.",
  VOUCHER_UNDERPAID: 'The voucher adds less than the price owed.',
  CHANNEL_EXHAUSTED: "The voucher's cumulative amount exceeds the channel's deposit.",
  ACCOUNT_FROZEN: "The payer's account is frozen.",
  UNSUPPORTED_SCHEME: 'This facilitator handles the `channel` and `batch-settlement` schemes.',
  UNSUPPORTED_VERSION: 'This facilitator speaks x402 versions 1 and 2.',
  PAYMENT_MALFORMED: 'The payment payload is malformed.',
  BAD_REQUEST: 'The request is malformed.',
  invalid_payment_identifier:
    'The payment identifier (extensions.payment-identifier.info.id) must be 16–128 characters of [A-Za-z0-9_-]; send a new one.',
  invalid_payment_identifier_conflict:
    'This payment identifier was used for another payment or request; send this payment with a new identifier.',
  UNAUTHORIZED: 'Authentication is required.',
  FORBIDDEN: 'This request is not allowed.',
  NOT_FOUND: 'Not found.',
  STREAM_NOT_FOUND: 'No such stream session.',
  CONFLICT: 'The request conflicts with the current state.',
  REPORT_NOT_VERIFIED: 'The reported transaction could not be verified against the ledger.',
  RATE_LIMITED: 'Too many requests; retry after the time in Retry-After.',
  INTERNAL: 'Internal error.',
  LEDGER_REJECTED: 'The ledger rejected the transaction.',
  LEDGER_UNAVAILABLE: 'The ledger is unavailable; try again shortly.',
  FACILITATOR_UNAVAILABLE: 'The payment facilitator is unavailable; try again shortly.',
  SELLER_MISCONFIGURED:
    'This seller cannot take payments until it corrects its own setup (its facilitator or its credentials); nothing was charged, and retrying will not help until then.',
};

export type ErrorSource = 'gateway' | 'facilitator' | 'ledger';

export function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'string' && Object.hasOwn(REASON_STATUS, value);
}

export function statusOf(code: ReasonCode): number {
  return REASON_STATUS[code];
}

/** A typed error with a string code; the HTTP layer maps it with REASON_STATUS. */
export class SvcError extends Error {
  readonly code: ReasonCode;
  readonly source: ErrorSource;
  readonly tx: string | undefined;
  /** Seconds, for RATE_LIMITED. */
  readonly retryAfter: number | undefined;

  constructor(
    code: ReasonCode,
    message?: string,
    opts: { source?: ErrorSource; tx?: string; retryAfter?: number } = {},
  ) {
    super(message ?? DEFAULT_MESSAGES[code]);
    this.name = 'SvcError';
    this.code = code;
    this.source = opts.source ?? 'facilitator';
    this.tx = opts.tx;
    this.retryAfter = opts.retryAfter;
  }

  get status(): number {
    return REASON_STATUS[this.code];
  }

  /** The error body of docs/protocol.md#errors. */
  toBody(): ErrorBody {
    return { error: this.code, source: this.source, message: this.message, ...(this.tx ? { tx: this.tx } : {}) };
  }
}

export interface ErrorBody {
  error: ReasonCode;
  source: ErrorSource;
  message: string;
  tx?: string;
}

/** Ledger contract error codes (docs/protocol.md#channels-and-records). */
export const LEDGER_CODES = {
  1: 'BAD_SIGNATURE',
  2: 'POLICY_EXPIRED',
  3: 'ACCOUNT_FROZEN',
  5: 'PAYEE_NOT_ALLOWED',
  6: 'PER_TX_CAP_EXCEEDED',
  7: 'DAILY_CAP_EXCEEDED',
  20: 'CHANNEL_NOT_FOUND',
  21: 'CHANNEL_CLOSED',
  22: 'VOUCHER_BAD_SIGNATURE',
  23: 'VOUCHER_NOT_INCREASING',
  24: 'EXCEEDS_DEPOSIT',
  25: 'NOT_EXPIRED',
  26: 'NOT_AUTHORIZED',
  27: 'INVALID_ARGUMENT',
} as const;

export type LedgerCode = keyof typeof LEDGER_CODES;
export type LedgerCodeName = (typeof LEDGER_CODES)[LedgerCode];

export const STREAM_END_REASONS = ['done', 'CHANNEL_EXHAUSTED', 'TIMEOUT', 'ACCOUNT_FROZEN', 'ABORTED'] as const;
export type StreamEndReason = (typeof STREAM_END_REASONS)[number];
