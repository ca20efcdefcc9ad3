// How an error becomes an answer (http/errors.ts): a client's fault is a 4xx and no alarm; only the
// store's own faults are "the store is unavailable".
import { describe, expect, it } from 'vitest';
import { errorAnswer } from '../src/http/errors.js';

function logged() {
  const lines: string[] = [];
  return { lines, log: { error: (_obj: object, msg: string) => void lines.push(msg) } };
}

describe('errorAnswer', () => {
  it('answers a request whose client left mid-body 400, without logging a store fault', () => {
    // What Node's server raises when the client goes before its body has come (abortIncoming),
    // with the 400 the body reader adds: its ECONNRESET is the client's socket, not the database's.
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET', statusCode: 400 });
    const { lines, log } = logged();
    const answer = errorAnswer(aborted, log);
    expect(answer).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' }, retryAfter: null });
    expect(lines).toEqual([]);
  });

  it('answers a lost database connection 503 with Retry-After, and logs it', () => {
    const lost = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const { lines, log } = logged();
    expect(errorAnswer(lost, log)).toMatchObject({
      status: 503,
      body: { error: 'FACILITATOR_UNAVAILABLE' },
      retryAfter: '5',
    });
    expect(lines).toEqual(['the store is unavailable (answered 503)']);
  });
});
