// The "#transport" of Node (import condition `node`): the meter's per-request calls to the
// facilitator over node:http(s) with keep-alive sockets, one pool per svc() client (transport.ts).
// The facilitator tells how long it keeps an idle connection (Keep-Alive: timeout=…) and the agent
// drops a socket before then; a call that still meets a closed socket fails as a network error,
// which /verify retries once under the same Idempotency-Key.
import http from 'node:http';
import https from 'node:https';
import type { JsonReply, PostJson } from './transport.js';

export const transport = 'node:http';

export function nativePost(): PostJson {
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  return (url, headers, body, timeoutMs) =>
    new Promise<JsonReply>((resolve, reject) => {
      const secure = url.startsWith('https:');
      const options = {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      };
      const req = (secure ? https : http).request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', fail);
        res.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            json: parseJson(Buffer.concat(chunks).toString('utf8')),
            header: (name) => {
              const value = res.headers[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
            },
          });
        });
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      function fail(err: Error): void {
        clearTimeout(timer);
        reject(err);
      }
      req.on('error', fail);
      req.end(body);
    });
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
