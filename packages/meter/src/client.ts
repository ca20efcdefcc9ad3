// svc({ facilitator, payTo, publicUrl }) → { meter, stream, acceptVoucher }.
//
//   import express from 'express';
//   import { svc } from '@svc/meter';
//   const { meter } = svc({ facilitator: 'http://127.0.0.1:4020', payTo: 'G…' });
//   app.get('/book', meter({ price: 5000n, unit: 'request' }), (req, res) => res.json({ paid: req.payment }));
import { describeNonAddress, globalFetch, isAddress, parseSellerToken, UNITS } from '@svc/core';
import type { StreamVoucher } from '@svc/core';
import { FacilitatorClient, StreamCalls } from './facilitator-client.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openPaidStream } from './stream.js';
import type { PaidStream, StreamOptions } from './stream.js';
import { Gate } from './gate.js';
import { nodeMeter } from './node.js';
import type { NodeMiddleware } from './node.js';
import type { MeterOptions } from './terms.js';
import { nativePost } from '#transport';
import type { PostJson } from './transport.js';

const DEFAULT_TIMEOUT_MS = 10_000;

export interface SvcOptions {
  /** Base URL of the facilitator that verifies and settles vouchers. */
  facilitator: string;
  /**
   * Ledger address of the seller (`npx svc-seller init` prints it); channels must name it as payee
   * (else WRONG_PAYEE). Required: undefined is accepted by the type only so that an environment
   * variable can be passed as it is, and throws at once with what to do.
   */
  payTo: string | undefined;
  /** Public origin of the seller's server; derived from each request when omitted (set it behind a proxy). */
  publicUrl?: string;
  /**
   * The seller's token at this facilitator (`svc-seller token`): proves the middleware is the
   * payee's. Needed to stream, to attest responses and to be listed in discovery; payments per
   * request are verified without it.
   */
  sellerToken?: string;
  /**
   * For tests and unusual runtimes: every call to the facilitator goes through it. Without it, on
   * Node the per-request calls (/verify, attestations) go over node:http with keep-alive sockets,
   * a fraction of fetch's CPU, and the rest over the global fetch.
   */
  fetch?: typeof fetch;
  /**
   * For a facilitator in the seller's own process: how the per-request calls (/verify,
   * attestations) reach it, without an HTTP client (a JSON POST answered with its status, parsed
   * body and headers). The other calls still go through `fetch`.
   */
  post?: PostJson;
  timeoutMs?: number;
}

export interface SvcClient {
  /**
   * The middleware factory: (req, res, next) for node:http, Express and compatible frameworks;
   * `nodeMeter(client, options)`, as `fastifyMeter` and `honoMeter` are called.
   */
  meter(options: MeterOptions): NodeMiddleware;
  /** The framework-neutral gate behind every binding. */
  gate(options: MeterOptions): Gate;
  /** A paid SSE stream for `token`/`second` units, on a request the meter already charged. */
  stream(req: IncomingMessage, res: ServerResponse, options: StreamOptions): Promise<PaidStream>;
  /** Sends a bare voucher to the facilitator (POST /channels/:id/voucher). */
  acceptVoucher(channelId: string, voucher: StreamVoucher): Promise<unknown>;
  readonly facilitator: FacilitatorClient;
  readonly payTo: string;
  readonly publicUrl: string | undefined;
}

