// localFetch: the demo seller's meter reaches its own facilitator in process. It must behave as a
// fetch would over HTTP: method, headers and body in; status, headers and body out.
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { INTERNAL_HEADER } from '../src/http/limits/ip.js';
import { localFetch } from '../src/http/in-process/get.js';

describe('localFetch', () => {
  const app = Fastify();
  app.post('/echo', (request, reply) => {
    void reply.header('x-seen-auth', request.headers.authorization ?? '');
    void reply.header('x-internal', request.headers[INTERNAL_HEADER] ?? '');
    return { body: request.body, key: request.headers['idempotency-key'] };
  });
  app.get('/nothing', (_request, reply) => reply.code(204).send());
  app.get('/limited', (_request, reply) => reply.code(429).header('retry-after', '7').send({ error: 'RATE_LIMITED' }));
  afterAll(() => app.close());
  const fetchLocal = localFetch(app, 'internal-token-123');

  it('sends method, headers and a JSON body, and returns status, headers and body', async () => {
    const res = await fetchLocal('http://127.0.0.1:1/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1', authorization: 'Bearer t' },
      body: JSON.stringify({ a: '1' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-seen-auth')).toBe('Bearer t');
    // Marked as the facilitator's own call, so per-IP limits do not count it twice.
    expect(res.headers.get('x-internal')).toBe('internal-token-123');
    expect(await res.json()).toEqual({ body: { a: '1' }, key: 'k1' });
  });

  it('answers 204 without a body and keeps Retry-After of a 429', async () => {
    const empty = await fetchLocal(new URL('http://127.0.0.1:1/nothing'));
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');
    const limited = await fetchLocal('http://127.0.0.1:1/limited');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toEqual({ error: 'RATE_LIMITED' });
  });
});
