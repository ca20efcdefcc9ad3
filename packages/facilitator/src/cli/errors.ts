// What the command line says when a request could not even be sent: which host and port, and why
// — Node's fetch says only `fetch failed` and keeps the reason in `cause`; and what it says to a
// command line it does not take.
import { parseArgs } from 'node:util';

/** A command line a command does not take: `svc` says so without a stack trace and exits 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/**
 * `args` read strictly (node:util's parseArgs) against `options`: an unknown flag, a flag without
 * its value, or more than `maxPositionals` other words is a UsageError that names it, then `usage`.
 */
export function readArgs(
  args: string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
  maxPositionals: number,
  usage: string,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs' first sentence names the word ("Unknown option '--x'"); the rest is about `--`.
    throw new UsageError(`${String((err as Error).message).split('. ')[0]}\n${usage}`);
  }
  const extra = parsed.positionals[maxPositionals];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}\n${usage}`);
  return parsed as { values: Record<string, string | boolean | undefined>; positionals: string[] };
}

const WHY: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused (is the server running, on that port?)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
};

interface NetCause {
  code?: string;
  address?: string;
  port?: number;
  hostname?: string;
  errors?: NetCause[];
}

/** `err` as the user should read it: a connection failure names host:port (falling back to `url`'s) and the reason. */
export function explainFetchError(err: unknown, url: string): Error {
  if (!(err instanceof TypeError) || err.message !== 'fetch failed')
    return err instanceof Error ? err : new Error(String(err));
  let cause = (err as { cause?: NetCause }).cause;
  // `localhost` tries several addresses: the first one's reason stands for all.
  if (cause?.errors?.[0]) cause = { ...cause.errors[0], code: cause.code ?? cause.errors[0].code };
  const target = new URL(url);
  const where =
    cause?.address && cause.port
      ? `${cause.address}:${cause.port}`
      : `${target.hostname}:${target.port || (target.protocol === 'https:' ? 443 : 80)}`;
  const message = (cause as { message?: unknown } | undefined)?.message;
  const why = cause?.code
    ? (WHY[cause.code] ?? cause.code)
    : message === 'bad port'
      ? 'fetch refuses this port (the Fetch standard blocks it): use another'
      : typeof message === 'string' && message
        ? message
        : 'the request failed';
  return new Error(`could not connect to ${where}: ${why}`);
}
