// The one reader of a facilitator's GET /supported (the schemes, networks, asset, contracts and
// receipt signers it handles), for the meter, the sdk and the x402 bridge. It only reads and
// parses: how long an answer is kept, and what a failure is called to the caller's user, stay
// with the caller.
import { globalFetch } from './fetch.js';
import { safeParse } from './safe-parse.js';
import { SupportedResponseSchema } from './api.js';
import type { SupportedResponse } from './api.js';

/** GET /supported gave no facilitator's answer: `status` is null when nothing answered at all. */
export class SupportedUnreadable extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SupportedUnreadable';
  }
}

export interface ReadSupportedOptions {
  fetch?: typeof fetch;
  /** Abort after this long (no limit when unset). */
  timeoutMs?: number;
}

/** GET `<facilitator>/supported`, parsed with the svc schema; `facilitator` is the base URL. */
export async function readSupported(
  facilitator: string,
  options: ReadSupportedOptions = {},
): Promise<SupportedResponse> {
  const url = `${facilitator.replace(/\/+$/, '')}/supported`;
  const doFetch = options.fetch ?? globalFetch;
  let res: Response;
  try {
    res = await doFetch(url, options.timeoutMs !== undefined ? { signal: AbortSignal.timeout(options.timeoutMs) } : {});
  } catch (err) {
    throw new SupportedUnreadable(`GET ${url} got no answer: ${(err as Error).message}`, null, { cause: err });
  }
  const parsed = safeParse(SupportedResponseSchema, res.ok ? await res.json().catch(() => null) : null);
  if (!parsed.success)
    throw new SupportedUnreadable(
      `GET ${url} answered HTTP ${res.status}${res.ok ? ', not the x402 /supported answer' : ''}`,
      res.status,
    );
  return parsed.data;
}
