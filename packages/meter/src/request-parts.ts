// The parts of a request the gate reads (gate.ts GateRequest), taken the same way by every binding:
// one header reader, one public URL, one choice of body bytes. Framework-neutral and free of Node
// modules, since the Hono binding uses it where there are none.

/** A request's headers as node:http, Express and Fastify give them, or as a web `Headers`. */
export type HeaderSource = Headers | Readonly<Record<string, string | string[] | undefined>>;

/** Reads one header by name (any case); a header sent twice counts by its first value. */
export function headerReader(headers: HeaderSource): (name: string) => string | undefined {
  if (isWebHeaders(headers)) return (name) => headers.get(name) ?? undefined;
  return (name) => {
    const value = headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
}

/**
 * The URL the receipt names: the seller's configured public origin when there is one (behind a
 * proxy the request's own origin is the proxy's view), else the origin the request arrived at.
 */
export function publicRequestUrl(publicUrl: string | undefined, origin: string, pathAndQuery: string): string {
  return `${publicUrl ?? origin}${pathAndQuery}`;
}

/** An origin from a protocol and a Host header, as node:http and Fastify report them. */
export function originOf(protocol: string, host: string | undefined): string {
  return `${protocol}://${host ?? 'localhost'}`;
}

let warnedParsedBody = false;

/**
 * The body bytes for the receipt's requestHash: the first candidate that is bytes or text. A parsed
 * body (an object) is not the bytes the buyer sent, so it counts as none, and the seller is told
 * once per process how to keep the bytes.
 */
export function bodyBytes(...candidates: unknown[]): Uint8Array | string | null {
  for (const c of candidates) if (typeof c === 'string' || c instanceof Uint8Array) return c;
  if (!warnedParsedBody && candidates.some(isParsedBody)) {
    warnedParsedBody = true;
    console.warn(
      '@svc/meter: a request body arrived parsed, without its bytes, so the receipt’s requestHash covers no body. ' +
        'Keep the raw body as req.rawBody: express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }), ' +
        'or request.rawBody in Fastify (@svc/meter’s README).',
    );
  }
  return null;
}

/** A body a parser made of the bytes: an object with something in it (a GET's `{}` is no body). */
function isParsedBody(c: unknown): boolean {
  return typeof c === 'object' && c !== null && Object.keys(c).length > 0;
}

// Duck-typed: runtimes and polyfills bring their own Headers classes.
function isWebHeaders(headers: HeaderSource): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
}
