// The facilitator's HTTP API, on the page's own origin. The shapes of its answers are @svc/core's
// (facilitator-wire.ts and its siblings), the very schemas the facilitator's routes answer with;
// the views import them type-only, so no schema code (nor zod) is bundled into the page.
import { connection } from './connection.js';

/** The facilitator answered, with an error body (docs/protocol.md#errors). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The facilitator did not answer at all. */
export class Unreachable extends Error {}

async function request<T>(path: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { cache: 'no-store', ...init });
  } catch {
    connection.down();
    throw new Unreachable(`The facilitator did not answer ${path}.`);
  }
  connection.up();
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const err = (body ?? {}) as { error?: unknown; message?: unknown };
    throw new ApiError(
      res.status,
      typeof err.error === 'string' ? err.error : 'HTTP_' + String(res.status),
      typeof err.message === 'string' ? err.message : `HTTP ${res.status}`,
    );
  }
  return body as T;
}

export function get<T>(path: string): Promise<T> {
  return request<T>(path);
}

export function post<T>(path: string): Promise<T> {
  return request<T>(path, { method: 'POST' });
}
