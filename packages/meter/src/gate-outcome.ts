// What the gate answers (gate.ts), in the words every binding and the batch hold share: the
// outcome of a request, and what a held payment settles to. Types only, apart from the headers a
// browser may read: gate.ts makes the outcomes, hold.ts and the bindings (node.ts, fastify.ts,
// hono.ts) read them, and none of them needs the others for that.
import type { ChannelState, ErrorBody, PaymentRequired, PaymentResponse, VoucherState } from '@svc/core';
import type { BatchSettlementPayment } from './payment.js';

/** Headers a browser must be allowed to read on a metered API (spec rule 6). */
export const EXPOSED_HEADERS = 'PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Retry-After';

export interface GateRequest {
  method: string;
  /** The public URL of the request: origin + path + query. */
  url: string;
  header(name: string): string | undefined;
  /** The raw body when the framework has it (Buffer, Uint8Array or string), for requestHash. */
  rawBody?: Uint8Array | string | null;
}

export type GateOutcome =
  | {
      kind: 'paid';
      payment: PaymentResponse;
      headers: Record<string, string>;
      /** For per-request resources: attests the sha256 (hex) of the response body served. */
      attest: ((responseHash: string) => Promise<boolean>) | null;
    }
  /** A `batch-settlement` payment, verified and its channel reserved: run the handler, then `hold.finish()`. */
  | { kind: 'held'; hold: Hold }
  | { kind: 'respond'; status: number; headers: Record<string, string>; body: PaymentRequired | ErrorBody };

/** After the handler: the paid answer's headers, or the answer to send instead of the held one. */
export type GateSettled =
  | {
      kind: 'settled';
      /** The receipt of the charge; null for a charge of nothing (a failed answer). */
      receipt: PaymentResponse | null;
      headers: Record<string, string>;
      attest: ((responseHash: string) => Promise<boolean>) | null;
    }
  | Extract<GateOutcome, { kind: 'respond' }>;

/** A verified batch-settlement payment while its handler runs. */
export interface Hold {
  payment: BatchSettlementPayment;
  /** Headers for the answer whatever it turns out to be (CORS exposure). */
  headers: Record<string, string>;
  /**
   * Settles what the handler charged (nothing when `failed`) and answers the headers of the paid
   * answer, or the answer to send instead of the held one. Once only; later calls answer the first.
   */
  finish(failed: boolean): Promise<GateSettled>;
}

export type Correction = { channelState: ChannelState; voucherState?: VoucherState };
export type TermsOf = (
  error: string,
  source: 'gateway' | 'facilitator',
  message: string,
  correction?: Correction,
) => GateOutcome;
