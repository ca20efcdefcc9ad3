// zod's safeParse, made total. zod 4 runs length checks on a value of the wrong type when it has a
// `length` property, so a JSON object like {"length":{},"toString":"x"} where a bounded string is
// expected makes the check compare an object with a number and throw. Untrusted input is parsed
// through this, so such a value is an ordinary validation failure, never an exception.
import { z } from 'zod';

export function safeParse<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  try {
    return schema.safeParse(value);
  } catch {
    return {
      success: false,
      error: new z.ZodError([{ code: 'custom', path: [], message: 'the value has an invalid shape', input: value }]),
    } as z.ZodSafeParseResult<z.output<S>>;
  }
}
