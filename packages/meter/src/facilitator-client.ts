// The meter's only dependency: the facilitator, over HTTP. `/supported` is cached (it tells the
// asset, the channel contract and the receipt signer); `/verify` carries an Idempotency-Key so a
// retry after a lost answer returns the first answer instead of VOUCHER_NOT_INCREASING.
import {
  SettleResponseSchema,
  StreamEndedSchema,
  StreamOpenedSchema,
  StreamWaitResultSchema,
  SupportedUnreadable,
  VerifyResponseSchema,
  randomBytes,
  readSupported,
  safeParse,
  toHex,
} from '@svc/core';
import type {
  BatchRequirements,
  BatchSettleSuccess,
  ErrorBody,
  SettleResponse,
  StreamEnded,
  StreamOpen,
  StreamOpened,
  StreamVoucher,
  StreamWaitResult,
  SupportedResponse,
  VerifyRequest,
  VerifyResponse,
} from '@svc/core';
import { fetchPost } from './transport.js';
import type { JsonReply, PostJson } from './transport.js';

const SUPPORTED_TTL_MS = 5 * 60_000;
const SUPPORTED_RETRY_MS = 2_000;

export type VerifyReply =
  | { kind: 'verdict'; verdict: VerifyResponse }
  | { kind: 'error'; status: number; body: ErrorBody | null; retryAfter: string | null }
  /** No answer: the payment may have been accepted under `idempotencyKey` (see unserved()). */
  | { kind: 'unreachable'; message: string; idempotencyKey: string };

/** A `batch-settlement` /settle answer: the charge and the channel after it, or the scheme's refusal. */
export type BatchSettleAnswer = BatchSettleSuccess | Extract<SettleResponse, { success: false }>;
export type SettleReply = { kind: 'settled'; answer: BatchSettleAnswer } | Exclude<VerifyReply, { kind: 'verdict' }>;
/** The body of a batch-settlement /settle: the verify body's fields, with batch terms. */
export interface BatchSettleRequest {
  x402Version: 2;
  paymentPayload: Record<string, unknown>;
  paymentRequirements: BatchRequirements;
  method: string;
  requestHash: string | null;
}

/** Tries of POST /verify/unserved after the first, in the background, and the wait before each. */
const UNSERVED_RETRY_MS = [1_000, 4_000, 15_000];

export class FacilitatorUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FacilitatorUnavailable';
  }
}

/**
 * The seller's own setup is wrong, not the facilitator's availability: the URL answers but is no
 * facilitator (404, or not /supported's body), or the facilitator refuses the seller's token.
 */
export class SellerMisconfigured extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SellerMisconfigured';
  }
}

export class FacilitatorClient {
  private supportedCache: { value: SupportedResponse; at: number } | null = null;
  private supportedFailedAt = 0;
  /** Why /supported last failed: said again, without asking, until SUPPORTED_RETRY_MS have passed. */
  private supportedFailure: Error | null = null;
  private supportedPending: Promise<SupportedResponse> | null = null;

  constructor(
    readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch,
    private readonly timeoutMs: number,
    /** The seller's token (Authorization on /verify), or null. */
    private readonly sellerToken: string | null = null,
    /** How the per-request calls (/verify, attest) are sent; `fetchImpl` unless given. */
    private readonly post: PostJson = fetchPost(fetchImpl),
  ) {}

  /** Cached; throws FacilitatorUnavailable when it cannot be read. */
  async supported(): Promise<SupportedResponse> {
    const now = Date.now();
    if (this.supportedCache && now - this.supportedCache.at < SUPPORTED_TTL_MS) return this.supportedCache.value;
    if (!this.supportedCache && this.supportedFailure && now - this.supportedFailedAt < SUPPORTED_RETRY_MS) {
      throw this.supportedFailure;
    }
    this.supportedPending ??= this.loadSupported().finally(() => {
      this.supportedPending = null;
    });
    try {
      return await this.supportedPending;
    } catch (err) {
      // A stale answer beats none: the facilitator's terms rarely change.
      if (this.supportedCache) return this.supportedCache.value;
      this.supportedFailedAt = Date.now();
      this.supportedFailure =
        err instanceof SellerMisconfigured
          ? err
          : new FacilitatorUnavailable(`the facilitator did not answer GET /supported: ${(err as Error).message}`);
      throw err;
    }
  }

  /**
   * GET /supported once, for the check at start: a success fills the cache, a failure is only
   * returned — it does not make the first requests fail without asking again.
   */
  async probe(): Promise<void> {
    this.supportedPending ??= this.loadSupported().finally(() => {
      this.supportedPending = null;
    });
    await this.supportedPending;
  }

