// What a paid request carries (req.payment on node:http and Express, request.payment on Fastify,
// c.var.payment on Hono): who paid, the price in the terms, and charge(amount) — the seller charges
// what the request used, after its handler ran, up to the price. The bindings settle that charge
// once the handler's answer is complete (hold-node.ts, hold-web.ts).
import type { ChannelState, PaymentResponse } from '@svc/core';

/** The seller's side of a charge: the price is the most a request can cost. */
export interface Charging {
  /** The price in the terms (base units): what the request is charged unless charge() says less. */
  readonly price: bigint;
  /**
   * Charges `amount` base units (0 ≤ amount ≤ price) for this request instead of the price; the
   * last call before the answer is complete counts. A `channel` voucher is exact: its request is
   * charged the price whatever is called here.
   */
  charge(amount: bigint): void;
}

/** A `channel` payment: the receipt (PAYMENT-RESPONSE), taken before the handler ran. */
export type ChannelPayment = PaymentResponse & { scheme: 'channel' } & Charging;

/** A `batch-settlement` payment: verified, its channel reserved; charged once the answer is complete. */
export interface BatchSettlementPayment extends Charging {
  scheme: 'batch-settlement';
  payer: string;
  channelId: string;
  /** The voucher's ceiling: what was charged on the channel before this request plus the price. */
  ceiling: string;
  /** The channel before this request's charge. */
  channelState: ChannelState;
  /** Charged after the handler (a stream's first slice is a PrepaidSlicePayment). */
  prepaid?: undefined;
}

/**
 * A `batch-settlement` stream's first slice (per token, per second): charged its price before the
 * handler, as the session that follows pays slice by slice (hold.ts), so it carries its receipt as a
 * `channel` payment does; charge() is checked and changes nothing.
 */
export type PrepaidSlicePayment = PaymentResponse & { scheme: 'batch-settlement'; prepaid: true } & Charging;

export type Payment = ChannelPayment | BatchSettlementPayment | PrepaidSlicePayment;

/** The most of an answer the meter holds before it settles: a longer answer is settled as it passes this. */
export const MAX_HELD_BYTES = 8 * 1024 * 1024;

/** The charge a handler asked for, and whether it may still ask. */
export class ChargeBook {
  private amount: bigint | null = null;
  private closed = false;

  constructor(readonly price: bigint) {}

  charge(amount: bigint): void {
    if (typeof amount !== 'bigint')
      throw new TypeError(
        `payment.charge() takes base units as a bigint (e.g. charge(1200n)), not a ${typeof amount}: money is never a float.`,
      );
    if (amount < 0n) throw new TypeError(`payment.charge(${amount}n): a charge is 0 or more base units.`);
    if (amount > this.price)
      throw new TypeError(
        `payment.charge(${amount}n) is above this request's price ${this.price}n: the price in the terms is the most a request can cost; charge at most ${this.price}n, or raise the price.`,
      );
    if (this.closed)
      throw new TypeError(
        'payment.charge() was called after the answer was settled: call it before the answer is complete (before res.end(), or before the handler returns).',
      );
    this.amount = amount;
  }

  /** What to settle: nothing for a failed answer (a throw, or a 5xx), else the charge asked for or the price. */
  close(failed: boolean): bigint {
    this.closed = true;
    if (failed) return 0n;
    return this.amount ?? this.price;
  }
}

/** A payment object for a `channel` receipt: charge() is checked like any other, and the price is charged. */
export function channelPayment(receipt: PaymentResponse): ChannelPayment | PrepaidSlicePayment {
  // What this voucher paid (a request's price, or a slice's) is the receipt's delta.
  const book = new ChargeBook(BigInt(receipt.delta));
  // A receipt taken before the handler under batch-settlement is a stream's first slice.
  if (receipt.scheme === 'batch-settlement')
    return withCharging({ ...receipt, scheme: 'batch-settlement' as const, prepaid: true as const }, book);
  return withCharging({ ...receipt, scheme: 'channel' as const }, book);
}

/**
 * Adds `price` and `charge` to a payment, not enumerable: the payment still serializes as before
 * (res.json(req.payment) shows the receipt; a bigint would make JSON.stringify throw).
 */
export function withCharging<T extends object>(payment: T, book: ChargeBook): T & Charging {
  return Object.defineProperties(payment, {
    price: { value: book.price, enumerable: false },
    charge: { value: (amount: bigint) => book.charge(amount), enumerable: false },
  }) as T & Charging;
}

/** An answer whose status says the handler failed: it is charged nothing. */
export function failedStatus(status: number): boolean {
  return status >= 500;
}
