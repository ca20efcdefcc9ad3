// Whole-number query parameters, read one way on every route: plain decimal digits in range, as a
// string the handler turns into a number. z.coerce.number() would take 0x10, 1e3, " 1" and 2.0, and
// call a repeated parameter (an array) NaN.
import { z } from 'zod';

/** `name` from `min` to `max`, `fallback` when absent; its value is the digits (Number() them). */
export function zQueryInt(name: string, min: number, max: number, fallback: number) {
  const message = `${name} must be a whole number from ${min} to ${max}`;
  const digits = new RegExp(`^[0-9]{1,${String(max).length}}$`);
  return z
    .string({ error: message })
    .refine((v) => digits.test(v) && Number(v) >= min && Number(v) <= max, message)
    .default(String(fallback));
}
