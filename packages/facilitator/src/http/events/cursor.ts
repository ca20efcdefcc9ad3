// Opaque page cursors: a position wrapped so clients pass it back rather than build it.
import { SvcError } from '@svc/core';

export function encodeCursor(position: number): string {
  return Buffer.from(JSON.stringify({ p: position })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { p?: unknown }).p;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  } catch {
    // fall through
  }
  throw new SvcError('BAD_REQUEST', 'cursor must be a nextCursor from a previous page.');
}
