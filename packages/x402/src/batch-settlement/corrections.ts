// The corrective 402 on an @x402/core resource server. The facilitator refuses a voucher whose
// ceiling does not match what was charged on the channel, answering the channel's state and its
// highest voucher (`extra` of the refused /verify); the resource server then builds its 402 in a
// separate step, with the same payment payload object. The state is remembered per payload object
// in between and added to that 402's batch-settlement option, as new `extra` keys only: core
// refuses (throws) any other change an enrichment makes.
import { BATCH_SCHEME, CorrectionSchema, safeParse } from '@svc/core';
import type { ChannelState, VoucherState } from '@svc/core';
import type { SchemePaymentRequiredContext } from '@x402/core/types';

type Correction = { channelState: ChannelState; voucherState?: VoucherState };

export class Corrections {
  private readonly byPayload = new WeakMap<object, Correction>();

  /** Keeps the channel's state from a refused verify's `extra`, if it carries one. */
  remember(paymentPayload: object, extra: unknown): void {
    const parsed = safeParse(CorrectionSchema, extra);
    if (parsed.success) this.byPayload.set(paymentPayload, parsed.data);
  }

  /** Adds the state remembered for this 402's payment to its batch-settlement option. Never throws. */
  apply(ctx: SchemePaymentRequiredContext): void {
    const correction = ctx.paymentPayload ? this.byPayload.get(ctx.paymentPayload) : undefined;
    if (!correction || !ctx.paymentPayload) return;
    const network = ctx.paymentPayload.accepted.network;
    const options = ctx.paymentRequiredResponse.accepts.filter((a) => a.scheme === BATCH_SCHEME);
    // Core runs this hook once per batch-settlement option and lets each run add keys only to
    // options of its own network, without saying which run this is: with options on several
    // networks, adding to one could be another run's breach, so none gets the state.
    if (options.some((a) => a.network !== network)) return;
    for (const option of options) {
      if (option.extra['channelState'] === undefined) option.extra['channelState'] = correction.channelState;
      if (correction.voucherState && option.extra['voucherState'] === undefined)
        option.extra['voucherState'] = correction.voucherState;
    }
  }
}
