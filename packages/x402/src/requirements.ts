// The terms a buyer chose, read as svc `channel` requirements. x402 v1 calls the amount
// `maxAmountRequired`; terms without `unit` are per request (what an x402 price means).
import { PaymentRequirementsSchema, safeParse } from '@svc/core';
import type { PaymentRequirements } from '@svc/core';

export class TermsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TermsError';
  }
}

export function channelTerms(x402Version: number, raw: unknown): PaymentRequirements {
  if (typeof raw !== 'object' || raw === null) throw new TermsError('the payment requirements are not an object');
  const fields = raw as Record<string, unknown>;
  const candidate = {
    ...fields,
    amount: fields['amount'] ?? (x402Version === 1 ? fields['maxAmountRequired'] : undefined),
    unit: fields['unit'] ?? 'request',
  };
  const parsed = safeParse(PaymentRequirementsSchema, candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'requirements';
    throw new TermsError(`these are not svc channel terms: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
