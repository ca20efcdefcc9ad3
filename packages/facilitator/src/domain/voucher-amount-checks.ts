// The checks of a `channel` voucher's amount against its channel, in the order of
// docs/protocol.md#errors: not increasing → underpaid → exhausted. The checks before them are
// every payment's (payment-checks.ts). A `channel` voucher charges its whole amount: underpaid is
// measured from what was charged on the channel, which is the last accepted voucher unless
// batch-settlement payments charged less than their ceilings.
import { owedPerPayment } from '@svc/core';
import type { PaymentRequirements } from '@svc/core';
import type { CachedChannel } from './channel-book.js';
import { fail, pass } from './payment-checks.js';
import type { Step } from './payment-checks.js';

export function checkIncreasing(channel: CachedChannel, cumulative: bigint): Step {
  const last = channel.record.lastAccepted;
  if (cumulative > last) return pass;
  return fail(
    'VOUCHER_NOT_INCREASING',
    `The voucher's cumulative ${cumulative} is not above the last accepted ${last}.`,
  );
}

export function checkAmounts(channel: CachedChannel, cumulative: bigint, requirements: PaymentRequirements): Step {
  const { record } = channel;
  const increasing = checkIncreasing(channel, cumulative);
  if (!increasing.ok) return increasing;
  // What the voucher adds to what was charged so far (the last accepted voucher, unless
  // `batch-settlement` payments charged less than their ceilings).
  const owed = owedPerPayment(requirements);
  const delta = cumulative - record.charged;
  if (delta < owed) return fail('VOUCHER_UNDERPAID', `The voucher adds ${delta}, but ${owed} is owed.`);
  if (cumulative > record.deposit) {
    return fail('CHANNEL_EXHAUSTED', `The voucher's cumulative ${cumulative} exceeds the deposit ${record.deposit}.`);
  }
  return pass;
}
