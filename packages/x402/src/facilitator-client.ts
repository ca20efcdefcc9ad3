// The official HTTPFacilitatorClient parses /settle with a schema that drops unknown fields, so
// the svc receipt (channelId, cumulative, the signed `receipt`) never reaches the seller's
// PAYMENT-RESPONSE. This client is the same, except that /settle keeps the svc answer whole:
// buyers then get a receipt they can check offline (docs/protocol.md#receipts).
import { SettleResponseSchema, safeParse } from '@svc/core';
import { FacilitatorResponseError, HTTPFacilitatorClient } from '@x402/core/server';
import type { FacilitatorConfig } from '@x402/core/server';
import { FacilitatorTimeoutError, SettleError } from '@x402/core/types';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';

export class SvcFacilitatorClient extends HTTPFacilitatorClient {
  constructor(config: FacilitatorConfig & { url: string }) {
    super(config);
  }

  override async settle(
    paymentPayload: PaymentPayload,
    paymentRequirements: PaymentRequirements,
  ): Promise<SettleResponse> {
    const { headers: auth } = await this.createAuthHeaders('settle');
    const signal = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.url}/settle`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...auth },
        body: JSON.stringify({ x402Version: paymentPayload.x402Version, paymentPayload, paymentRequirements }),
        signal,
      });
      text = await res.text();
    } catch (err) {
      // Like the stock client: a timeout is a facilitator failure (the settle may still have happened).
      if (signal.aborted) throw new FacilitatorTimeoutError('settle', this.timeoutMs);
      throw err;
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new FacilitatorResponseError(`Facilitator settle returned invalid JSON (HTTP ${res.status})`);
    }
    if (!res.ok) {
      if (typeof data === 'object' && data !== null && 'success' in data)
        throw new SettleError(res.status, data as SettleResponse);
      throw new Error(`Facilitator settle failed (${res.status}): ${text.slice(0, 200)}`);
    }
    const parsed = safeParse(SettleResponseSchema, data);
    if (!parsed.success)
      throw new FacilitatorResponseError(`Facilitator settle returned invalid data: ${text.slice(0, 200)}`);
    return parsed.data as SettleResponse;
  }
}
