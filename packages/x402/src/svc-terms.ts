// svc's own buyers (@svc/sdk payFetch) read the 402 with the svc schema, which also wants
// `source`, `message` and a `bazaar` declaration (docs/protocol.md#the-402-answer). The official resource server
// builds the 402 object and hands it to the scheme's enrichPaymentRequiredResponse hook; these
// fields are added to it there. x402 clients ignore unknown fields and echo `extensions` as given.
import { DEFAULT_MESSAGES, REASON_STATUS } from '@svc/core';
import type { ReasonCode } from '@svc/core';
import type { SchemePaymentRequiredContext } from '@x402/core/types';

type Decorated = { source?: string; message?: string; extensions?: Record<string, unknown> };

export function decorateForSvcBuyers(ctx: SchemePaymentRequiredContext): void {
  const res = ctx.paymentRequiredResponse as typeof ctx.paymentRequiredResponse & Decorated;
  const code = isReasonCode(res.error) ? res.error : null;
  res.source = code !== null && code !== 'PAYMENT_REQUIRED' ? 'facilitator' : 'gateway';
  res.message =
    code !== null
      ? DEFAULT_MESSAGES[code]
      : res.error === undefined || /^payment required$/i.test(res.error)
        ? DEFAULT_MESSAGES.PAYMENT_REQUIRED
        : res.error;
  if (res.extensions?.['bazaar'] === undefined) {
    res.extensions = {
      ...res.extensions,
      bazaar: {
        info: {
          input: { type: 'http', method: methodOf(ctx.transportContext) },
          output: { type: 'json', mimeType: 'application/json' },
        },
        schema: {},
      },
    };
  }
}

function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(REASON_STATUS, value);
}

function methodOf(transportContext: unknown): string {
  const method = (transportContext as { request?: { method?: unknown } } | undefined)?.request?.method;
  return typeof method === 'string' && /^[A-Za-z]{1,16}$/.test(method) ? method.toUpperCase() : 'GET';
}