  private async loadSupported(): Promise<SupportedResponse> {
    let supported: SupportedResponse;
    try {
      supported = await readSupported(this.baseUrl, { fetch: this.fetchImpl, timeoutMs: this.timeoutMs });
    } catch (err) {
      if (!(err instanceof SupportedUnreadable)) throw err;
      const { status } = err;
      if (status === null) {
        const cause = err.cause instanceof Error ? err.cause.message : String(err.cause);
        throw new FacilitatorUnavailable(`the facilitator at ${this.baseUrl} is unreachable: ${cause}`);
      }
      // A server that answers, but not as a facilitator: the seller's `facilitator` URL is wrong.
      // 5xx and 429 are a facilitator's trouble, to retry.
      if (status < 500 && status !== 429)
        throw new SellerMisconfigured(
          `GET ${this.baseUrl}/supported answered ${status} ${status >= 200 && status < 300 ? 'with something that is not a facilitator’s /supported' : 'instead of the facilitator’s terms'}: check svc({ facilitator }) — it is the facilitator’s base URL, e.g. http://127.0.0.1:4020`,
        );
      throw new FacilitatorUnavailable(`GET ${this.baseUrl}/supported answered ${status} without a valid body`);
    }
    this.supportedCache = { value: supported, at: Date.now() };
    return supported;
  }

  /** POST /verify; a network failure is retried once with the same Idempotency-Key. */
  verify(body: VerifyRequest): Promise<VerifyReply> {
    return this.ask('/verify', body, idempotencyKey(), (json) => {
      const verdict = safeParse(VerifyResponseSchema, json);
      return verdict.success ? { kind: 'verdict', verdict: verdict.data } : null;
    });
  }

  /** POST /verify of a `batch-settlement` payment: valid (its channel reserved for it), or refused. */
  verifyBatch(body: BatchSettleRequest): Promise<VerifyReply> {
    return this.ask('/verify', body, idempotencyKey(), (json) => {
      const verdict = safeParse(VerifyResponseSchema, json);
      return verdict.success ? { kind: 'verdict', verdict: verdict.data } : null;
    });
  }

  /**
   * POST /settle of a `batch-settlement` payment: the channel charged, and the receipt (or the
   * scheme's refusal); a network failure is retried once with the same Idempotency-Key.
   */
  settle(body: BatchSettleRequest, key: string = idempotencyKey()): Promise<SettleReply> {
    return this.ask('/settle', body, key, (json) => {
      const answer = safeParse(SettleResponseSchema, json);
      if (!answer.success) return null;
      const a = answer.data;
      if (a.success && !('channelState' in a.extra)) return null;
      return { kind: 'settled', answer: a as BatchSettleAnswer };
    });
  }