export function svc(options: SvcOptions): SvcClient {
  const facilitatorUrl = checkUrl('facilitator', options.facilitator);
  const publicUrl = options.publicUrl === undefined ? undefined : checkUrl('publicUrl', options.publicUrl);
  if (options.payTo === undefined)
    throw new TypeError(
      'svc: payTo is missing: the seller’s address (G…), which `npx svc-seller init` creates and prints',
    );
  if (!isAddress(options.payTo))
    throw new TypeError(`svc: payTo must be a Stellar address (G… or C…); it is ${describeNonAddress(options.payTo)}`);
  const payTo = options.payTo;
  const sellerToken = checkSellerToken(options.sellerToken, payTo);
  const facilitator = new FacilitatorClient(
    facilitatorUrl,
    options.fetch ?? globalFetch,
    options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    sellerToken,
    options.post ?? (options.fetch ? undefined : (nativePost() ?? undefined)),
  );
  const streams = new StreamCalls(
    facilitatorUrl,
    options.fetch ?? globalFetch,
    options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    sellerToken,
  );
  // Once, at start: a facilitator URL that is wrong, or a facilitator that is down, is said in the
  // seller's log now rather than first learnt from a buyer's failed payment. (A good answer is
  // cached for the first requests; a failure is not held against them.)
  facilitator
    .probe()
    .catch((err: unknown) =>
      console.warn(
        `@svc/meter: at start, the facilitator at ${facilitatorUrl} cannot be used: ${(err as Error).message}. Payments fail until it can.`,
      ),
    );
  const gate = (meterOptions: MeterOptions) => new Gate({ facilitator, payTo }, checkMeterOptions(meterOptions));
  const client: SvcClient = {
    meter: (meterOptions) => nodeMeter(client, meterOptions),
    gate,
    stream: (req, res, streamOptions) => {
      if (sellerToken === null)
        return Promise.reject(
          new TypeError(
            'stream(): streaming needs the seller’s token: svc({ …, sellerToken }) (get one with `svc-seller token`)',
          ),
        );
      return openPaidStream(streams, req, res, checkStreamOptions(streamOptions));
    },
    acceptVoucher: (channelId, voucher) => facilitator.postVoucher(channelId, voucher),
    facilitator,
    payTo,
    publicUrl,
  };
  return client;
}

function checkUrl(name: string, value: unknown): string {
  try {
    const url = new URL(String(value));
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href.replace(/\/+$/, '');
  } catch {
    // fall through
  }
  throw new TypeError(`svc: ${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
}

/** A seller token's shape, and what the meter can check of it without the facilitator: whose it is, and until when. */
function checkSellerToken(token: unknown, payTo: string): string | null {
  if (token === undefined) return null;
  const parsed = typeof token === 'string' ? parseSellerToken(token) : null;
  if (parsed === null)
    throw new TypeError('svc: sellerToken must be a seller token from `svc-seller token` (svcs1.G….…)');
  if (parsed.payTo !== payTo)
    throw new TypeError(
      `svc: sellerToken is ${parsed.payTo}’s, but payTo is ${payTo}: get a token with payTo’s key (\`svc-seller token\` with SVC_SELLER set to payTo’s key file)`,
    );
  if (parsed.expiresUnix * 1000 <= Date.now())
    throw new TypeError(
      `svc: sellerToken expired at ${new Date(parsed.expiresUnix * 1000).toISOString()}: get a new one with \`svc-seller token\``,
    );
  return token as string;
}

function checkStreamOptions(o: StreamOptions): StreamOptions {
  checkMeterOptions(o);
  if (o.unit !== 'token' && o.unit !== 'second') throw new TypeError('stream: unit must be "token" or "second"');
  if (o.voucherTimeoutMs !== undefined && (!Number.isInteger(o.voucherTimeoutMs) || o.voucherTimeoutMs <= 0)) {
    throw new TypeError('stream: voucherTimeoutMs must be a positive whole number of milliseconds');
  }
  return o;
}

function checkMeterOptions(o: MeterOptions): MeterOptions {
  if (typeof o.price !== 'bigint' || o.price <= 0n) {
    throw new TypeError(
      `meter: price must be a positive bigint of base units (e.g. 5000n), got ${typeof o.price === 'bigint' ? o.price : JSON.stringify(o.price)}`,
    );
  }
  if (!UNITS.includes(o.unit))
    throw new TypeError(`meter: unit must be one of ${UNITS.join(', ')}, got ${JSON.stringify(o.unit)}`);
  for (const key of ['sliceTokens', 'sliceSeconds'] as const) {
    const v = o[key];
    if (v !== undefined && (!Number.isInteger(v) || v <= 0))
      throw new TypeError(`meter: ${key} must be a positive whole number`);
  }
  if (o.description !== undefined && (typeof o.description !== 'string' || o.description.length > 1024)) {
    throw new TypeError('meter: description must be a string of at most 1024 characters');
  }
  return o;
}
