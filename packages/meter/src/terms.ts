// Payment terms: the 402 body (spec "402 body"; docs/protocol.md#the-402-answer) built from the meter's options and
// the facilitator's /supported answer.
import { PAYMENT_IDENTIFIER, X402_VERSION, batchTermsOf, formatUnits, paymentIdentifierDeclaration } from '@svc/core';
import type {
  Bazaar,
  BatchKind,
  BatchRequirements,
  ChannelKind,
  ChannelState,
  PaymentRequired,
  PaymentRequirements,
  SupportedResponse,
  Unit,
  VoucherState,
} from '@svc/core';

export const MAX_TIMEOUT_SECONDS = 60;
/** extra.minDeposit: 1000 × the unit price, or 100 × the slice price for sliced units. */
export const MIN_DEPOSIT_UNITS = 1000n;
export const MIN_DEPOSIT_SLICES = 100n;
export const DEFAULT_SLICE_TOKENS = 50;
export const DEFAULT_SLICE_SECONDS = 10;

export interface MeterOptions {
  /** Price of one unit, in the asset's base units. */
  price: bigint;
  unit: Unit;
  description?: string;
  /** For `token`: tokens paid per voucher (default 50). */
  sliceTokens?: number;
  /** For `second`: seconds paid per voucher (default 10). */
  sliceSeconds?: number;
  bazaar?: { info?: Partial<Bazaar['info']>; schema?: Record<string, unknown> };
}

export function sliceOf(options: MeterOptions): number {
  if (options.unit === 'token') return options.sliceTokens ?? DEFAULT_SLICE_TOKENS;
  if (options.unit === 'second') return options.sliceSeconds ?? DEFAULT_SLICE_SECONDS;
  return 1;
}

/** What a seller asks, as the 402's options: `channel`, and `batch-settlement` where the facilitator offers it. */
export interface Terms {
  channel: PaymentRequirements;
  batch: BatchRequirements | null;
}

export function termsFor(options: MeterOptions, payTo: string, supported: SupportedResponse): Terms {
  const channel = requirementsFor(options, payTo, supported);
  const batchKind = supported.kinds.find(
    (k): k is BatchKind => k.scheme === 'batch-settlement' && k.network === channel.network,
  );
  return { channel, batch: batchKind ? batchTermsOf(channel, batchKind.extra.receiverAuthorizer) : null };
}

export function requirementsFor(
  options: MeterOptions,
  payTo: string,
  supported: SupportedResponse,
): PaymentRequirements {
  const channelKinds = supported.kinds.filter((k): k is ChannelKind => k.scheme === 'channel');
  const kind = channelKinds.find((k) => k.x402Version === X402_VERSION) ?? channelKinds[0];
  if (!kind) throw new Error('the facilitator supports no payment kind');
  const slice = BigInt(sliceOf(options));
  const sliceAmount = options.price * slice;
  const sliced = options.unit !== 'request';
  return {
    scheme: 'channel',
    network: kind.network,
    asset: kind.extra.asset,
    payTo,
    amount: formatUnits(options.price),
    unit: options.unit,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: {
      channelContract: kind.extra.channelContract,
      minDeposit: formatUnits(sliced ? sliceAmount * MIN_DEPOSIT_SLICES : options.price * MIN_DEPOSIT_UNITS),
      facilitator: kind.extra.facilitator,
      areFeesSponsored: kind.extra.areFeesSponsored,
      ...(options.unit === 'token' ? { sliceTokens: Number(slice) } : {}),
      ...(options.unit === 'second' ? { sliceSeconds: Number(slice) } : {}),
      ...(sliced ? { sliceAmount: formatUnits(sliceAmount) } : {}),
    },
  };
}

export function mimeTypeOf(unit: Unit): string {
  return unit === 'request' ? 'application/json' : 'text/event-stream';
}

/** The most of a request's query a 402 shows as its example input: parameters, and their characters in all. */
const EXAMPLE_QUERY_MAX_PARAMS = 16;
const EXAMPLE_QUERY_MAX_CHARS = 1024;

/** Discovery metadata; derived from the HTTP method and unit where the seller gave none. */
export function bazaarFor(options: MeterOptions, method: string, query: URLSearchParams): Bazaar {
  const given = options.bazaar?.info;
  return {
    info: {
      input: given?.input ?? { type: 'http', method, queryParams: exampleQuery(query) },
      output: given?.output ?? { type: 'json', mimeType: mimeTypeOf(options.unit) },
    },
    schema: options.bazaar?.schema ?? {},
  };
}

/**
 * The request's query as the 402's example input, bounded: whatever a caller sends is echoed in the
 * body and again, base64, in PAYMENT-REQUIRED, and a long query would push that header past what
 * clients parse (Node's 16 KiB of headers) and past the bounds BazaarSchema sets on each name and
 * value. Parameters that do not fit are left out; the first ones that fit are kept, the last value
 * of a repeated name winning as in Object.fromEntries.
 */
function exampleQuery(query: URLSearchParams): Record<string, string> {
  const kept: [string, string][] = [];
  let chars = 0;
  for (const [name, value] of query) {
    if (kept.length >= EXAMPLE_QUERY_MAX_PARAMS) break;
    if (name.length > 256 || chars + name.length + value.length > EXAMPLE_QUERY_MAX_CHARS) continue;
    kept.push([name, value]);
    chars += name.length + value.length;
  }
  return Object.fromEntries(kept);
}

export interface TermsContext {
  error: string;
  source: 'gateway' | 'facilitator';
  message: string;
  resourceUrl: string;
  terms: Terms;
  bazaar: Bazaar;
  options: MeterOptions;
  /** A corrective 402 (a batch-settlement cumulative mismatch): the channel as it is, for the buyer to catch up. */
  correction?: { channelState: ChannelState; voucherState?: VoucherState } | undefined;
}

/** The 402: the `channel` option first, exactly as the specification has it, then `batch-settlement`. */
export function paymentRequired(c: TermsContext): PaymentRequired {
  const batch =
    c.terms.batch && c.correction
      ? { ...c.terms.batch, extra: { ...c.terms.batch.extra, ...c.correction } }
      : c.terms.batch;
  return {
    x402Version: X402_VERSION,
    error: c.error,
    source: c.source,
    message: c.message,
    resource: { url: c.resourceUrl, description: c.options.description ?? '', mimeType: mimeTypeOf(c.options.unit) },
    accepts: batch ? [c.terms.channel, batch] : [c.terms.channel],
    // x402's payment-identifier is honoured for batch-settlement payments only (the facilitator's
    // payment-ids.ts): it is declared with that option, and a channel-only 402 stays as it was.
    extensions: batch
      ? { bazaar: c.bazaar, [PAYMENT_IDENTIFIER]: paymentIdentifierDeclaration() }
      : { bazaar: c.bazaar },
  };
}

/**
 * Names a price once, for `meter()` and `stream()` alike, keeping its `unit` a literal: a plain
 * object literal kept in a variable widens `unit: 'second'` to `string` under TypeScript.
 *
 *   const ticker = defineMeter({ price: 1000n, unit: 'second', sliceSeconds: 2 });
 *   app.get('/ticker', meter(ticker), async (req, res) => { const s = await stream(req, res, ticker); … });
 */
export function defineMeter<const O extends MeterOptions>(options: O): O {
  return options;
}