  private async ask<R extends { kind: string }>(
    path: string,
    body: unknown,
    key: string,
    read: (json: unknown) => R | null,
  ): Promise<R | Exclude<VerifyReply, { kind: 'verdict' }>> {
    const headers = { 'content-type': 'application/json', 'idempotency-key': key, ...authorization(this.sellerToken) };
    const text = JSON.stringify(body);
    let last = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      let res: JsonReply;
      try {
        res = await this.post(`${this.baseUrl}${path}`, headers, text, this.timeoutMs);
      } catch (err) {
        last = (err as Error).message;
        continue;
      }
      if (res.status >= 200 && res.status < 300) {
        const answer = read(res.json);
        if (answer) return answer;
        return {
          kind: 'unreachable',
          message: `the facilitator answered ${path} with an unexpected body`,
          idempotencyKey: key,
        };
      }
      return {
        kind: 'error',
        status: res.status,
        body: isErrorBody(res.json) ? res.json : null,
        retryAfter: res.header('retry-after'),
      };
    }
    return {
      kind: 'unreachable',
      message: `the facilitator at ${this.baseUrl} is unreachable: ${last}`,
      idempotencyKey: key,
    };
  }

  /**
   * POST /verify/unserved: this meter got no answer to its /verify (or batch-settlement /settle)
   * under `key` and serves nothing,
   * so a payment the facilitator accepted under it stays good for its request — the buyer's retry
   * of the same payment is accepted as that payment, not refused (and paid again). Waits for the
   * first try (so the buyer's retry finds it done), then keeps trying in the background.
   */
  async unserved(key: string): Promise<void> {
    if (await this.sendUnserved(key)) return;
    void (async () => {
      for (const ms of UNSERVED_RETRY_MS) {
        await new Promise((resolve) => setTimeout(resolve, ms).unref());
        if (await this.sendUnserved(key)) return;
      }
    })();
  }

  private async sendUnserved(key: string): Promise<boolean> {
    try {
      const res = await this.post(
        `${this.baseUrl}/verify/unserved`,
        { 'content-type': 'application/json', ...authorization(this.sellerToken) },
        JSON.stringify({ idempotencyKey: key }),
        this.timeoutMs,
      );
      return res.status >= 200 && res.status < 300;
    } catch {
      return false;
    }
  }

  /** POST /receipts/:id/attest — the hash of the response served for a receipt (best effort). */
  async attest(receiptId: string, token: string, responseHash: string): Promise<boolean> {
    try {
      const res = await this.post(
        `${this.baseUrl}/receipts/${receiptId}/attest`,
        { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        JSON.stringify({ responseHash }),
        this.timeoutMs,
      );
      return res.status >= 200 && res.status < 300;
    } catch {
      return false;
    }
  }

  /** POST /channels/:id/voucher — a bare voucher, outside any request (streams). */
  async postVoucher(channelId: string, voucher: StreamVoucher): Promise<unknown> {
    const res = await this.fetchImpl(`${this.baseUrl}/channels/${encodeURIComponent(channelId)}/voucher`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(voucher),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const json: unknown = await res.json().catch(() => null);
    if (!res.ok) {
      const message = isErrorBody(json) ? `${json.error}: ${json.message}` : `HTTP ${res.status}`;
      throw new Error(`the facilitator refused the voucher (${message})`);
    }
    return json;
  }
}

/**
 * A fresh Idempotency-Key: the time in ms (12 hex digits), then 32 random hex digits (from
 * randomUUID where there is one: 122 random bits; Node draws it from a cached pool of entropy,
 * where randomBytes(16) goes to OpenSSL every call). Time first, so the facilitator's index of
 * keys grows at its end instead of taking a write in a random page for every paid request.
 */
export function idempotencyKey(now = Date.now()): string {
  const crypto = globalThis.crypto as Crypto | undefined;
  const random =
    typeof crypto?.randomUUID === 'function' ? crypto.randomUUID().replaceAll('-', '') : toHex(randomBytes(16));
  return now.toString(16).padStart(12, '0') + random;
}

function authorization(token: string | null): Record<string, string> {
  return token === null ? {} : { authorization: `Bearer ${token}` };
}

function isErrorBody(value: unknown): value is ErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ErrorBody).error === 'string' &&
    typeof (value as ErrorBody).message === 'string'
  );
}

/** Reads an answer against its wire schema (a safeParse of @svc/core's). */
type Reader<T> = (json: unknown) => { success: true; data: T } | { success: false };

export class FacilitatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: string | null = null,
  ) {
    super(message);
    this.name = 'FacilitatorError';
  }
}

/** The stream-session calls (POST /streams, POST /streams/:id/wait, DELETE /streams/:id). */
export class StreamCalls {
  constructor(
    private readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch,
    private readonly timeoutMs: number,
    private readonly sellerToken: string | null = null,
  ) {}

  open(body: StreamOpen): Promise<StreamOpened> {
    return this.call('POST', '/streams', body, this.timeoutMs, (json) => safeParse(StreamOpenedSchema, json));
  }

  wait(streamId: string, timeoutMs: number, signal?: AbortSignal): Promise<StreamWaitResult> {
    // The long poll itself lasts up to timeoutMs: allow for it and a little more.
    const read = (json: unknown) => safeParse(StreamWaitResultSchema, json);
    return this.call('POST', `/streams/${streamId}/wait`, { timeoutMs }, timeoutMs + this.timeoutMs, read, signal);
  }

  end(streamId: string, reason: string, units: number): Promise<StreamEnded> {
    const read = (json: unknown) => safeParse(StreamEndedSchema, json);
    return this.call('DELETE', `/streams/${streamId}`, { reason, units }, this.timeoutMs, read);
  }

  private async call<T>(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
    read: Reader<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const res = await this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...authorization(this.sellerToken) },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const json: unknown = await res.json().catch(() => null);
    if (!res.ok) {
      const err = json as { error?: string; message?: string } | null;
      throw new FacilitatorError(
        res.status,
        err?.error ?? 'FACILITATOR_UNAVAILABLE',
        err?.message ?? `HTTP ${res.status}`,
        res.headers.get('retry-after'),
      );
    }
    const answer = read(json);
    if (!answer.success)
      throw new FacilitatorError(
        res.status,
        'FACILITATOR_UNAVAILABLE',
        `the facilitator answered ${method} ${path} with an unexpected body`,
      );
    return answer.data;
  }
}
